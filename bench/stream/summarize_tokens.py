#!/usr/bin/env python3
"""Two runtime slots of `cudal2 bench` runs (bench/stream/stream_call.sh runtime): runtime-tn (the
library) and runtime-b-tn (the same library with another environment, e.g.
CUDAL2_STREAM_SWEEP_MAX_M=0 for the path before the sweep band above 8 tokens, or CUDAL2_STREAM=0
for the padded C on every odd width) beside auto-tuning NN/TN: per shape and timer both against
the better of auto-tuning NN/TN (> 1: faster), then geometric means by aligned or odd output rows
(N % 8) and tokens (1-8, 9-16, 17-64, more).

    python3 bench/stream/summarize_tokens.py RUN.csv[.gz] [RUN.csv[.gz] ...]
"""
import argparse
import collections
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_stream import gmean, read  # noqa: E402


def part(m, n):
    tokens = "1-8" if m <= 8 else "9-16" if m <= 16 else "17-64" if m <= 64 else "65+"
    return ("odd rows" if n % 8 else "aligned rows") + f", {tokens} tokens"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["run", "shape", "mode", "timer", "autotune_us", "runtime_us", "runtime_b_us", "runtime_vs_autotune",
                "runtime_b_vs_autotune", "spec"])
    means = collections.defaultdict(list)
    for run in a.runs:
        rows = [r for r in read(run)[0] if r["status"] == "ok"]
        by = collections.defaultdict(dict)
        for r in rows:
            by[(int(r["m"]), int(r["n"]), int(r["k"]), r["mode"], r["timer"])][r["method"]] = r
        for (m, n, k, mode, timer), v in sorted(by.items()):
            ats = [float(r["median_us"]) for name, r in v.items() if name.startswith("cublaslt-autotune")]
            if not ats or "runtime-tn" not in v or "runtime-b-tn" not in v:
                continue
            at, new, old = min(ats), float(v["runtime-tn"]["median_us"]), float(v["runtime-b-tn"]["median_us"])
            spec = json.loads(v["runtime-tn"]["details"] or "{}").get("spec", "")
            w.writerow([run.split("/")[-1], f"{m}x{n}x{k}", mode, timer, f"{at:.3f}", f"{new:.3f}", f"{old:.3f}",
                        f"{at / new:.3f}", f"{at / old:.3f}", spec])
            means[(part(m, n), mode, timer, run.split("/")[-1])].append((at / new, at / old))
    print()
    print("part, mode, timer, run: shapes, runtime vs auto-tuning geomean (min), runtime-b (min)")
    for key, v in sorted(means.items()):
        new, old = [x[0] for x in v], [x[1] for x in v]
        print(f"{', '.join(key)}: {len(v)}, {gmean(new):.3f} ({min(new):.3f}), {gmean(old):.3f} ({min(old):.3f})")


if __name__ == "__main__":
    sys.exit(main())
