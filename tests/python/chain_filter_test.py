#!/usr/bin/env python3
"""bench/lat/lat_chain_filter.py on a hand-made runtime run, table and store: which entries it lists
(against auto-tuning, or with --reference against the entry they replaced; an entry on cuBLASLt's
heuristic counts as family cublaslt), and what it deletes from a store (the family's measurements of
an entry, or with --revert all of them). Standard library only.

    python3 tests/python/chain_filter_test.py [-v]
"""
import gzip
import importlib.util
import json
import os
import sqlite3
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
_spec = importlib.util.spec_from_file_location("lat_chain_filter", os.path.join(REPO, "bench", "lat", "lat_chain_filter.py"))
F = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F)
S = F.store_csv

# (m, n, k): chain-timer medians of the new library (runtime), the one before (runtime-b), auto-tuning
RUN = {
    (64, 64, 64): {"runtime-tn": 2.0, "runtime-b-tn": 2.1, "cublaslt-autotune-nn": 2.2, "cublaslt-autotune-tn": 2.2},
    (64, 64, 128): {"runtime-tn": 2.5, "runtime-b-tn": 2.2, "cublaslt-autotune-nn": 2.6, "cublaslt-autotune-tn": 2.6},
    (64, 64, 256): {"runtime-tn": 3.0, "runtime-b-tn": 2.9, "cublaslt-autotune-nn": 2.8, "cublaslt-autotune-tn": 2.9},
    (64, 64, 512): {"runtime-nn": 4.0, "runtime-b-nn": 3.6, "cublaslt-autotune-nn": 3.6, "cublaslt-autotune-tn": 3.7},
}


class ChainFilter(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.csv = os.path.join(d, "run.csv.gz")
        with gzip.open(self.csv, "wt") as f:
            f.write("# cudal2 bench test\nm,n,k,method,mode,timer,median_us,status\n")
            for (m, n, k), times in RUN.items():
                for method, us in times.items():
                    f.write(f"{m},{n},{k},{method},offline,chain,{us},ok\n")
                    f.write(f"{m},{n},{k},{method},offline,graph,{us / 2},ok\n")  # read with timers=("graph", ...)
        kernels = ["lat tn f32 tile=16x16x64 warps=1x1 kwarps=4", "cublaslt tn f32 algo=66 tile=10"]
        entries = [((64, 64, 64), "tn", 0), ((64, 64, 128), "tn", 0), ((64, 64, 256), "tn", 1),
                   ((64, 64, 512), "nn", -1)]  # -1: cuBLASLt's heuristic
        self.table = os.path.join(d, "table.json")
        with open(self.table, "w") as f:
            json.dump({"kernels": kernels, "entries": [
                {"m": s[0], "n": s[1], "k": s[2], "layout": lay, "accum": "f32",
                 "run": {"kernel": kern, "spec": kernels[kern] + " | splits=1" if kern >= 0 else "cublaslt"}}
                for s, lay, kern in entries]}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def listed(self, family, reference=None):
        return {(s, lay): round(r, 3) for s, lay, r in F.drop_from_runtime(self.csv, self.table, 0.995, family, reference)}

    def test_against_auto_tuning(self):
        # lat on 64x64x64 is ahead of auto-tuning (1.1), on 64x64x128 too (1.04): nothing listed
        self.assertEqual(self.listed("lat"), {})
        # the cuBLASLt entry of 64x64x256 (0.933) and the heuristic's of 64x64x512 (0.9) are behind
        self.assertEqual(self.listed("cublaslt"), {((64, 64, 256), "tn"): 0.933, ((64, 64, 512), "nn"): 0.9})

    def test_against_the_entry_before(self):
        # 64x64x128: ahead of auto-tuning, but slower than the entry it replaced (2.2 / 2.5)
        self.assertEqual(self.listed("lat", "runtime-b"), {((64, 64, 128), "tn"): 0.88})
        self.assertEqual(self.listed("cublaslt", "runtime-b"),
                         {((64, 64, 256), "tn"): 0.967, ((64, 64, 512), "nn"): 0.9})

    def test_every_timer_and_only_what_the_run_measured(self):
        # graph rows, faster than chain: 64x64x128 is behind the entry before back to back too (0.88)
        self.assertEqual({(s, lay) for s, lay, _ in F.drop_from_runtime(
            self.csv, self.table, 0.995, "lat", "runtime-b", ("graph", "chain"))}, {((64, 64, 128), "tn")})
        # a run whose runtime rows name another spec than the table's entry measured something else
        other = os.path.join(self.tmp.name, "other.csv")
        with open(other, "w") as f:
            f.write("m,n,k,method,mode,timer,median_us,status,details\n")
            for method, us in RUN[(64, 64, 128)].items():
                spec = '"{""path"": ""table"", ""spec"": ""lat tn f32 tile=32x32x64""}"' if method == "runtime-tn" else ""
                f.write(f"64,64,128,{method},offline,chain,{us},ok,{spec}\n")
        self.assertEqual(F.drop_from_runtime(other, self.table, 0.995, "lat", "runtime-b"), [])

    def store(self, name):
        db = os.path.join(self.tmp.name, name)
        c = sqlite3.connect(db)
        c.execute(f"PRAGMA application_id = {S.APPLICATION_ID}")
        c.execute(f"PRAGMA user_version = {S.SCHEMA_VERSION}")
        c.execute("CREATE TABLE specs (hash TEXT PRIMARY KEY, family TEXT)")
        c.execute("CREATE TABLE measurements (id INTEGER PRIMARY KEY, m INT, n INT, k INT, layout TEXT, spec_hash TEXT)")
        c.executemany("INSERT INTO specs VALUES (?, ?)", [("a", "lat"), ("b", "cublaslt")])
        c.executemany("INSERT INTO measurements (m, n, k, layout, spec_hash) VALUES (?, ?, ?, ?, ?)",
                      [(64, 64, 128, "tn", "a"), (64, 64, 128, "tn", "b"), (64, 64, 128, "nn", "a"),
                       (64, 64, 64, "tn", "a")])
        c.commit()
        c.close()
        return db

    def left(self, db):
        c = sqlite3.connect(db)
        try:
            return sorted(c.execute("SELECT m, n, k, layout, spec_hash FROM measurements").fetchall())
        finally:
            c.close()

    def test_drop_the_family_or_revert(self):
        db = self.store("filter.db")
        # the family's measurements of the entry go; the other family's and the other layout's stay
        self.assertEqual(S.drop_family_measurements(db, "lat", [(64, 64, 128, "tn")]), 1)
        self.assertEqual(self.left(db), [(64, 64, 64, "tn", "a"), (64, 64, 128, "nn", "a"), (64, 64, 128, "tn", "b")])
        db = self.store("revert.db")
        # revert (family None): every measurement of the entry goes, so the export takes an older job's
        self.assertEqual(S.drop_family_measurements(db, None, [(64, 64, 128, "tn")]), 2)
        self.assertEqual(self.left(db), [(64, 64, 64, "tn", "a"), (64, 64, 128, "nn", "a")])


if __name__ == "__main__":
    unittest.main()
