#!/usr/bin/env python3
"""The spec list of a confirmation run (bench/runtime/confirm_entries.sh): for the shapes where the runtime
measured behind cuBLASLt auto-tuning, the table's entry and the search's runners-up, one
"M,N,K SPEC" line each, to be timed side by side in one job per shape together with the
configurations auto-tuning picks from (added on the GPU machine: `cudal2 lt-space`).

  python3 bench/runtime/confirm_candidates.py --runtime-csv RUN.csv[.gz] ... --below 0.995 \\
      --table tables/h100-f32.json --store bench/results/h100/grid-cublaslt/store \\
      --store bench/results/h100/rl-grid/store --top 4 > confirm.txt

Shapes come furthest behind first. A shape is chosen when any runtime build in the runs (runtime-*, best of NN/TN) measured below
--below times auto-tuning's best of NN/TN (graph timer, ratio of medians). A single run puts a few
shapes below 0.97 by noise alone (two copies of one library in one process, H200:
bench/results/h200/reconfirm/), so --min-runs 2 over independent runs (--timers graph,chain:
either timer) keeps the shapes that lose in every run; --autotune-picks adds the configurations
auto-tuning itself picked in those runs (the bench records each as `config`). The runners-up are
each layout's --top `cublaslt` specs by the export's score (time over the same job's heuristic
time, best measurement per spec; src/export/export.cpp). Only `cublaslt` specs by default: where
the runtime lost, cuBLASLt's own configurations are what confirmation is for; --family FAMILY
(repeatable) takes another family's runners-up instead (a compiled kernel: the confirmation job
compiles it on the GPU machine).

--shapes FILE names the shapes outright (one "M,N,K" or "MxNxK" per line, in the order given)
instead of --runtime-csv's losers (runs given with it then only supply --autotune-picks): e.g. the
shapes where another GPU's campaign found one of our families ahead, to be confirmed with that
family's runners-up (bench/results/h200/transfer/ store7: the H100's lat winners on the H200).

Transfer from another GPU (a new GPU's table seeded from an older one's): pass --table more than
once (this GPU's table and the other GPU's), --compiled to list their compiled entries too (the
confirmation job compiles them on the GPU machine; a table holds a few dozen distinct kernels), and
--build runtime to order the shapes by one runtime build's rows only. --below above 1 lists every
shape of the runs, furthest behind first.
"""
import argparse
import csv
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import load, read_shapes, store_csv  # noqa: E402  (a bench CSV, .gz or not; a store's CSV export)


def read_run(spec, only_build=None):
    """One run: the rows of a runtime bench CSV and the runtime build to read in it (PATH:BUILD names
    one; else only_build, None for every build)."""
    if ":" in os.path.basename(spec):
        path, build = spec.rsplit(":", 1)
        return load(path), build
    return load(spec), only_build


def run_ratios(rows, build=None, timers=("graph",)):
    """Per shape and timer of one run, the worst build's ratio (auto-tuning's best of NN/TN over the
    build's best of NN/TN)."""
    t = defaultdict(dict)  # (m, n, k, timer) -> method -> median
    for r in rows:
        if r["timer"] in timers and r["mode"] == "offline" and r["status"] == "ok" and r["median_us"]:
            t[(int(r["m"]), int(r["n"]), int(r["k"]), r["timer"])][r["method"]] = float(r["median_us"])
    out = {}
    for (m, n, k, timer), ms in t.items():
        at = min((ms[x] for x in ("cublaslt-autotune-nn", "cublaslt-autotune-tn") if x in ms), default=None)
        builds = {x.rsplit("-", 1)[0] for x in ms if x.startswith("runtime")}
        if build:
            builds &= {build}
        worst = min((at / min(ms[b + s] for s in ("-nn", "-tn") if b + s in ms) for b in builds), default=None)
        if at and worst is not None:
            out[(m, n, k, timer)] = worst
    return out


def losing_shapes(runs, below, timers=("graph",), min_runs=1):
    """Shapes behind auto-tuning: measured below `below` (any of `timers`) in at least `min_runs` of the
    runs (read_run's), the furthest behind first."""
    worst, behind = {}, defaultdict(int)
    for rows, build in runs:
        low = set()
        for (m, n, k, _), r in run_ratios(rows, build, timers).items():
            worst[(m, n, k)] = min(worst.get((m, n, k), r), r)
            if r < below:
                low.add((m, n, k))
        for s in low:
            behind[s] += 1
    out = [(worst[s], s) for s, c in behind.items() if c >= min_runs]
    return [s for _, s in sorted(out)]  # the furthest behind first: a time-limited run does those


def autotune_picks(runs, shapes):
    """(m, n, k, layout) -> the configurations auto-tuning picked in the runs (details.config, as
    `cudal2 bench` records it), most often picked first."""
    want = set(shapes)
    count = defaultdict(lambda: defaultdict(int))
    for rows, _ in runs:
        for r in rows:
            s = (int(r["m"]), int(r["n"]), int(r["k"]))
            if s not in want or not r["method"].startswith("cublaslt-autotune-") or r["status"] != "ok":
                continue
            try:
                spec = json.loads(r.get("details") or "{}").get("config")
            except ValueError:
                continue
            if spec and spec.startswith("cublaslt "):
                count[s + (spec.split()[1],)][spec] += 1
    return {k: sorted(v, key=lambda x: (-v[x], x)) for k, v in count.items()}


def measured_shapes(store_dir):
    with store_csv.open_csv(os.path.join(store_dir, "measurements.csv")) as f:
        return {(int(r["m"]), int(r["n"]), int(r["k"])) for r in csv.DictReader(f) if r["status"] == "ok"}


def runners_up(store_dirs, shapes, top, families=("cublaslt",)):
    want = set(shapes)
    best = defaultdict(dict)  # (m, n, k, layout) -> spec text -> best score
    for d in store_dirs:
        # store_csv.py gzips only the larger tables: open_csv reads either.
        with store_csv.open_csv(os.path.join(d, "specs.csv")) as f:
            text = {r["hash"]: r["text"] for r in csv.DictReader(f) if r["family"] in families}
        with store_csv.open_csv(os.path.join(d, "measurements.csv")) as f:
            for r in csv.DictReader(f):
                s = (int(r["m"]), int(r["n"]), int(r["k"]))
                if s not in want or r["spec_hash"] not in text or r["status"] != "ok" or r["timer"] != "graph" \
                        or r["mode"] != "offline" or r["dtype"] != "f32" or not r["median_us"]:
                    continue
                try:
                    ref = json.loads(r["baseline_json"])[f"cublaslt-heuristic-{r['layout']}"]["offline"]["graph"]["median"]
                except (KeyError, ValueError, TypeError):
                    continue
                score = float(r["median_us"]) / ref
                key = s + (r["layout"],)
                spec = text[r["spec_hash"]]
                best[key][spec] = min(best[key].get(spec, 1e30), score)
    return {k: sorted(v, key=v.get)[:top] for k, v in best.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime-csv", action="append",
                    help="runtime bench CSV, one run (repeatable); PATH:BUILD reads that runtime build only")
    ap.add_argument("--shapes", help="the shapes to confirm, one per line (instead of --runtime-csv's losers; "
                                     "the runs then only give --autotune-picks)")
    ap.add_argument("--below", type=float, default=0.995)
    ap.add_argument("--timers", default="graph",
                    help="timers a run's ratio is read under (comma-separated: graph, chain; a shape is behind "
                         "in a run when any of them is below --below)")
    ap.add_argument("--min-runs", type=int, default=1,
                    help="a shape is chosen when at least this many of the --runtime-csv runs measured it behind")
    ap.add_argument("--autotune-picks", action="store_true",
                    help="list the configurations auto-tuning picked in the --runtime-csv runs too (details.config)")
    ap.add_argument("--table", action="append", required=True,
                    help="runtime table JSON (repeatable: each one's entry is listed, the first table's first)")
    ap.add_argument("--compiled", action="store_true",
                    help="list the tables' compiled entries too (not only cuBLASLt configurations)")
    ap.add_argument("--build", default=None,
                    help="order shapes by this runtime build only (e.g. runtime; default: the worst of all)")
    ap.add_argument("--store", action="append", default=[], help="store CSV folder (python/cudal2/store_csv.py; repeatable)")
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--family", action="append", default=None,
                    help="the runners-up's family (repeatable; default cublaslt)")
    ap.add_argument("--exclude", action="append", default=[], help="an earlier spec list: its shapes are left out")
    ap.add_argument("--exclude-store", action="append", default=[],
                    help="an earlier confirmation's store CSV folder: the shapes it measured are left out (resume)")
    a = ap.parse_args()
    done = set()
    for path in a.exclude:
        done |= set(read_shapes(path))
    for d in a.exclude_store:
        done |= measured_shapes(d)
    timers = tuple(t for t in a.timers.split(",") if t)
    if a.min_runs < 1 or not set(timers) <= {"graph", "chain"}:
        ap.error("--min-runs is at least 1 and --timers names graph and/or chain")
    if not a.runtime_csv and not a.shapes:
        ap.error("name the shapes: --runtime-csv (the runs' losers) or --shapes FILE")
    if a.autotune_picks and not a.runtime_csv:
        ap.error("--autotune-picks reads the --runtime-csv runs")
    runs = [read_run(p, a.build) for p in a.runtime_csv or []]  # each CSV read once
    chosen = read_shapes(a.shapes) if a.shapes else losing_shapes(runs, a.below, timers, a.min_runs)
    shapes = [s for s in chosen if s not in done]
    entries = defaultdict(list)  # (m, n, k, layout) -> the tables' specs, in --table order
    for path in a.table:
        with open(path) as f:
            for e in json.load(f)["entries"]:
                if e["accum"] == "f32" and (a.compiled or e["spec"].startswith("cublaslt ")):
                    entries[(e["m"], e["n"], e["k"], e["layout"])].append(e["spec"])
    ups = runners_up(a.store, shapes, a.top, tuple(a.family or ["cublaslt"]))
    picks = autotune_picks(runs, shapes) if a.autotune_picks else {}
    lines = 0
    for s in shapes:
        for lay in ("nn", "tn"):
            specs = []
            for x in entries.get(s + (lay,), []) + ups.get(s + (lay,), []) + picks.get(s + (lay,), []):
                if x not in specs:
                    specs.append(x)
            for x in specs:
                print(f"{s[0]},{s[1]},{s[2]} {x}")
                lines += 1
    why = f"from {a.shapes}" if a.shapes else f"below {a.below} ({'/'.join(timers)}) in {a.min_runs}+ run(s)"
    print(f"confirm_candidates: {len(shapes)} shape(s) {why}, {lines} (shape, spec) line(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
