#!/usr/bin/env python3
"""How far a decode GEMM can go: `cudal2 read-ceiling` (the read kernel over exactly a shape's
weight bytes, one launch: back to back `warm_us`, after an L2 flush and an idle gap `cold_us`)
beside a `cudal2 bench` run of the runtime and cuBLASLt auto-tuning on the same shapes
(bench/stream/stream_call.sh ceiling / runtime). Per shape, layout, mode and timer: the ceiling
that mode's timer compares with (offline: warm, server: cold), auto-tuning's and the runtime's
share of it, and the most any kernel that must read the weights could gain on auto-tuning
(`autotune_us / ceiling_us`: a GEMM at the speed of a pure read); then geometric means by class
(summarize_stream.py's classes).

    python3 bench/stream/summarize_ceiling.py CEILING.csv OUT.csv RUN.csv[.gz] [RUN.csv[.gz] ...]
"""
import csv
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_stream import classes, gmean, read  # noqa: E402

COLUMNS = ["m", "n", "k", "layout", "mode", "timer", "weight_mb", "ceiling_us", "runtime_us", "autotune_us",
           "runtime_pct_of_ceiling", "autotune_pct_of_ceiling", "attainable_vs_autotune"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ceiling = {}
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(l for l in f if not l.startswith("#")):
            ceiling[(int(r["m"]), int(r["n"]), int(r["k"]))] = (float(r["warm_us"]), float(r["cold_us"]))
    times = defaultdict(dict)
    gpu = (0.0, 132)
    for path in sys.argv[3:]:
        rows, gpu = read(path)
        for r in rows:
            if r["status"] != "ok" or not r["median_us"]:
                continue
            key = (int(r["m"]), int(r["n"]), int(r["k"]), r["mode"], r["timer"])
            times[key][r["method"]] = float(r["median_us"])
    out, by_class = [], defaultdict(list)
    for (m, n, k, mode, timer), t in sorted(times.items()):
        if (m, n, k) not in ceiling:
            continue
        at = min((v for meth, v in t.items() if meth.startswith("cublaslt-autotune")), default=None)
        if at is None:
            continue
        warm, cold = ceiling[(m, n, k)]
        ceil_us = cold if mode == "server" else warm
        for layout in ("nn", "tn"):
            rt = t.get(f"runtime-{layout}")
            if rt is None:
                continue
            row = [m, n, k, layout, mode, timer, round(2 * n * k / 1e6, 1), ceil_us, rt, at,
                   round(100 * ceil_us / rt, 1), round(100 * ceil_us / at, 1), round(at / ceil_us, 3)]
            out.append(row)
            for c in classes(m, n, k, layout, gpu):
                by_class[(c, layout, mode, timer)].append(row)
    with open(sys.argv[2], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(out)
    print(f"{'class':16} {'layout':6} {'mode':8} {'timer':6} {'shapes':>6} {'rt %ceil':>9} {'lt %ceil':>9} "
          f"{'attainable':>10} {'runtime/lt':>10}")
    for (c, layout, mode, timer), rows in sorted(by_class.items()):
        rt = gmean([r[10] for r in rows])
        lt = gmean([r[11] for r in rows])
        att = gmean([r[12] for r in rows])
        vs = gmean([r[9] / r[8] for r in rows])
        print(f"{c:16} {layout:6} {mode:8} {timer:6} {len(rows):6d} {rt:9.1f} {lt:9.1f} {att:10.3f} {vs:10.3f}")


if __name__ == "__main__":
    sys.exit(main())
