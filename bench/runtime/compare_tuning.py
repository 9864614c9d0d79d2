#!/usr/bin/env python3
"""The runtime's tuning of cuBLASLt plans, one layout at a time, from `cudal2 bench` runs that put
several builds or settings of the library in one process (runtime-*, runtime-b-*, runtime-c-*:
CUDAL2_RUNTIME_LIB_B/_C and CUDAL2_RUNTIME_ENV_B/_C, bench/results/h200/tuning/graphs/). For every
shape and layout whose plan the first slot tunes (its details' path is `cublaslt`) and whose
untuned call takes under --max-us: each slot's time over the untuned slot's, then the geometric
mean over shape-layouts (several runs of the same shapes: the geometric mean of their ratios
first), and how many are below 0.97. Above 1: the slot is faster than no tuning.

  python3 bench/runtime/compare_tuning.py RUN.csv.gz... --untuned runtime-b [--timer graph] [--mode offline] [--max-us 100]
"""
import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean, load, times  # noqa: E402

SLOTS = ("runtime", "runtime-b", "runtime-c", "cublaslt-autotune")


def per_slot(paths, untuned, timer="graph", max_us=100.0, mode="offline"):
    """slot -> the per-shape-layout ratios (untuned time / the slot's; the geometric mean over the
    runs of a shape-layout), over the shape-layouts the first slot tunes."""
    ratios = defaultdict(lambda: defaultdict(list))  # (m, n, k, layout) -> slot -> ratios over runs
    for path in paths:
        rows = load(path)
        tuned = {(int(r["m"]), int(r["n"]), int(r["k"]), r["method"][-2:]) for r in rows
                 if r["method"] in ("runtime-nn", "runtime-tn") and r["mode"] == mode and r["timer"] == timer
                 and json.loads(r["details"] or "{}").get("path") == "cublaslt"}
        for (m, n, k), ms in times(rows, mode, timer).items():
            for lay in ("nn", "tn"):
                base = ms.get(f"{untuned}-{lay}")
                if (m, n, k, lay) not in tuned or f"runtime-{lay}" not in ms or not base or base > max_us:
                    continue
                for slot in SLOTS:
                    if slot != untuned and f"{slot}-{lay}" in ms:
                        ratios[(m, n, k, lay)][slot].append(base / ms[f"{slot}-{lay}"])
    out = defaultdict(list)
    for by_slot in ratios.values():
        for slot, v in by_slot.items():
            out[slot].append(gmean(v))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--untuned", required=True, help="the slot without tuning, e.g. runtime-b")
    ap.add_argument("--timer", default="graph")
    ap.add_argument("--mode", default="offline")
    ap.add_argument("--max-us", type=float, default=100.0)
    a = ap.parse_args()
    slots = per_slot(a.csv, a.untuned, a.timer, a.max_us, a.mode)
    if not slots:
        sys.exit("compare_tuning: no shape-layout the first slot tunes (path cublaslt) in these runs")
    n = max(len(v) for v in slots.values())
    print(f"{a.timer}: {n} shape-layouts on the tuned path (untuned call under {a.max_us:g} us), "
          f"time of {a.untuned} over each slot's:")
    for slot, v in slots.items():
        print(f"  {slot:18s} {gmean(v):.4f}  below 0.97: {sum(x < 0.97 for x in v)}")


if __name__ == "__main__":
    main()
