#!/usr/bin/env python3
"""The shapes where a family of ours ran ahead of cuBLASLt auto-tuning in earlier confirmation jobs:
one "M,N,K" line per shape, for bench/runtime/confirm_candidates.py --shapes.

A (shape, layout) counts when one of the family's specs measured at least --margin times faster than
the best auto-tuning baseline of the same job (offline, graph timer, fp32 accumulation). Used to carry
one GPU's lat winners to another: the H100's lat confirmations (bench/results/h100/lat/confirm*-store)
name the small shapes worth confirming lat on the H200 (bench/results/h200/transfer/ store7).

  python3 bench/lat/lat_winner_shapes.py --store bench/results/h100/lat/confirm1-store \\
      --store bench/results/h100/lat/confirm2-store --store bench/results/h100/lat/confirm3-store > shapes.txt
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import store_csv  # noqa: E402


def best_ratios(store_dirs, family):
    """(m, n, k, layout) -> the best ratio auto-tuning time / family time over the stores' jobs."""
    best = {}
    for d in store_dirs:
        with store_csv.open_csv(os.path.join(d, "specs.csv")) as f:
            ours = {r["hash"] for r in csv.DictReader(f) if r["family"] == family}
        with store_csv.open_csv(os.path.join(d, "measurements.csv")) as f:
            for r in csv.DictReader(f):
                if r["spec_hash"] not in ours or r["status"] != "ok" or r["timer"] != "graph" \
                        or r["mode"] != "offline" or r["dtype"] != "f32" or not r["median_us"]:
                    continue
                base = json.loads(r["baseline_json"] or "{}")
                auto = [base[x]["offline"]["graph"]["median"] for x in ("cublaslt-autotune-nn", "cublaslt-autotune-tn")
                        if x in base]
                if not auto:
                    continue
                key = (int(r["m"]), int(r["n"]), int(r["k"]), r["layout"])
                best[key] = max(best.get(key, 0.0), min(auto) / float(r["median_us"]))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", action="append", required=True, help="store CSV folder (repeatable)")
    ap.add_argument("--family", default="lat")
    ap.add_argument("--margin", type=float, default=1.03, help="auto-tuning time / ours at least this (1.03)")
    a = ap.parse_args()
    best = best_ratios(a.store, a.family)
    shapes = sorted({k[:3] for k, v in best.items() if v >= a.margin})
    for s in shapes:
        print(f"{s[0]},{s[1]},{s[2]}")
    print(f"lat_winner_shapes: {len(shapes)} shape(s), {sum(v >= a.margin for v in best.values())} of "
          f"{len(best)} (shape, layout) entries at >= {a.margin} of auto-tuning", file=sys.stderr)


if __name__ == "__main__":
    main()
