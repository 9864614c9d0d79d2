#!/usr/bin/env python3
"""bench/h200/cross_layout_list.py on a hand-made run and table: which shapes one layout lists
(behind the other layout under every timer, M >= x N, excluded and compiled entries), the other
layout's configurations run in this one, the extra tiles, and the order. Standard library only.

    python3 tests/python/cross_layout_list_test.py [-v]
"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "h200", "cross_layout_list.py")


def lt(layout, tile, custom=3, cluster="1x4"):
    return (f"cublaslt {layout} f32 algo=66 tile={tile} stages=35 reduction=0 swizzle=0 custom={custom} inner=0 "
            f"cluster={cluster} | splits=1")


# (m, n, k): NN and TN runtime times per timer, auto-tuning TN's time and pick, the NN entry
SHAPES = {
    (4096, 64, 4096): ({"graph": 10.0, "chain": 10.0}, {"graph": 8.5, "chain": 8.6}, 8.4, lt("tn", 12, 0, "2x1"),
                       lt("nn", 314)),
    (2048, 64, 4096): ({"graph": 9.0, "chain": 8.0}, {"graph": 8.0, "chain": 8.0}, 8.0, lt("tn", 12), lt("nn", 15)),
    (1024, 128, 8192): ({"graph": 9.0, "chain": 9.0}, {"graph": 8.0, "chain": 8.0}, 8.0, lt("tn", 18),
                        lt("nn", 18)),
    (64, 64, 2048): ({"graph": 5.0, "chain": 5.0}, {"graph": 4.0, "chain": 4.0}, 4.0, lt("tn", 10),
                     "lat nn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=4"),
}


class CrossLayoutList(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["m", "n", "k", "class", "method", "layout", "mode", "timer", "median_us", "status", "details"])
        entries = []
        for (m, n, k), (nn, tn, at, pick, entry) in SHAPES.items():
            for t in ("graph", "chain"):
                w.writerow([m, n, k, "skinny", "runtime-nn", "nn", "offline", t, nn[t], "ok", "{}"])
                w.writerow([m, n, k, "skinny", "runtime-tn", "tn", "offline", t, tn[t], "ok", "{}"])
                w.writerow([m, n, k, "skinny", "cublaslt-autotune-tn", "tn", "offline", t, at, "ok",
                            json.dumps({"config": pick})])
            entries += [{"layout": "nn", "m": m, "n": n, "k": k, "spec": entry},
                        {"layout": "tn", "m": m, "n": n, "k": k, "spec": lt("tn", 20)}]
        self.run_csv = os.path.join(self.tmp.name, "run.csv.gz")
        with gzip.open(self.run_csv, "wt") as f:
            f.write("# cudal2 bench\n" + buf.getvalue())
        self.table = os.path.join(self.tmp.name, "table.json")
        with open(self.table, "w") as f:
            json.dump({"entries": entries}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def lines(self, *args):
        r = subprocess.run([sys.executable, SCRIPT, "--run", self.run_csv, "--table", self.table, *args],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [x for x in r.stdout.splitlines() if not x.startswith("#")]

    def shapes(self, lines):
        return [x.split(" ", 1)[0] for x in dict.fromkeys(x.split(" ", 1)[0] for x in lines)]

    def test_behind_under_every_timer(self):
        out = self.lines("--ratio", "0.97")
        # 2048x64x4096 is behind under the graph timer only; the lat entry's shape is listed
        self.assertEqual(self.shapes(out), ["64,64,2048", "4096,64,4096", "1024,128,8192"])
        self.assertEqual(self.shapes(self.lines("--ratio", "0.97", "--timers", "graph")),
                         ["64,64,2048", "4096,64,4096", "1024,128,8192", "2048,64,4096"])  # a tie: M,N,K order

    def test_filters(self):
        out = self.lines("--skip-compiled", "--min-m-over-n", "4")
        self.assertEqual(self.shapes(out), ["4096,64,4096", "1024,128,8192"])
        excl = os.path.join(self.tmp.name, "excl.txt")
        with open(excl, "w") as f:
            f.write("# M,N,K\n4096,64,4096\n")
        self.assertEqual(self.shapes(self.lines("--skip-compiled", "--exclude-shapes", excl)), ["1024,128,8192"])

    def test_order_and_lead(self):
        out = self.lines("--order", "size", "--lead", "1024,128,8192")
        self.assertEqual(self.shapes(out), ["1024,128,8192", "4096,64,4096", "64,64,2048"])

    def test_candidates(self):
        out = [x.split(" ", 1)[1] for x in self.lines("--skip-compiled", "--other-layout", "--tiles", "315",
                                                      "--customs", "1,3", "--extra", lt("nn", 318, 1))
               if x.startswith("4096,64,4096 ")]
        self.assertEqual(out[0], lt("nn", 314))  # the entry first
        # the TN entry and auto-tuning's TN pick run NN, custom 0-3 with their own cluster and 1x1
        self.assertIn(lt("nn", 20, 2, "1x1"), out)
        self.assertIn(lt("nn", 12, 0, "2x1"), out)
        self.assertIn(lt("nn", 12, 3, "1x1"), out)
        self.assertIn(lt("nn", 315, 1, "1x1"), out)
        self.assertIn(lt("nn", 318, 1), out)
        self.assertEqual(len(out), len(set(out)))
        self.assertFalse(any(" tn " in x for x in out))


if __name__ == "__main__":
    unittest.main()
