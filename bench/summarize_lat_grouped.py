#!/usr/bin/env python3
"""Per shape of a `cudal2 eval --spec-list` CSV (bench/lat_call.sh confirm): cuBLASLt auto-tuning
(best of NN/TN), the shipped runtime (best of runtime-nn/tn) and the best lat candidate, with
ratios to auto-tuning (> 1: faster than auto-tuning), then geometric means per timer.

    python3 bench/summarize_lat_grouped.py CSV.gz
"""
import collections
import csv
import gzip
import json
import math
import sys


def main(path):
    rows = [r for r in csv.DictReader(l for l in gzip.open(path, "rt") if not l.startswith("#"))]
    by = collections.defaultdict(dict)
    for r in rows:
        if r["status"] != "ok" or not r["median_us"]:
            continue
        m = r["method"]
        if m.startswith("k-") and r["details"]:
            m = (json.loads(r["details"]) or {}).get("spec", m)
        by[(int(r["m"]), int(r["n"]), int(r["k"]), r["timer"])][m] = float(r["median_us"])
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    for timer in sorted({k[3] for k in by}):
        print("==", timer)
        ratios = []
        for key, d in sorted(by.items()):
            if key[3] != timer:
                continue
            at = min(d.get("cublaslt-autotune-nn", 1e9), d.get("cublaslt-autotune-tn", 1e9))
            rt = min(d.get("runtime-nn", 1e9), d.get("runtime-tn", 1e9))
            lats = {k: v for k, v in d.items() if k.startswith("lat")}
            if not lats or at >= 1e9 or rt >= 1e9:
                continue
            best = min(lats, key=lats.get)
            ratios.append((at / lats[best], at / rt))
            shape = "x".join(map(str, key[:3]))
            print(f"{shape:16s} at {at:7.2f} rt {rt:7.2f} ({at / rt:.3f}) lat {lats[best]:7.2f} ({at / lats[best]:.3f}) {best}")
        if ratios:
            print(f"{timer} n {len(ratios)} lat/at {gm([a for a, _ in ratios]):.4f} rt/at {gm([b for _, b in ratios]):.4f}"
                  f" best-of {gm([max(a, b) for a, b in ratios]):.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
