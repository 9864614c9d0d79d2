#!/usr/bin/env python3
"""The sweep band above 8 tokens (src/runtime/stream_rule.hpp) in `cudal2 bench` runs of
bench/stream/stream_call.sh runtime with runtime-tn (the library) and runtime-b-tn (the same library
with CUDAL2_STREAM_SWEEP_MAX_M=0, the path before the band) beside auto-tuning NN/TN: per shape and
timer both against the better of auto-tuning NN/TN (> 1: faster), then geometric means by part of
the band (9-16 tokens with aligned rows; odd output rows at 9-16 and at 17-64 tokens).

    python3 bench/stream/summarize_tokens.py RUN.csv[.gz] [RUN.csv[.gz] ...]
"""
import argparse
import collections
import csv
import gzip
import json
import math
import sys


def part(m, n):
    if m <= 8:
        return "1-8 tokens"
    return ("odd rows" if n % 8 else "aligned rows") + (", 9-16 tokens" if m <= 16 else ", 17-64 tokens")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["run", "shape", "mode", "timer", "autotune_us", "runtime_us", "before_us", "runtime_vs_autotune",
                "before_vs_autotune", "spec"])
    means = collections.defaultdict(list)
    for run in a.runs:
        opener = gzip.open if run.endswith(".gz") else open
        with opener(run, "rt") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r["status"] == "ok"]
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
    print("part, mode, timer, run: shapes, runtime vs auto-tuning geomean (min), before (min)")
    for key, v in sorted(means.items()):
        gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
        new, old = [x[0] for x in v], [x[1] for x in v]
        print(f"{', '.join(key)}: {len(v)}, {gm(new):.3f} ({min(new):.3f}), {gm(old):.3f} ({min(old):.3f})")


if __name__ == "__main__":
    sys.exit(main())
