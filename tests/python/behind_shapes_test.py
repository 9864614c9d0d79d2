#!/usr/bin/env python3
"""bench/runtime/behind_shapes.py on hand-made runs: which shapes it lists as behind auto-tuning (best
of layouts, per layout, by the paired interval), in how many runs under the same timer, in which
order, a run given as shards (the last shard wins a shape), and shapes with a compiled table entry
left out. Standard library only.

    python3 tests/python/behind_shapes_test.py [-v]
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "runtime", "behind_shapes.py")
HEADER = "m,n,k,method,mode,timer,median_us,status,paired_lo,paired_hi\n"
A, B, C = (64, 2048, 4096), (4096, 4096, 12288), (512, 512, 512)


def rows(shape, rt, at, timer="graph", mode="offline", hi=""):
    """Runtime NN/TN and auto-tuning NN/TN medians (rt, at: (nn, tn)); hi: the runtime rows' paired_hi
    (their paired_lo 0.5 where hi is given, as the bench writes both)."""
    m, n, k = shape
    iv = f"0.5,{hi}" if hi else ","
    return [f"{m},{n},{k},runtime-nn,{mode},{timer},{rt[0]},ok,{iv}\n",
            f"{m},{n},{k},runtime-tn,{mode},{timer},{rt[1]},ok,{iv}\n",
            f"{m},{n},{k},cublaslt-autotune-nn,{mode},{timer},{at[0]},ok,,\n",
            f"{m},{n},{k},cublaslt-autotune-tn,{mode},{timer},{at[1]},ok,,\n"]


class BehindShapes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, lines):
        path = os.path.join(self.tmp.name, name)
        with gzip.open(path, "wt") as f:
            f.write("# cudal2 bench test\n" + HEADER + "".join(lines))
        return path

    def listing(self, *args, ok=True):
        r = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
        if not ok:
            self.assertNotEqual(r.returncode, 0)
            return r.stderr
        self.assertEqual(r.returncode, 0, r.stderr)
        return [tuple(int(v) for v in x.split(",")) for x in r.stdout.split()]

    def test_best_of_layouts_furthest_behind_first(self):
        # A: 0.95 (its TN runtime beats auto-tuning's NN: best of layouts 10 / 10.5); B: 0.90 chained
        # only; C ahead under both timers.
        run = self.write("r.csv.gz", rows(A, (11, 10.5), (10, 12)) + rows(A, (10, 10), (10, 10), "chain")
                         + rows(B, (10, 10), (10, 10)) + rows(B, (10, 10), (9, 12), "chain")
                         + rows(C, (10, 11), (11, 11)) + rows(C, (10, 11), (11, 11), "chain"))
        self.assertEqual(self.listing("--run", run, "--below", "0.97"), [B, A])
        self.assertEqual(self.listing("--run", run, "--below", "0.97", "--timers", "graph"), [A])
        self.assertEqual(self.listing("--run", run, "--below", "0.94"), [B])

    def test_per_layout_reads_each_layout_against_its_own_auto_tuning(self):
        # A's TN runtime is behind auto-tuning TN though its best of layouts is level.
        run = self.write("r.csv.gz", rows(A, (10, 12), (10, 11)) + rows(C, (10, 10), (10, 10)))
        self.assertEqual(self.listing("--run", run, "--below", "0.97", "--timers", "graph"), [])
        self.assertEqual(self.listing("--run", run, "--below", "0.97", "--timers", "graph", "--per-layout"), [A])

    def test_min_runs_counts_the_same_layout_and_timer(self):
        # A: TN behind under graph in both runs. B: behind under graph in run 1, chain in run 2 only.
        one = self.write("one.csv.gz", rows(A, (10, 12), (10, 11)) + rows(A, (10, 10), (10, 10), "chain")
                         + rows(B, (12, 10), (10, 10)) + rows(B, (10, 10), (10, 10), "chain"))
        two = self.write("two.csv.gz", rows(A, (10, 12), (10, 11)) + rows(A, (10, 10), (10, 10), "chain")
                         + rows(B, (10, 10), (10, 10)) + rows(B, (12, 10), (10, 10), "chain"))
        args = ["--run", one, "--run", two, "--below", "0.97", "--per-layout"]
        self.assertEqual(self.listing(*args, "--min-runs", "2"), [A])
        self.assertEqual(sorted(self.listing(*args)), sorted([A, B]))
        self.assertIn("--min-runs is 1 to the number of runs (2)", self.listing(*args, "--min-runs", "3", ok=False))

    def test_interval_reads_the_faster_layouts_paired_hi(self):
        lines = rows(A, (10, 11), (10, 10), "graph", "server", hi="0.95") \
            + rows(B, (10, 11), (10, 10), "graph", "server", hi="0.999")
        run = self.write("s.csv.gz", lines)
        self.assertEqual(self.listing("--run", run, "--interval-below", "0.99"), [A])
        self.assertEqual(sorted(self.listing("--run", run, "--interval-below", "1.0")), sorted([A, B]))
        self.assertIn("not with --per-layout",
                      self.listing("--run", run, "--interval-below", "0.99", "--per-layout", ok=False))
        bare = self.write("bare.csv.gz", rows(A, (10, 11), (10, 10), "graph", "server"))
        self.assertIn("paired_hi", self.listing("--run", bare, "--interval-below", "0.99", ok=False))

    def test_a_run_in_shards_takes_the_last_shards_rows(self):
        first = self.write("a.csv.gz", rows(A, (12, 12), (10, 10)) + rows(C, (12, 12), (10, 10)))
        second = self.write("b.csv.gz", rows(A, (10, 10), (10, 10)))
        self.assertEqual(self.listing("--run", f"{first},{second}", "--below", "0.97", "--timers", "graph"), [C])
        shards = os.path.join(self.tmp.name, "[ab].csv.gz")  # a glob, sorted: a.csv.gz, then b.csv.gz
        self.assertEqual(self.listing("--run", shards, "--below", "0.97", "--timers", "graph"), [C])
        self.assertEqual(sorted(self.listing("--run", f"{second},{first}", "--below", "0.97", "--timers", "graph")),
                         sorted([A, C]))

    def test_compiled_entries_are_left_out(self):
        run = self.write("r.csv.gz", rows(A, (12, 12), (10, 10)) + rows(B, (12, 12), (10, 10)))
        table = os.path.join(self.tmp.name, "t.json")
        lt = "cublaslt nn f32 algo=66 tile=1 stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=1x1 | splits=1"
        entries = [{"m": A[0], "n": A[1], "k": A[2], "layout": "nn", "spec": lt},
                   {"m": A[0], "n": A[1], "k": A[2], "layout": "tn", "spec": "cublaslt"},
                   {"m": B[0], "n": B[1], "k": B[2], "layout": "nn", "spec": lt},
                   {"m": B[0], "n": B[1], "k": B[2], "layout": "tn", "spec": "wgmma tn f32 tile=128x128x64"}]
        with open(table, "w") as f:
            json.dump({"entries": entries}, f)
        self.assertEqual(sorted(self.listing("--run", run, "--below", "0.97")), sorted([A, B]))
        self.assertEqual(self.listing("--run", run, "--below", "0.97", "--skip-compiled", table), [A])


if __name__ == "__main__":
    unittest.main()
