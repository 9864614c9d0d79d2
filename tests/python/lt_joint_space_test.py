#!/usr/bin/env python3
"""bench/h200/lt_joint_space.py on a hand-made lt-space listing: the product of tiles, clusters and
custom options (and its filters), the fastest tiles of an eval CSV, refine's split counts paired
with the reduction schemes they were listed with, and a bad shape refused. Standard library only.

    python3 tests/python/lt_joint_space_test.py [-v]
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
SCRIPT = os.path.join(REPO, "bench", "h200", "lt_joint_space.py")
SHAPE = "4096,64,4096"


def spec(tile, cluster="2x1", custom=0, splits=1, reduction=0, stages=35, swizzle=0, algo=66):
    return (f"cublaslt nn f32 algo={algo} tile={tile} stages={stages} reduction={reduction} swizzle={swizzle} "
            f"custom={custom} inner=0 cluster={cluster} | splits={splits}")


LISTING = "\n".join([
    spec(12) + "\t# heuristic #0, workspace 0, waves 1.00",
    spec(314, "1x4", 3) + "\t# heuristic #1",
    spec(12, splits=2, reduction=2) + "\t# #0 splitk",
    spec(12, "1x1") + "\t# #0 cluster",
    spec(315, custom=1) + "\t# #0 tile",
    spec(7, algo=31) + "\t# algo 31",  # another algorithm: its tiles are not the product's
]) + "\n"


class LtJointSpace(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.listing = os.path.join(self.tmp.name, "space.txt")
        with open(self.listing, "w") as f:
            f.write(LISTING)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args, ok=True):
        r = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
        if ok:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def specs(self, *args):
        out = self.run_script(*args).stdout.splitlines()
        self.assertTrue(all(line.startswith(SHAPE + " cublaslt nn f32 algo=66 ") for line in out), out)
        return [line.split(" ", 1)[1] for line in out]

    def eval_csv(self, times):
        """An eval CSV with one k- row a spec (graph timer) and a baseline row."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["m", "n", "k", "method", "timer", "status", "median_us", "details"])
        for i, (s, us) in enumerate(times):
            w.writerow([4096, 64, 4096, f"k-{i:04x}", "graph", "ok", us, json.dumps({"spec": s})])
            w.writerow([4096, 64, 4096, f"k-{i:04x}", "chain", "ok", us / 10, json.dumps({"spec": s})])
        w.writerow([4096, 64, 4096, "cublaslt-autotune-tn", "graph", "ok", 1.0, "{}"])
        path = os.path.join(self.tmp.name, "eval.csv.gz")
        with gzip.open(path, "wt") as f:
            f.write("# cudal2 eval\n" + buf.getvalue())
        return path

    def test_product_covers_every_tile_cluster_and_custom_of_the_algorithm(self):
        out = self.specs("product", self.listing, SHAPE)
        # tiles 12, 314, 315; clusters 2x1, 1x4, 1x1; customs 0, 3, 1: one split, no reduction
        self.assertEqual(len(out), 27)
        self.assertEqual(len(set(out)), 27)
        self.assertIn(spec(315, "1x1", 3), out)
        self.assertTrue(all("splits=1" in s and "reduction=0" in s and "tile=7 " not in s for s in out))

    def test_product_filters(self):
        out = self.specs("product", self.listing, SHAPE, "--clusters", "1x1", "--customs", "0,1")
        self.assertEqual(out, [spec(t, "1x1", c) for t in (12, 314, 315) for c in (0, 1)])
        self.assertEqual(len(self.specs("product", self.listing, SHAPE, "--max", "4")), 4)

    def test_tiles_from_takes_the_fastest_tiles(self):
        csv_path = self.eval_csv([(spec(12, "1x1"), 10.0), (spec(315, "1x1", 1), 9.0), (spec(314, "1x1"), 11.0),
                                  (spec(315, "2x1"), 9.5)])
        out = self.specs("product", self.listing, SHAPE, "--tiles-from", csv_path, "--top", "2")
        self.assertEqual({s.split("tile=")[1].split()[0] for s in out}, {"315", "12"})
        self.assertEqual(len(out), 2 * 3 * 3)

    def test_refine_pairs_splits_with_their_reductions(self):
        csv_path = self.eval_csv([(spec(315, "1x1", 1), 9.0), (spec(12, "1x1"), 10.0)])
        out = self.specs("refine", self.listing, SHAPE, csv_path, "--top", "1")
        # the fastest (315, 1x1, 1) with (1, none) and (2, compute type), one stages id, swizzle on and off
        self.assertEqual(sorted(out), sorted(spec(315, "1x1", 1, s, r, swizzle=z) for s, r in ((1, 0), (2, 2))
                                             for z in (0, 1)))

    def test_bad_input_is_refused(self):
        r = self.run_script("product", self.listing, "4096x64x4096", ok=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not M,N,K", r.stderr)
        empty = os.path.join(self.tmp.name, "empty.txt")
        open(empty, "w").close()
        r = self.run_script("product", empty, SHAPE, ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no cublaslt spec lines", r.stderr)
        r = self.run_script("refine", self.listing, SHAPE, ok=False)
        self.assertIn("refine needs", r.stderr)


if __name__ == "__main__":
    unittest.main()
