"""The analysis shared by `cudal2 report` (python/cudal2/report.py) and the bench/*.py summaries:
reading `cudal2 bench`/`eval`/`tune` CSVs and results stores, geometric means, best-of-layouts,
paired ratios and the shape class. Standard library only (no torch, numpy or pandas), so the bench
scripts load it straight from the source tree (bench/_analysis.py) without installing the package.

Every ratio the callers form is between two methods of the same run (same process, same inputs,
interleaved); nothing here divides times from two runs.

Stores are read only here and in store_csv.py (open_store checks the schema version first): the
queries below are every question the Python side asks a store.
"""
import csv
import glob
import gzip
import lzma
import math
import os
import sqlite3
import sys
from collections import defaultdict

try:
    from . import store_csv
except ImportError:  # loaded as a file (bench/_analysis.py, the installed report generator): its sibling
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import store_csv

StoreError = store_csv.StoreError

__all__ = ["CLASSES", "shape_class", "row_class", "load", "expand", "load_many", "load_last_wins", "gmean", "family",
           "best_of_layouts", "add_best_of_layouts", "times", "paired_ratios", "paired_intervals",
           "StoreError", "store_measurements",
           "best_store_measurements", "offline_graph_rows", "best_spec_times", "spec_measurements", "measured_shapes", "llm_turns", "measurement_counts",
           "compute_us", "memory_us", "roof_us", "write_rows", "read_shapes"]

CLASSES = ["small", "skinny", "medium", "large"]


# ---------------------------------------------------------------------------------------------- classes


def shape_class(m, n, k):
    """The class of an M x N x K shape, the rule of src/core/roofline.cpp (classify), which writes the
    bench CSV's `class` column: small below 1 GFLOP, else skinny where min(M, N) <= 256, else large
    from 100 GFLOP, else medium."""
    f = 2.0 * m * n * k
    if f < 1e9:
        return "small"
    if min(m, n) <= 256:
        return "skinny"
    return "large" if f >= 1e11 else "medium"


def row_class(r):
    """A CSV row's shape class: its `class` column (written by the C++), else the same rule here."""
    return r.get("class") or shape_class(int(r["m"]), int(r["n"]), int(r["k"]))


# ---------------------------------------------------------------------------------------------- input


def read_shapes(path):
    """The (m, n, k) of a shape list in file order: one "M,N,K" or "MxNxK" first on each line, '#'
    lines and blank lines skipped (bench/shapes/*.txt; a `cudal2 eval --spec-list` file's shapes)."""
    with open(path) as f:
        return [tuple(int(x) for x in line.split()[0].replace("x", ",").split(","))
                for line in f if line.strip() and not line.startswith("#")]


def load(path):
    """The rows (dicts) of a `cudal2 bench`/`eval`/`tune` CSV (.csv, .csv.gz, or .csv.xz: the
    committed whole-grid runs, a third smaller than gzipped), its '#' lines skipped."""
    opener = gzip.open if str(path).endswith(".gz") else lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def expand(spec):
    """The files of a comma-separated list of paths and globs (each glob sorted); ValueError where a
    glob matches nothing."""
    files = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        hits = sorted(glob.glob(part)) if any(c in part for c in "*?[") else [part]
        if not hits:
            raise ValueError(f"no file matches '{part}'")
        files += hits
    return files


def load_many(*specs):
    """The rows of several CSVs concatenated, in order: each spec a path, a glob or a comma list."""
    rows = []
    for spec in specs:
        for path in expand(str(spec)):
            rows += load(path)
    return rows


def load_last_wins(paths):
    """The rows of several CSVs of one grid (shards, or a run and its re-runs) where a shape in several
    takes the last file's rows, all of them: a shape's methods never mix two processes."""
    rows = []
    for path in paths:
        extra = load(path)
        shapes = {(r["m"], r["n"], r["k"]) for r in extra}
        rows = [r for r in rows if (r["m"], r["n"], r["k"]) not in shapes] + extra
    return rows


# ---------------------------------------------------------------------------------------------- roofline


def compute_us(s):
    """Microseconds of 2MNK for a shape (m, n, k) at the 800 TFLOP/s dense fp16 peak."""
    m, n, k = s
    return 2 * m * n * k / 800e12 * 1e6


def memory_us(s):
    """Microseconds of the compulsory traffic (A, B read once, C written once, fp16) at 3.0 TB/s."""
    m, n, k = s
    return 2 * (m * k + k * n + m * n) / 3.0e12 * 1e6


def roof_us(s):
    """The roofline's time for a shape (m, n, k): the slower of compute and memory."""
    return max(compute_us(s), memory_us(s))


# ---------------------------------------------------------------------------------------------- statistics


def gmean(xs):
    """Geometric mean of the positive finite values (None, "", zeros, negatives, inf and nan are
    left out, e.g. a failed measurement); nan when none is left."""
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def family(method):
    """The method without its layout suffix (`cublas-nn` -> `cublas`); None for a method that has none."""
    return method[:-3] if method[-3:] in ("-nn", "-tn") else None


def best_of_layouts(times_by_method, fam):
    """min over `fam-nn` and `fam-tn` of a {method: time} dict, over the layouts measured; None if neither."""
    ts = [times_by_method[m] for m in (fam + "-nn", fam + "-tn") if m in times_by_method]
    return min(ts) if ts else None


def add_best_of_layouts(times_by_method):
    """Adds, in place, a `fam` entry = min(fam-nn, fam-tn) for each family measured in both layouts
    (a fair baseline takes its better layout); an existing `fam` entry is kept."""
    fams = defaultdict(list)
    for meth, us in list(times_by_method.items()):
        f = family(meth)
        if f:
            fams[f].append(us)
    for f, v in fams.items():
        if len(v) == 2 and f not in times_by_method:
            times_by_method[f] = min(v)
    return times_by_method


def times(rows, mode="offline", timer="graph"):
    """{(m, n, k): {method: median_us}} of the ok rows of one mode and timer."""
    t = defaultdict(dict)
    for r in rows:
        if r["mode"] == mode and r["timer"] == timer and r["status"] == "ok" and r["median_us"]:
            t[(int(r["m"]), int(r["n"]), int(r["k"]))][r["method"]] = float(r["median_us"])
    return t


def _per_method(rows, columns, value):
    """{(m, n, k, class, mode, timer): {method: value(row)}} over the ok rows that have every one of
    `columns`."""
    out = {}
    for r in rows:
        if r["status"] != "ok" or not r["median_us"] or not all(r.get(c) for c in columns):
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]), row_class(r), r["mode"], r["timer"])
        out.setdefault(key, {})[r["method"]] = value(r)
    return out


def paired_ratios(rows):
    """{(m, n, k, class, mode, timer): {method: paired_ratio}} from the CSV's `paired_ratio` column
    (bench writes it where a run has a reference method: the median over rounds of the reference's
    time / the method's time in the same round, docs/measuring.md); ok rows with a value only."""
    return _per_method(rows, ("paired_ratio",), lambda r: float(r["paired_ratio"]))


def paired_intervals(rows):
    """{(m, n, k, class, mode, timer): {method: (paired_lo, paired_hi)}} from the CSV's `paired_lo` and
    `paired_hi` columns (bench writes them since the paired ratio's confidence interval: the 95%
    distribution-free interval of the median over rounds, docs/measuring.md); rows with both only."""
    return _per_method(rows, ("paired_lo", "paired_hi"), lambda r: (float(r["paired_lo"]), float(r["paired_hi"])))


# ---------------------------------------------------------------------------------------------- stores


def _query(path, sql, args=()):
    """All rows of one query of the store at path (store_csv.open_store: a file or an exported
    directory, its schema checked); StoreError where it is not a readable cudal2 store."""
    db = store_csv.open_store(path)
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"{path}: not a cudal2 store ({e})") from e
    finally:
        db.close()


def store_measurements(path):
    """The ok measurements of a results store (read only) as tuples (gpu, dtype, layout, m, n, k,
    mode, timer, median_us, baseline_json); StoreError where it is not a cudal2 store."""
    return _query(path, "SELECT gpu, dtype, layout, m, n, k, mode, timer, median_us, baseline_json FROM measurements "
                  "WHERE status = 'ok' AND median_us IS NOT NULL")


def offline_graph_rows(path):
    """Every offline graph-timer measurement (failed ones included), oldest first, as tuples (id, m,
    n, k, layout, spec_hash, status, median_us, baseline_json)."""
    return _query(path, "SELECT id, m, n, k, layout, spec_hash, status, median_us, baseline_json FROM measurements "
                  "WHERE mode = 'offline' AND timer = 'graph' ORDER BY id")


def best_spec_times(path):
    """Per spec and shape its fastest ok offline graph median, as tuples (family, spec text, m, n, k,
    layout, median_us)."""
    return _query(path, "SELECT s.family, s.text, m.m, m.n, m.k, m.layout, MIN(m.median_us) FROM measurements m "
                  "JOIN specs s ON s.hash = m.spec_hash WHERE m.mode = 'offline' AND m.timer = 'graph' "
                  "AND m.status = 'ok' GROUP BY s.hash, m.m, m.n, m.k")


def spec_measurements(path, timer, mode):
    """Every ok measurement of one timer and mode with its spec, oldest first, as tuples (family,
    spec text, measurement id, m, n, k, median_us, baseline_json)."""
    return _query(path, "SELECT s.family, s.text, x.id, x.m, x.n, x.k, x.median_us, x.baseline_json FROM measurements x "
                  "JOIN specs s ON s.hash = x.spec_hash WHERE x.status = 'ok' AND x.timer = ? AND x.mode = ? "
                  "ORDER BY x.id", (timer, mode))


def measured_shapes(path):
    """The distinct (m, n, k) the store holds measurements of, sorted."""
    return sorted(tuple(r) for r in _query(path, "SELECT DISTINCT m, n, k FROM measurements"))


def llm_turns(path):
    """The LLM proposer's turns, oldest first, as tuples (m, n, k, kind, status, time_us, reward)."""
    return _query(path, "SELECT m, n, k, kind, status, time_us, reward FROM llm_turns ORDER BY id")


def measurement_counts(path):
    """(measurements, distinct specs measured) of the store."""
    return tuple(_query(path, "SELECT count(*), count(DISTINCT spec_hash) FROM measurements")[0])


def best_store_measurements(rows):
    """{(gpu, dtype, layout, m, n, k, mode, timer): (median_us, baseline_json)} of the fastest of
    store_measurements' rows per key (the first of equal times)."""
    best = {}
    for gpu, dtype, layout, m, n, k, mode, timer, us, bj in rows:
        key = (gpu, dtype, layout, m, n, k, mode, timer)
        if key not in best or us < best[key][0]:
            best[key] = (us, bj)
    return best


# ---------------------------------------------------------------------------------------------- output


def write_rows(path, rows):
    """Dicts with the same keys as a CSV, floats to 4 decimals."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
