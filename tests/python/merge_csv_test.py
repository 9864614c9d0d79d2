#!/usr/bin/env python3
"""bench/merge_csv.py on hand-made shard CSVs: one header (the first shard's '#' lines and columns),
every shard's rows in order, gzip in and out, and shards with other columns refused by name.
Standard library only.

    python3 tests/python/merge_csv_test.py [-v]
"""
import gzip
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "merge_csv.py")


class MergeCsv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with (gzip.open(path, "wt") if name.endswith(".gz") else open(path, "w")) as f:
            f.write(text)
        return path

    def run_merge(self, out, *paths):
        return subprocess.run([sys.executable, SCRIPT, out, *paths], capture_output=True, text=True)

    def test_one_header_every_row_in_order(self):
        a = self.write("0.csv.gz", "# gpu: H200\n# read limit: 4.6\nm,n,k,method\n1,2,3,x\n4,5,6,y\n")
        b = self.write("1.csv", "# gpu: H200\n# read limit: 4.5\nm,n,k,method\n7,8,9,z\n")
        out = os.path.join(self.tmp.name, "run.csv.gz")
        r = self.run_merge(out, a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("3 row(s) from 2 file(s)", r.stdout)
        with gzip.open(out, "rt") as f:
            self.assertEqual(f.read(), "# gpu: H200\n# read limit: 4.6\nm,n,k,method\n1,2,3,x\n4,5,6,y\n7,8,9,z\n")

    def test_other_columns_are_refused(self):
        a = self.write("0.csv", "m,n,k,method\n1,2,3,x\n")
        b = self.write("1.csv", "m,n,k,method,extra\n7,8,9,z,0\n")
        r = self.run_merge(os.path.join(self.tmp.name, "run.csv"), a, b)
        self.assertEqual(r.returncode, 1)
        self.assertIn("1.csv: its columns differ", r.stderr)

    def test_nothing_to_merge(self):
        self.assertEqual(self.run_merge(os.path.join(self.tmp.name, "run.csv")).returncode, 2)
        empty = self.write("0.csv", "# only a comment\n")
        r = self.run_merge(os.path.join(self.tmp.name, "run.csv"), empty)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no column header", r.stderr)


if __name__ == "__main__":
    unittest.main()
