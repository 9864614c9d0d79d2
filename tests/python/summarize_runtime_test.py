#!/usr/bin/env python3
"""bench/runtime/summarize_runtime.py on a hand-made run: the best-of-layouts line with its count
below 0.97, each layout against auto-tuning of the same layout (--per-layout), a run narrowed to
the shapes of a file (--shapes), a run committed as .csv.xz, and the same-configuration control
(pairs where the runtime ran auto-tuning's own configuration), the shapes whose paired interval
lies below 0.97, and another slot of the run pair by pair (--against). Standard library only.

    python3 tests/python/summarize_runtime_test.py [-v]
"""
import csv
import gzip
import io
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "runtime", "summarize_runtime.py")
HEADER = "m,n,k,class,method,layout,mode,timer,median_us,status,failure,details\n"
A, B = (64, 2048, 4096), (512, 512, 16384)


def rows(shape, times, cls="skinny"):
    """One shape's rows under the graph timer: times = {method: us}."""
    return "".join(f"{shape[0]},{shape[1]},{shape[2]},{cls},{m},{m[-2:]},offline,graph,{us},ok,,\n"
                   for m, us in times.items())


class SummarizeRuntime(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # A: NN behind NN auto-tuning by 10%, yet level on the best of layouts (TN carries it);
        # B: both layouts ahead.
        run = rows(A, {"runtime-nn": 11.0, "runtime-tn": 10.0, "cublaslt-autotune-nn": 10.0,
                       "cublaslt-autotune-tn": 10.0}) + \
            rows(B, {"runtime-nn": 9.0, "runtime-tn": 9.5, "cublaslt-autotune-nn": 10.0,
                     "cublaslt-autotune-tn": 10.0}, "medium")
        self.csv = os.path.join(self.tmp.name, "run.csv.gz")
        with gzip.open(self.csv, "wt") as f:
            f.write("# cudal2 bench test\n" + HEADER + run)

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self, *args):
        r = subprocess.run([sys.executable, SCRIPT, self.csv, *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_best_of_layouts_hides_a_layout_behind(self):
        out = self.summary()
        self.assertIn("shapes    2", out)
        self.assertIn("below 0.97: 0", out)
        self.assertNotIn("runtime-nn vs auto-tuning nn", out)

    def test_per_layout_shows_it(self):
        out = self.summary("--per-layout")
        nn = next(x for x in out.splitlines() if "runtime-nn vs auto-tuning nn" in x)
        self.assertIn("below 0.97: 1", nn)
        self.assertIn("64x2048x4096 0.909", nn)
        gm = float(re.search(r"all (\d\.\d+)", nn).group(1))
        self.assertAlmostEqual(gm, ((10 / 11) * (10 / 9)) ** 0.5, places=4)
        tn = next(x for x in out.splitlines() if "runtime-tn vs auto-tuning tn" in x)
        self.assertIn("below 0.97: 0", tn)

    def test_an_xz_run_reads_as_the_gzipped_one(self):
        # the committed whole-grid runs are .csv.xz (python/cudal2/analysis.py `load`)
        xz = os.path.join(self.tmp.name, "run.csv.xz")
        with gzip.open(self.csv, "rb") as src, lzma.open(xz, "wb") as dst:
            dst.write(src.read())
        r = subprocess.run([sys.executable, SCRIPT, xz, "--per-layout"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, self.summary("--per-layout"))

    def test_control_counts_only_pairs_running_autotunings_configuration(self):
        # Shape C: TN runs auto-tuning's own configuration 5% slower (noise: counted); NN runs
        # another configuration 10% slower (selection: not the control's business).
        same = "cublaslt tn f32 algo=66 tile=12 stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=2x1 | splits=1"
        other = "cublaslt nn f32 algo=66 tile=15 stages=35 reduction=0 swizzle=0 custom=3 inner=0 cluster=1x1 | splits=1"
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for method, us, details in (("runtime-tn", 10.5, {"spec": same}), ("cublaslt-autotune-tn", 10.0, {"config": same}),
                                    ("runtime-nn", 11.0, {"spec": other}),
                                    ("cublaslt-autotune-nn", 10.0, {"config": other.replace("tile=15", "tile=13")})):
            w.writerow([2048, 64, 4096, "skinny", method, method[-2:], "offline", "graph", us, "ok", "",
                        json.dumps(details)])
        # Shape D: the table sent NN to cuBLASLt, whose plan the runtime tuned after its first call to
        # auto-tuning's own pick: what its timed calls ran is that pick (counted, 2% ahead).
        for method, us, details in (("runtime-nn", 9.8, {"spec": other, "spec_after_first_call": same}),
                                    ("cublaslt-autotune-nn", 10.0, {"config": same})):
            w.writerow([4096, 64, 4096, "skinny", method, method[-2:], "offline", "graph", us, "ok", "",
                        json.dumps(details)])
        with gzip.open(self.csv, "at") as f:
            f.write(buf.getvalue())
        control = next(x for x in self.summary().splitlines() if "control:" in x)
        self.assertIn("   2 (shape, layout) pairs", control)
        self.assertIn("below 0.97: 1", control)
        self.assertAlmostEqual(float(re.search(r"all (\d\.\d+)", control).group(1)),
                               ((10.0 / 10.5) * (10.0 / 9.8)) ** 0.5, places=4)

    def test_interval_counts_shapes_behind_by_more_than_the_rounds_spread(self):
        # A: measured 0.95 and its interval wholly below 0.97 (counted); B: measured 0.96 but the
        # interval reaches 1.01 (the rounds disagree: not counted).
        header = "m,n,k,class,method,layout,mode,timer,median_us,paired_ratio,paired_lo,paired_hi,status,details\n"
        body = ""
        for shape, ratio, lo, hi in ((A, 0.95, 0.93, 0.96), (B, 0.96, 0.90, 1.01)):
            for m, us in (("runtime-nn", 10 / ratio), ("runtime-tn", 11.0), ("cublaslt-autotune-nn", 10.0),
                          ("cublaslt-autotune-tn", 11.0)):
                pr = (ratio, lo, hi) if m == "runtime-nn" else (10 / 11,) * 3 if m.endswith("tn") else (1, 1, 1)
                body += (f"{shape[0]},{shape[1]},{shape[2]},skinny,{m},{m[-2:]},offline,graph,{us},"
                         f"{pr[0]},{pr[1]},{pr[2]},ok,\n")
        with gzip.open(self.csv, "wt") as f:
            f.write(header + body)
        line = next(x for x in self.summary().splitlines() if "paired vs reference" in x)
        self.assertIn("interval below 0.97: 1 of 2", line)
        self.assertIn("64x2048x4096 <0.960", line)
        self.assertNotIn("512x512x16384 <", line)

    def test_against_splits_the_pairs_by_whether_the_other_slot_tuned(self):
        # Shape E, both slots on cuBLASLt: NN, the other slot tuned its plan after the first call and
        # runs 8% slower; TN, it kept its plan and runs level.
        tuned = {"spec": "cublaslt nn f32 algo=66 tile=24", "spec_after_first_call": "cublaslt nn f32 algo=66 tile=20"}
        kept = {"spec": "cublaslt tn f32 algo=66 tile=24", "spec_after_first_call": "cublaslt tn f32 algo=66 tile=24"}
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for method, us, details in (("runtime-nn", 10.0, {"spec": tuned["spec"]}), ("runtime-c-nn", 10.8, tuned),
                                    ("cublaslt-autotune-nn", 10.4, {}), ("runtime-tn", 10.0, {"spec": kept["spec"]}),
                                    ("runtime-c-tn", 10.0, kept), ("cublaslt-autotune-tn", 10.0, {})):
            w.writerow([8192, 2048, 12288, "large", method, method[-2:], "offline", "graph", us, "ok", "",
                        json.dumps(details)])
        with gzip.open(self.csv, "wt") as f:
            f.write(HEADER + buf.getvalue())
        lines = self.summary("--against", "runtime-c").splitlines()
        moved = next(x for x in lines if "tuned to another" in x)
        self.assertIn("   1 pairs: runtime-c / runtime 1.0800", moved)
        self.assertIn("vs auto-tuning: runtime 1.0400 runtime-c 0.9630", moved)
        self.assertIn("below 0.97: runtime 0 runtime-c 1", moved)
        stayed = next(x for x in lines if "its plan kept" in x)
        self.assertIn("   1 pairs: runtime-c / runtime 1.0000", stayed)
        self.assertNotIn("against", self.summary())

    def test_shapes_narrow_the_run(self):
        listing = os.path.join(self.tmp.name, "shapes.txt")
        with open(listing, "w") as f:
            f.write("# M,N,K\n512,512,16384\n")
        out = self.summary("--shapes", listing, "--per-layout")
        self.assertIn("shapes    1", out)
        self.assertNotIn("64x2048x4096", out)


if __name__ == "__main__":
    unittest.main()
