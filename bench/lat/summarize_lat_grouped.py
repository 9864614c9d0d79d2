#!/usr/bin/env python3
"""Per shape of a `cudal2 eval --spec-list` CSV (bench/lat/lat_call.sh confirm): cuBLASLt auto-tuning
(best of NN/TN), the shipped runtime (best of runtime-nn/tn) and the best lat candidate, with
ratios to auto-tuning (> 1: faster than auto-tuning), then geometric means per timer.

    python3 bench/lat/summarize_lat_grouped.py CSV.gz
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import best_of_layouts, gmean, load  # noqa: E402


def main(path):
    rows = load(path)
    by = collections.defaultdict(dict)
    for r in rows:
        if r["status"] != "ok" or not r["median_us"]:
            continue
        m = r["method"]
        if m.startswith("k-") and r["details"]:
            m = (json.loads(r["details"]) or {}).get("spec", m)
        by[(int(r["m"]), int(r["n"]), int(r["k"]), r["timer"])][m] = float(r["median_us"])
    for timer in sorted({k[3] for k in by}):
        print("==", timer)
        ratios = []
        for key, d in sorted(by.items()):
            if key[3] != timer:
                continue
            at = best_of_layouts(d, "cublaslt-autotune")
            rt = best_of_layouts(d, "runtime")
            lats = {k: v for k, v in d.items() if k.startswith("lat")}
            if not lats or at is None or rt is None:
                continue
            best = min(lats, key=lats.get)
            ratios.append((at / lats[best], at / rt))
            shape = "x".join(map(str, key[:3]))
            print(f"{shape:16s} at {at:7.2f} rt {rt:7.2f} ({at / rt:.3f}) lat {lats[best]:7.2f} ({at / lats[best]:.3f}) {best}")
        if ratios:
            print(f"{timer} n {len(ratios)} lat/at {gmean([a for a, _ in ratios]):.4f} rt/at {gmean([b for _, b in ratios]):.4f}"
                  f" best-of {gmean([max(a, b) for a, b in ratios]):.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
