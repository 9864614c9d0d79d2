#!/usr/bin/env python3
"""python/cudal2/analysis.py, the analysis shared by `cudal2 report` and the bench summaries, on small
hand-made CSVs and stores (written to a temporary folder), plus the committed grid CSV's class column
against the Python rule. Standard library only; the module is loaded from the source tree, as
bench/_analysis.py loads it (the package's __init__ needs torch).

    python3 tests/python/analysis_test.py [-v]
"""
import gzip
import importlib.util
import math
import os
import sqlite3
import sys
import tempfile
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_spec = importlib.util.spec_from_file_location("cudal2_analysis", os.path.join(REPO, "python", "cudal2", "analysis.py"))
A = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(A)

HEADER = "m,n,k,class,method,layout,mode,timer,median_us,paired_ratio,status"


def write(path, lines, comment=True):
    text = ("# cudal2 bench test\n# a second comment\n" if comment else "") + "\n".join(lines) + "\n"
    if path.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
    return path


class Gmean(unittest.TestCase):
    def test_values(self):
        self.assertAlmostEqual(A.gmean([2.0, 8.0]), 4.0)
        self.assertAlmostEqual(A.gmean([1.0, 2.0, 4.0]), 2.0)
        self.assertAlmostEqual(A.gmean(iter([9.0])), 9.0)  # any iterable

    def test_skips_what_is_no_time(self):
        # zeros (a failed pick), negatives, None, "", inf and nan are left out, not averaged in
        self.assertAlmostEqual(A.gmean([1.0, 0.0, -3.0, None, "", math.inf, math.nan, 4.0]), 2.0)

    def test_empty_is_nan(self):
        self.assertTrue(math.isnan(A.gmean([])))
        self.assertTrue(math.isnan(A.gmean([0.0, None])))


class ShapeClass(unittest.TestCase):
    def test_rule_of_roofline_cpp(self):
        # small: 2MNK < 1e9 (boundary included in the next class)
        self.assertEqual(A.shape_class(1000, 1000, 499), "small")
        self.assertEqual(A.shape_class(1000, 1000, 500), "medium")  # exactly 1e9
        # skinny: min(M, N) <= 256 once not small
        self.assertEqual(A.shape_class(256, 8192, 8192), "skinny")
        self.assertEqual(A.shape_class(8192, 256, 8192), "skinny")
        self.assertEqual(A.shape_class(257, 16384, 16384), "large")
        self.assertEqual(A.shape_class(257, 8192, 8192), "medium")
        # large from 1e11 (included), else medium
        self.assertEqual(A.shape_class(5000, 5000, 2000), "large")  # exactly 1e11
        self.assertEqual(A.shape_class(5000, 5000, 1999), "medium")
        self.assertEqual(A.shape_class(2048, 2048, 2048), "medium")
        self.assertEqual(A.shape_class(64, 64, 64), "small")

    def test_csv_column_first(self):
        # the CSV's class (written by the C++) wins; the rule is only the fallback
        self.assertEqual(A.row_class({"m": "64", "n": "64", "k": "64", "class": "large"}), "large")
        self.assertEqual(A.row_class({"m": "4096", "n": "4096", "k": "4096", "class": ""}), "large")
        self.assertEqual(A.row_class({"m": "128", "n": "4096", "k": "4096"}), "skinny")

    def test_committed_grid_agrees(self):
        # the bench CSV's class column (src/core/roofline.cpp) and the Python rule agree on a real grid
        path = os.path.join(REPO, "bench", "results", "h100", "grid0.csv.xz")
        if not os.path.exists(path):
            self.skipTest("no committed grid CSV")
        rows = A.load(path)
        self.assertGreater(len(rows), 100)
        for r in rows:
            self.assertEqual(r["class"], A.shape_class(int(r["m"]), int(r["n"]), int(r["k"])), r)


class Layouts(unittest.TestCase):
    def test_family(self):
        self.assertEqual(A.family("cublas-nn"), "cublas")
        self.assertEqual(A.family("cublaslt-autotune-tn"), "cublaslt-autotune")
        self.assertIsNone(A.family("torch-matmul"))

    def test_best_of_layouts(self):
        d = {"runtime-nn": 3.0, "runtime-tn": 2.0, "cublas-nn": 5.0, "runtime-b-nn": 1.0}
        self.assertEqual(A.best_of_layouts(d, "runtime"), 2.0)  # the faster layout, not runtime-b
        self.assertEqual(A.best_of_layouts(d, "cublas"), 5.0)  # the one layout measured
        self.assertIsNone(A.best_of_layouts(d, "cublaslt-autotune"))

    def test_add_best_of_layouts(self):
        d = {"cublas-nn": 4.0, "cublas-tn": 3.0, "runtime-nn": 2.0, "x": 1.0, "y-nn": 9.0, "y-tn": 8.0, "y": 7.5}
        A.add_best_of_layouts(d)
        self.assertEqual(d["cublas"], 3.0)
        self.assertNotIn("runtime", d)  # one layout only: no best-of-both entry
        self.assertEqual(d["y"], 7.5)  # an existing entry is kept


class Csv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def p(self, name):
        return os.path.join(self.d, name)

    def test_load_plain_gz_and_many(self):
        a = write(self.p("run0.csv"), [HEADER, "64,64,64,small,cublas-nn,nn,offline,graph,5.0,,ok"])
        write(self.p("run1.csv.gz"), [HEADER, "128,128,128,small,cublas-tn,tn,offline,graph,6.0,,ok",
                                      "128,128,128,small,cublas-nn,nn,offline,graph,7.0,,ok"])
        rows = A.load(a)
        self.assertEqual([r["method"] for r in rows], ["cublas-nn"])  # the '#' lines skipped
        rows = A.load(self.p("run1.csv.gz"))
        self.assertEqual([r["median_us"] for r in rows], ["6.0", "7.0"])
        # a glob (sorted) and a comma list, concatenated in order
        rows = A.load_many(self.p("run*"), a + "," + self.p("run1.csv.gz"))
        self.assertEqual([r["median_us"] for r in rows], ["5.0", "6.0", "7.0", "5.0", "6.0", "7.0"])
        with self.assertRaises(ValueError):
            A.load_many(self.p("nothing*.csv"))
        # a shape in several files takes the last one's rows, all of them
        b = write(self.p("rerun.csv"), [HEADER, "128,128,128,small,cublas-nn,nn,offline,graph,9.0,,ok"])
        rows = A.load_last_wins([a, self.p("run1.csv.gz"), b])
        self.assertEqual([(r["m"], r["median_us"]) for r in rows], [("64", "5.0"), ("128", "9.0")])

    def test_times_and_paired_ratios(self):
        path = write(self.p("paired.csv"), [
            HEADER,
            "64,4096,4096,skinny,runtime-nn,nn,offline,graph,10.0,0.95,ok",
            "64,4096,4096,skinny,runtime-tn,tn,offline,graph,8.0,1.10,ok",
            "64,4096,4096,skinny,cublaslt-autotune-nn,nn,offline,graph,9.0,1.0,ok",
            "64,4096,4096,skinny,runtime-nn,nn,offline,eager,12.0,0.90,ok",
            "64,4096,4096,skinny,cublas-nn,nn,offline,graph,,,failed",  # not ok: left out
            "64,4096,4096,skinny,cublas-tn,tn,offline,graph,7.0,,ok",  # no paired ratio
            "4096,4096,4096,,runtime-nn,nn,server,graph,300.0,1.02,ok",  # class from the rule
        ])
        rows = A.load(path)
        t = A.times(rows)
        self.assertEqual(t[(64, 4096, 4096)], {"runtime-nn": 10.0, "runtime-tn": 8.0,
                                               "cublaslt-autotune-nn": 9.0, "cublas-tn": 7.0})
        self.assertEqual(A.times(rows, "offline", "eager")[(64, 4096, 4096)], {"runtime-nn": 12.0})
        self.assertEqual(set(A.times(rows, "server")), {(4096, 4096, 4096)})
        pr = A.paired_ratios(rows)
        self.assertEqual(pr[(64, 4096, 4096, "skinny", "offline", "graph")],
                         {"runtime-nn": 0.95, "runtime-tn": 1.10, "cublaslt-autotune-nn": 1.0})
        self.assertEqual(pr[(64, 4096, 4096, "skinny", "offline", "eager")], {"runtime-nn": 0.90})
        self.assertEqual(pr[(4096, 4096, 4096, "large", "server", "graph")], {"runtime-nn": 1.02})
        self.assertEqual(len(pr), 3)
        # the summary's ratio: the best layout's paired ratio; gmean over shapes
        g = t[(64, 4096, 4096)]
        self.assertAlmostEqual(A.best_of_layouts(g, "cublaslt-autotune") / A.best_of_layouts(g, "runtime"), 9.0 / 8.0)

    def store(self, name, version=A.store_csv.SCHEMA_VERSION, app_id=A.store_csv.APPLICATION_ID):
        """A hand-made store: the measurements columns the readers ask for, under cudal2's
        application_id and the given schema version."""
        db = self.p(name)
        con = sqlite3.connect(db)
        con.execute(f"PRAGMA application_id = {app_id}")
        con.execute(f"PRAGMA user_version = {version}")
        con.execute("CREATE TABLE measurements (id INTEGER PRIMARY KEY, gpu TEXT, dtype TEXT, layout TEXT, m INT, "
                    "n INT, k INT, mode TEXT, timer TEXT, status TEXT, median_us REAL, baseline_json TEXT)")
        rows = [("H100", "f32", "nn", 64, 64, 64, "offline", "graph", "ok", 5.0, '{"a": 1}'),
                ("H100", "f32", "nn", 64, 64, 64, "offline", "graph", "ok", 4.0, '{"b": 2}'),
                ("H100", "f32", "nn", 64, 64, 64, "offline", "graph", "ok", 4.0, '{"c": 3}'),  # a tie: first kept
                ("H100", "f32", "nn", 64, 64, 64, "offline", "graph", "failed", 1.0, None),
                ("H100", "f32", "tn", 64, 64, 64, "offline", "graph", "ok", None, None)]
        con.executemany("INSERT INTO measurements (gpu, dtype, layout, m, n, k, mode, timer, status, median_us, "
                        "baseline_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        con.commit()
        con.close()
        return db

    def test_store(self):
        db = self.store("store.db")
        ms = A.store_measurements(db)
        self.assertEqual(len(ms), 3)
        best = A.best_store_measurements(ms)
        self.assertEqual(best, {("H100", "f32", "nn", 64, 64, 64, "offline", "graph"): (4.0, '{"b": 2}')})
        with self.assertRaises(A.StoreError):
            A.store_measurements(write(self.p("not-a-store.db"), ["hello"], comment=False))

    def test_store_schema_is_checked(self):
        # A newer schema may mean something else by the same columns: refused, as cudal2 refuses it.
        newer = self.store("newer.db", version=A.store_csv.SCHEMA_VERSION + 1)
        with self.assertRaisesRegex(A.StoreError, "newer than this reader knows"):
            A.store_measurements(newer)
        # A SQLite file of another program (or a bare one) is not read as a store.
        for name, app_id, version in (("other.db", 7, 1), ("bare.db", 0, 0)):
            with self.assertRaisesRegex(A.StoreError, "not a cudal2 store"):
                A.store_measurements(self.store(name, version=version, app_id=app_id))
        with self.assertRaisesRegex(A.StoreError, "no such store"):
            A.store_measurements(self.p("missing.db"))
        # Older schemas are read (their columns are a subset), and so is a store's CSV export.
        self.assertEqual(len(A.store_measurements(self.store("old.db", version=1))), 3)
        out = self.p("export")
        A.store_csv.export(self.store("exported.db"), out)
        self.assertEqual(len(A.store_measurements(out)), 3)


class StoreBoundary(unittest.TestCase):
    """Who may query a store: the C++ sources under src/store/ (typed calls of store::Store), and on the
    Python side store_csv.py and analysis.py (the schema check, then the queries). A reader elsewhere
    would read a store without that check."""

    def files(self, top, exts):
        for d, dirs, names in os.walk(os.path.join(REPO, top)):
            skip = ("bench/results", "src/store")
            dirs[:] = [x for x in dirs if os.path.relpath(os.path.join(d, x), REPO) not in skip]
            for n in names:
                if n.endswith(exts):
                    yield os.path.relpath(os.path.join(d, n), REPO)

    def test_only_the_store_modules_open_stores(self):
        allowed = {"python/cudal2/store_csv.py", "python/cudal2/analysis.py"}
        found = [f for top in ("python/cudal2", "bench") for f in self.files(top, (".py", ".sh"))
                 if f not in allowed and "sqlite3" in open(os.path.join(REPO, f), errors="replace").read()]
        self.assertEqual(found, [])

    def test_no_sql_outside_src_store(self):
        found = [f for f in self.files("src", (".cpp", ".hpp", ".h"))
                 if "sqlite" in open(os.path.join(REPO, f), errors="replace").read()]
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main(verbosity=2 if "-v" in sys.argv else 1, argv=[a for a in sys.argv if a != "-v"])
