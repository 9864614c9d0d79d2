#!/usr/bin/env python3
"""Baseline times measured inside an evaluation job (beside untrusted candidates) against the
same baselines measured by `cudal2 bench`: offline, graph timer, per shape and method.
    python3 bench/compare_baseline_timings.py JOB.csv BENCH.csv"""
import csv
import math
import sys


def medians(path):
    out = {}
    with open(path) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for r in rows:
            if r["mode"] == "offline" and r["timer"] == "graph" and r["method"].startswith("cublaslt") and r["median_us"]:
                out[(int(r["m"]), int(r["n"]), int(r["k"]), r["method"])] = float(r["median_us"])
    return out


def main():
    job, bench = medians(sys.argv[1]), medians(sys.argv[2])
    keys = sorted(set(job) & set(bench))
    if not keys:
        sys.exit("no common (shape, method) rows")
    print(f"{'shape':<18} {'method':<22} {'in job us':>10} {'bench us':>10} {'job/bench':>10}")
    ratios = []
    for k in keys:
        r = job[k] / bench[k]
        ratios.append(r)
        print(f"{k[0]}x{k[1]}x{k[2]:<8} {k[3]:<22} {job[k]:>10.2f} {bench[k]:>10.2f} {r:>10.3f}")
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geomean job/bench {g:.4f} over {len(ratios)} rows; min {min(ratios):.3f} max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
