#!/usr/bin/env python3
"""bench/runtime/compare_tuning.py on hand-made runs: which shape-layouts it counts (the first slot's
plan tuned, path `cublaslt`; the untuned call under --max-us), the ratios it takes (untuned time /
the slot's), the geometric mean over the runs of a shape-layout before the one over shape-layouts,
and the count below 0.97. Standard library only.

    python3 tests/python/compare_tuning_test.py [-v]
"""
import gzip
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "runtime", "compare_tuning.py")
sys.path.insert(0, os.path.join(REPO, "bench"))
_spec = importlib.util.spec_from_file_location("compare_tuning", SCRIPT)
CT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CT)

HEADER = "m,n,k,method,mode,timer,median_us,status,details\n"


def row(shape, method, us, path=None, timer="graph", status="ok"):
    details = json.dumps({"path": path}).replace('"', '""') if path else ""
    return f'{shape[0]},{shape[1]},{shape[2]},{method},offline,{timer},{us},{status},"{details}"\n'


class CompareTuning(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, rows):
        path = os.path.join(self.tmp.name, name)
        with gzip.open(path, "wt") as f:
            f.write("# cudal2 bench test\n" + HEADER + "".join(rows))
        return path

    def test_counts_tuned_layouts_and_averages_runs_first(self):
        a, b, big = (100, 200, 300), (100, 200, 400), (4000, 4000, 4000)
        run1 = self.write("r1.csv.gz", [
            # a NN: tuned; runtime 10, untuned 11, the library before 12, auto-tuning 10.5
            row(a, "runtime-nn", 10, "cublaslt"), row(a, "runtime-b-nn", 11, "cublaslt"),
            row(a, "runtime-c-nn", 12, "cublaslt"), row(a, "cublaslt-autotune-nn", 10.5),
            # a TN: a table kernel, not counted
            row(a, "runtime-tn", 5, "table"), row(a, "runtime-b-tn", 9, "table"), row(a, "runtime-c-tn", 9, "table"),
            # b NN: tuned, run 1
            row(b, "runtime-nn", 20, "cublaslt"), row(b, "runtime-b-nn", 20, "cublaslt"),
            row(b, "runtime-c-nn", 18, "cublaslt"),
            # big: the untuned call over 100 us, not counted
            row(big, "runtime-nn", 100, "cublaslt"), row(big, "runtime-b-nn", 500, "cublaslt"),
            row(big, "runtime-c-nn", 500, "cublaslt"),
            # the chain timer's rows are not the graph timer's
            row(a, "runtime-nn", 1, "cublaslt", timer="chain"), row(a, "runtime-b-nn", 11, "cublaslt", timer="chain"),
        ])
        run2 = self.write("r2.csv.gz", [  # b NN again: runtime 25 (ratio 0.8), the library before 20 (1.0)
            row(b, "runtime-nn", 25, "cublaslt"), row(b, "runtime-b-nn", 20, "cublaslt"),
            row(b, "runtime-c-nn", 20, "cublaslt"),
        ])
        s = CT.per_slot([run1, run2], "runtime-b")
        self.assertEqual(sorted(s), ["cublaslt-autotune", "runtime", "runtime-c"])
        self.assertEqual(len(s["runtime"]), 2)  # a NN and b NN
        self.assertAlmostEqual(sorted(s["runtime"])[1], 1.1)  # a NN: 11 / 10
        self.assertAlmostEqual(sorted(s["runtime"])[0], math.sqrt(1.0 * 0.8))  # b NN: the two runs' ratios
        self.assertAlmostEqual(sorted(s["runtime-c"])[0], 11 / 12)
        self.assertAlmostEqual(sorted(s["runtime-c"])[1], math.sqrt(20 / 18 * 1.0))
        self.assertEqual(s["cublaslt-autotune"], [11 / 10.5])
        out = subprocess.run([sys.executable, SCRIPT, run1, run2, "--untuned", "runtime-b"], capture_output=True,
                             text=True, check=True).stdout
        self.assertIn("2 shape-layouts on the tuned path", out)
        self.assertIn("runtime-c          %.4f  below 0.97: 1" % math.sqrt(11 / 12 * math.sqrt(20 / 18)), out)
        # --max-us 1000 counts the big shape too
        self.assertEqual(len(CT.per_slot([run1], "runtime-b", max_us=1000)["runtime"]), 3)

    def test_no_tuned_layout_is_an_error_naming_why(self):
        run = self.write("t.csv.gz", [row((64, 64, 64), "runtime-nn", 2, "table"), row((64, 64, 64), "runtime-b-nn", 2)])
        p = subprocess.run([sys.executable, SCRIPT, run, "--untuned", "runtime-b"], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no shape-layout the first slot tunes", p.stderr)


if __name__ == "__main__":
    unittest.main()
