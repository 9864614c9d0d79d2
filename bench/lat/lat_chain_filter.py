#!/usr/bin/env python3
"""Keep a lat entry (or another family's: --family) only where it also wins with an unrelated kernel
between calls.

`lat` launches with programmatic dependent launch and an early trigger, so in back-to-back replays
of one kernel (the graph timer) the next call's CTAs are resident before this one ends. With an
unrelated kernel launched without PDL in between (the chain timer) that overlap is gone. This
script reads a runtime run that timed both (bench/runtime/runtime_small_call.sh: runtime-nn/tn against
cuBLASLt auto-tuning, offline, chain timer), finds each (shape, layout) whose table entry runs a
lat kernel and lost by more than 1% to the best auto-tuning time under the chain timer, and
deletes the lat measurements of that (shape, layout) from the given confirmation stores (copies:
imported with python/cudal2/store_csv.py), so that `cudal2 export` picks the best cuBLASLt candidate
measured in the same job there instead.

  python3 bench/lat/lat_chain_filter.py --runtime-csv runtime-small.csv.xz --table tables/h100-f32.json \
      --store confirm1.db --store confirm2.db --store confirm3.db

Or, to repeat a filtering from its committed log alone, --drop-list reads the (shape, layout) entries
from the "  MxNxK layout ratio" lines of an earlier run's output (e.g.
bench/results/h100/lat/chain_filter.log) instead of --runtime-csv and --table (one mode or the other):

  python3 bench/lat/lat_chain_filter.py --drop-list bench/results/h100/lat/chain_filter.log \
      --store confirm1.db --store confirm2.db --store confirm3.db

--reference runtime-b compares each entry with the entry it replaced (a run that timed the library
before as runtime-b-nn/tn beside the new one) instead of with auto-tuning: a new pick is kept only
where it is not slower chained than what it replaced (bench/results/h200/transfer/ store7, store8:
lat picks 1.4x ahead back to back and 0.72-0.99 of the entry before chained).

--revert removes all of the store's measurements of a listed entry (every family), so that `cudal2
export --confirmed` takes it from the previous confirmation that measured it: the entry as it was
before this store (with --reference: a new job's pick that ran slower chained than the one it replaced).
bench/h200/rebuild_h200_table.sh applies STORE-chain-filter-FAMILY.log and STORE-chain-revert-FAMILY.log.

--timer (repeatable) names the timers an entry must be below in, all of them (default chain): e.g.
--timer graph --timer chain with --reference runtime-b --revert on a run of the table against the
one before the confirmations: the confirmations' picks the bench measured slower than the entry
they replaced back to back and chained (bench/results/h200/transfer/stores-chain-revert-*.log,
applied to every confirmation store).

--family wgmma checks the table's wgmma entries the same way (bench/results/h200/transfer/: the
shallow-K confirmation, whose wgmma picks of 16 MB outputs lost 11-17% under the chain timer).
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import load, store_csv  # noqa: E402


DROP_LINE = re.compile(r"^  (\d+)x(\d+)x(\d+) (nn|tn) (\S+)\s*$")


def read_drop_list(path):
    """The (shape, layout, ratio) entries of an earlier run's "  MxNxK layout ratio" lines."""
    drop = []
    with open(path) as f:
        for line in f:
            mt = DROP_LINE.match(line)
            if mt:
                drop.append(((int(mt[1]), int(mt[2]), int(mt[3])), mt[4], float(mt[5])))
    if not drop:
        sys.exit(f"lat_chain_filter: no '  MxNxK layout ratio' lines in {path}")
    return drop


def drop_from_runtime(runtime_csv, table, below, family="lat", reference=None, timers=("chain",)):
    """The table's entries of `family` (what the runtime runs: a kernel of the table, or on kernel -1
    cuBLASLt's heuristic, family "cublaslt") below `below` of auto-tuning (or of the `reference`
    build) under every one of `timers`, as (shape, layout, ratio of the first timer). Only entries
    the run itself measured: where the run's rows name the spec they ran (the runtime's details), it
    must be the table's."""
    times = defaultdict(dict)  # (shape, timer) -> method -> median
    ran = {}  # (shape, method) -> the spec the runtime ran ("cublaslt": the heuristic)
    for r in load(runtime_csv):
        if r["status"] != "ok" or r["mode"] != "offline" or r["timer"] not in timers:
            continue
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        times[(shape, r["timer"])][r["method"]] = float(r["median_us"])
        try:
            d = json.loads(r.get("details") or "{}")
        except ValueError:
            d = {}
        if "path" in d:
            ran[(shape, r["method"])] = d.get("spec", "") if d["path"] == "table" else "cublaslt"
    with open(table) as f:
        t = json.load(f)
    drop = []
    for e in t["entries"]:
        if e.get("accum", "f32") != "f32":
            continue
        runs = e["run"]["spec"]  # a kernel of the table with its knobs, or "cublaslt" (kernel -1: the heuristic)
        if runs.split()[0] != family:
            continue
        shape, rt = (e["m"], e["n"], e["k"]), "runtime-" + e["layout"]
        if ran.get((shape, rt), runs) != runs:
            continue  # the run measured another entry here (the table changed since)
        ratios = []
        for timer in timers:
            d = times.get((shape, timer), {})
            if reference:  # the entry it replaced: another runtime build of the same run, same layout
                base = d.get(f"{reference}-{e['layout']}")
            else:
                base = min(d.get("cublaslt-autotune-nn", float("inf")), d.get("cublaslt-autotune-tn", float("inf")))
            if rt in d and base not in (None, float("inf")):
                ratios.append(base / d[rt])
        if len(ratios) == len(timers) and max(ratios) < below:
            drop.append((shape, e["layout"], ratios[0]))
    return drop


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime-csv", help="runtime run with chain-timer rows (needs --table)")
    ap.add_argument("--table", help="the table whose lat entries are checked (needs --runtime-csv)")
    ap.add_argument("--drop-list", help="instead of --runtime-csv/--table: an earlier run's output "
                    "(its '  MxNxK layout ratio' lines are the entries to drop)")
    ap.add_argument("--store", action="append", required=True)
    ap.add_argument("--below", type=float, default=0.99)
    ap.add_argument("--family", default="lat", help="the family whose measurements are removed (lat, lat_staged)")
    ap.add_argument("--reference", default=None,
                    help="compare with this runtime build of the run (e.g. runtime-b: the library before the new "
                         "entries) instead of auto-tuning: drop where the entry is below --below of the one it replaced")
    ap.add_argument("--timer", action="append", default=None,
                    help="the timer(s) an entry must be below in (repeatable: below in every one; default chain)")
    ap.add_argument("--revert", action="store_true",
                    help="remove every measurement of the listed entries from the store, not only the family's: "
                         "the export then takes them from the confirmation before it (the entry they replaced)")
    a = ap.parse_args()
    if a.drop_list is not None:
        if a.runtime_csv is not None or a.table is not None:
            ap.error("--drop-list replaces --runtime-csv and --table: give one mode or the other")
        drop = read_drop_list(a.drop_list)
    else:
        if a.runtime_csv is None or a.table is None:
            ap.error("give --runtime-csv and --table, or --drop-list")
        drop = drop_from_runtime(a.runtime_csv, a.table, a.below, a.family, a.reference, tuple(a.timer or ["chain"]))
    what = "" if a.revert else f"{a.family} "
    for path in a.store:
        n = store_csv.drop_family_measurements(path, None if a.revert else a.family,
                                               [(m, nn, k, layout) for (m, nn, k), layout, _ in drop])
        print(f"{path}: {n} {what}measurement(s) removed")
    against = f"of {a.reference}" if a.reference else "of auto-tuning"
    timers = "+".join(a.timer or ["chain"])
    print(f"{len(drop)} {a.family} entries lost under the {timers} timer (below {a.below} {against}):")
    for (m, nn, k), layout, ratio in sorted(drop, key=lambda x: x[2]):
        print(f"  {m}x{nn}x{k} {layout} {ratio:.3f}")


if __name__ == "__main__":
    main()
