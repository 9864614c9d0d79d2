#!/usr/bin/env python3
"""Per grid class: geometric mean of cuBLASLt auto-tuning time / our best time, from the CSV that
`bash bench/wgmma_bench.sh csv TIME_OUTPUT` writes (gzip accepted). Only rows of one accumulator
(--accum, default f32) compete: the baseline accumulates in fp32.

  python3 bench/summarize_wgmma_time.py bench/results/h100/wgmma-pingpong/time-sample.csv.gz
"""
import argparse
import csv
import gzip
import math
from collections import Counter, defaultdict

from summarize_table import shape_class as grid_class  # docs/grids.md, as src/core/roofline.cpp


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--accum", default="f32")
    ap.add_argument("--worst", type=int, default=5)
    a = ap.parse_args()
    opener = gzip.open if a.csv.endswith(".gz") else open
    with opener(a.csv, "rt") as f:
        rows = list(csv.DictReader(f))
    base, best = {}, {}
    for r in rows:
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["status"] == "base":
            base[shape] = float(r["us"])
        elif r["status"] == "ok" and f" {a.accum} " in r["method"]:
            us = float(r["us"])
            if shape not in best or us < best[shape][0]:
                best[shape] = (us, r["method"])
    ratio = {s: base[s] / best[s][0] for s in best if s in base}
    by_class = defaultdict(list)
    for s, x in ratio.items():
        by_class[grid_class(*s)].append(x)
    print(f"{'class':8} {'shapes':>6} {'geomean':>8} {'wins':>5} {'worst':>6} {'best':>6}")
    for c in ("small", "skinny", "medium", "large"):
        xs = by_class.get(c)
        if xs:
            print(f"{c:8} {len(xs):6d} {geomean(xs):8.4f} {sum(x >= 1 for x in xs):5d} {min(xs):6.3f} {max(xs):6.3f}")
    xs = list(ratio.values())
    print(f"{'all':8} {len(xs):6d} {geomean(xs):8.4f} {sum(x >= 1 for x in xs):5d} {min(xs):6.3f} {max(xs):6.3f}")
    print("\nworst shapes (lt/us, our best):")
    for x, s in sorted((x, s) for s, x in ratio.items())[: a.worst]:
        print(f"  {s[0]}x{s[1]}x{s[2]:<8} {x:.3f}  {best[s][1]}")
    print("\nwinning variant per shape:")
    for name, n in Counter(best[s][1].split(" | ")[0] for s in ratio).most_common():
        print(f"  {n:4d}  {name}")


if __name__ == "__main__":
    main()
