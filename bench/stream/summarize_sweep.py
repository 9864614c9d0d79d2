#!/usr/bin/env python3
"""Per shape, mode and timer: cuBLASLt auto-tuning (best of NN/TN), the runtime's stream kernel
and every stream_sweep configuration that a run of bench/stream/stream_rows_call.sh measured
(GEN=bench/stream/stream_sweep_sources.py), as one CSV row (medians in us; empty: no ok result),
with the best configuration's ratio to auto-tuning (> 1: faster).

    python3 bench/stream/summarize_sweep.py [--set k-split|warp-rows|wide-rows|odd-rows|nn] RUN.csv[.gz] [RUN.csv[.gz] ...]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_load_sources  # noqa: E402
import stream_sweep_sources as sweep  # noqa: E402
from summarize_rows import method_of, ok_medians  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=sorted(sweep.SETS), default="k-split", help="the generator's configurations")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    names = {method_of(sweep.sweep_source(*c), "nn" if a.set == "nn" else "tn"): sweep.name(*c)
             for c in sweep.SETS[a.set]}
    stream = method_of(stream_load_sources.source(*sweep.STREAM))
    rows = ok_medians(a.runs)
    cols = [names[m] for m in names]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["shape", "mode", "timer", "autotune_us", "stream_us", *cols, "best", "best_vs_autotune"])
    for (m, n, k, mode, timer), by in sorted(rows.items(), key=lambda kv: (kv[0][3], kv[0][4], kv[0][:3])):
        shape = f"{m}x{n}x{k}"
        at = min((by[m] for m in ("cublaslt-autotune-nn", "cublaslt-autotune-tn") if m in by), default=None)
        mine = {names[m]: v for m, v in by.items() if m in names}
        best = min(mine, key=mine.get) if mine else ""
        fmt = lambda v: f"{v:.2f}" if v is not None else ""  # noqa: E731
        w.writerow([shape, mode, timer, fmt(at), fmt(by.get(stream)), *[fmt(mine.get(c)) for c in cols], best,
                    f"{at / mine[best]:.3f}" if best and at else ""])


if __name__ == "__main__":
    sys.exit(main())
