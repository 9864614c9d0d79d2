#!/usr/bin/env python3
"""bench/runtime/confirm_candidates.py on hand-made runs: which shapes a confirmation lists when it
asks for shapes behind auto-tuning in several runs (--min-runs), under which timers (--timers),
for one runtime build of a run (PATH:BUILD), and the configurations auto-tuning picked in the runs
(--autotune-picks, from the bench's `config` detail; with --shapes too). Standard library only.

    python3 tests/python/confirm_candidates_test.py [-v]
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "runtime", "confirm_candidates.py")
HEADER = "m,n,k,method,mode,timer,median_us,status,details\n"
A, B, C = (64, 2048, 4096), (4096, 4096, 12288), (512, 512, 512)


def lt(layout, tile):
    return f"cublaslt {layout} f32 algo=66 tile={tile} stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=1x1 | splits=1"


def row(shape, method, us, timer="graph", config=None):
    details = json.dumps({"config": config}).replace('"', '""') if config else ""
    return f'{shape[0]},{shape[1]},{shape[2]},{method},offline,{timer},{us},ok,"{details}"\n'


def shape_rows(shape, runtime_us, autotune_us, timer="graph", build="runtime", picks=("", "")):
    return [row(shape, f"{build}-nn", runtime_us, timer), row(shape, f"{build}-tn", runtime_us + 1, timer),
            row(shape, "cublaslt-autotune-nn", autotune_us, timer, picks[0] or None),
            row(shape, "cublaslt-autotune-tn", autotune_us + 1, timer, picks[1] or None)]


class ConfirmCandidates(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.table = os.path.join(self.tmp.name, "table.json")
        entries = [{"accum": "f32", "layout": lay, "m": s[0], "n": s[1], "k": s[2], "spec": lt(lay, 1)}
                   for s in (A, B, C) for lay in ("nn", "tn")]
        with open(self.table, "w") as f:
            json.dump({"entries": entries}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, rows):
        path = os.path.join(self.tmp.name, name)
        with gzip.open(path, "wt") as f:
            f.write("# cudal2 bench test\n" + HEADER + "".join(rows))
        return path

    def listing(self, *args):
        r = subprocess.run([sys.executable, SCRIPT, "--table", self.table, *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [x.split(" ", 1) for x in r.stdout.splitlines() if x.strip()]
        return [(tuple(int(v) for v in s.split(",")), spec) for s, spec in lines]

    def runs(self):
        # A: behind in both runs (graph in run 1, chain only in run 2); B: behind in run 1 only;
        # C: ahead everywhere. Run 2's slot C (runtime-c) is behind on C, its slot A is not.
        r1 = self.write("r1.csv.gz", shape_rows(A, 10, 9, picks=(lt("nn", 13), lt("tn", 13))) +
                        shape_rows(A, 10, 10, "chain") + shape_rows(B, 10, 9) + shape_rows(B, 10, 10, "chain") +
                        shape_rows(C, 10, 11) + shape_rows(C, 10, 11, "chain"))
        r2 = self.write("r2.csv.gz", shape_rows(A, 10, 10, picks=(lt("nn", 13), lt("tn", 7))) +
                        shape_rows(A, 10, 9, "chain") + shape_rows(B, 10, 10) + shape_rows(B, 10, 10, "chain") +
                        shape_rows(C, 10, 11) + shape_rows(C, 10, 11, "chain") +
                        shape_rows(C, 20, 11, build="runtime-c") + shape_rows(C, 20, 11, "chain", build="runtime-c"))
        return r1, r2

    def shapes(self, listing):
        out = []
        for s, _ in listing:
            if s not in out:
                out.append(s)
        return out

    def test_one_run_is_enough_by_default(self):
        r1, r2 = self.runs()
        self.assertEqual(self.shapes(self.listing("--runtime-csv", r1, "--runtime-csv", r2, "--below", "0.98")), [C, A, B])

    def test_min_runs_keeps_the_shapes_behind_in_every_run(self):
        r1, r2 = self.runs()
        both = ["--runtime-csv", r1, "--runtime-csv", r2, "--below", "0.98", "--min-runs", "2"]
        self.assertEqual(self.shapes(self.listing(*both)), [], "A is behind in run 2 only under the chain timer")
        self.assertEqual(self.shapes(self.listing(*both, "--timers", "graph,chain")), [A])

    def test_a_runs_build_alone(self):
        r1, r2 = self.runs()
        self.assertEqual(self.shapes(self.listing("--runtime-csv", r2, "--below", "0.98", "--timers", "graph,chain")),
                         [C, A], "C: behind in run 2's slot C")
        self.assertEqual(self.shapes(self.listing("--runtime-csv", r2 + ":runtime", "--below", "0.98",
                                                  "--timers", "graph,chain")), [A], "slot C not read")

    def test_autotune_picks_follow_the_table_entry(self):
        r1, r2 = self.runs()
        got = self.listing("--runtime-csv", r1, "--runtime-csv", r2 + ":runtime", "--below", "0.98", "--min-runs", "2",
                           "--timers", "graph,chain", "--autotune-picks")
        self.assertEqual(got, [(A, lt("nn", 1)), (A, lt("nn", 13)), (A, lt("tn", 1)), (A, lt("tn", 13)), (A, lt("tn", 7))])
        plain = self.listing("--runtime-csv", r1, "--runtime-csv", r2 + ":runtime", "--below", "0.98", "--min-runs",
                             "2", "--timers", "graph,chain")
        self.assertEqual(plain, [(A, lt("nn", 1)), (A, lt("tn", 1))])

    def test_named_shapes_take_the_runs_picks(self):
        r1, r2 = self.runs()
        named = os.path.join(self.tmp.name, "shapes.txt")
        with open(named, "w") as f:
            f.write("# chosen by hand\n512x512x512\n64,2048,4096\n")
        got = self.listing("--shapes", named, "--runtime-csv", r1, "--runtime-csv", r2, "--autotune-picks")
        self.assertEqual(self.shapes(got), [C, A], "the file's shapes in its order, whatever the runs measured")
        self.assertIn((A, lt("tn", 7)), got, "auto-tuning's pick in run 2")
        r = subprocess.run([sys.executable, SCRIPT, "--table", self.table], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, "no shapes named")
        self.assertIn("--shapes", r.stderr)

    def test_bad_options_are_refused(self):
        r1, _ = self.runs()
        for bad in (["--min-runs", "0"], ["--timers", "eager"]):
            r = subprocess.run([sys.executable, SCRIPT, "--table", self.table, "--runtime-csv", r1, *bad],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, bad)


if __name__ == "__main__":
    unittest.main()
