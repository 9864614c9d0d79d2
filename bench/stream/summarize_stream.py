#!/usr/bin/env python3
"""The bandwidth-bound summary of `cudal2 bench` runs of the runtime beside cuBLASLt auto-tuning
(bench/stream/stream_call.sh runtime): one row per shape, runtime layout, mode and timer, the
runtime against the better of auto-tuning NN and TN in the same process, and the shape's read
limit as the run measured it; then geometric means by class.

    python3 bench/stream/summarize_stream.py [--runtime NAME] [--shapes FILE] OUT.csv RUN.csv[.gz] [RUN.csv[.gz] ...]

--runtime: the runtime's methods are NAME-nn and NAME-tn (default runtime; runtime-b for the
library in the bench's second slot, CUDAL2_RUNTIME_LIB_B).
--shapes: only the shapes of this shapes file (e.g. the held-out set of a run that measured more).

Classes (issue targets, docs/kernels-stream.md): decode (M <= 64, B >= 16 MB), in the runtime's
stream class (TN, M <= 16, B >= the GPU's L2 and one wave of resident CTAs, from the run's header),
mid (65 <= M <= 256, B >= 32 MB), few-tile long-K (M*N <= 256^2, K >= 4096).
"""
import csv
import gzip
import math
import re
import sys
from collections import defaultdict

COLUMNS = ["m", "n", "k", "layout", "mode", "timer", "runtime_us", "autotune_us", "vs_autotune", "limit_us",
           "pct_of_limit"]


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    header = [l for l in lines if l.startswith("#")]
    l2, sms = 0.0, 132
    for h in header:
        mm = re.search(r"l2_mb=(\d+)", h)
        if mm:
            l2 = float(mm.group(1)) * 1e6
        mm = re.search(r"sms=(\d+)", h)
        if mm:
            sms = int(mm.group(1))
    return list(csv.DictReader(l for l in lines if not l.startswith("#"))), (l2, sms)


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def classes(m, n, k, layout, gpu):
    l2, sms = gpu
    b = 2.0 * n * k
    out = []
    if m <= 64 and b >= 16e6:
        out.append("decode")
    # src/runtime/stream_rule.hpp: one wave of resident CTAs (64-row tiles at two CTAs an SM for 8
    # tokens, 32-row tiles at four for 16: 20480-row weights fall out)
    if layout == "tn" and m <= 16 and b >= l2 and -(-n // 64) <= 2 * sms:
        out.append("stream-class")
    if 65 <= m <= 256 and b >= 32e6:
        out.append("mid")
    if m * n <= 256 * 256 and k >= 4096:
        out.append("few-tile-long-k")
    return out


def main():
    args = sys.argv[1:]
    runtime, only = "runtime", None
    while len(args) >= 2 and args[0] in ("--runtime", "--shapes"):
        if args[0] == "--runtime":
            runtime = args[1]
        else:
            only = set()
            with open(args[1]) as f:
                for line in f:
                    line = line.split("#")[0].strip()
                    if line:
                        only.add(tuple(int(x) for x in line.replace("x", ",").split(",")[:3]))
        args = args[2:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows, by_class = [], defaultdict(list)
    for path in args[1:]:
        data, gpu = read(path)
        cell = defaultdict(dict)
        for r in data:
            if r["status"] != "ok" or not r["median_us"]:
                continue
            key = (int(r["m"]), int(r["n"]), int(r["k"]), r["mode"], r["timer"])
            if only is not None and key[:3] not in only:
                continue
            cell[key][r["method"]] = (float(r["median_us"]), r.get("limit_us", ""))
        for (m, n, k, mode, timer), meth in sorted(cell.items()):
            auto = [meth[x][0] for x in ("cublaslt-autotune-nn", "cublaslt-autotune-tn") if x in meth]
            if not auto:
                continue
            for layout in ("nn", "tn"):
                name = f"{runtime}-{layout}"
                if name not in meth:
                    continue
                us, lim = meth[name]
                ratio = min(auto) / us
                lim_us = float(lim) if lim else 0.0
                rows.append([m, n, k, layout, mode, timer, f"{us:.4g}", f"{min(auto):.4g}", f"{ratio:.4f}",
                             f"{lim_us:.4g}" if lim_us else "", f"{100 * lim_us / us:.1f}" if lim_us else ""])
                for c in classes(m, n, k, layout, gpu):
                    by_class[(c, layout, mode, timer)].append(ratio)
    with open(args[0], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{'class':16} {'layout':6} {'mode':8} {'timer':6} {'shapes':>6} {'geomean':>8} {'min':>7}")
    for (c, layout, mode, timer), v in sorted(by_class.items()):
        print(f"{c:16} {layout:6} {mode:8} {timer:6} {len(v):6d} {gmean(v):8.3f} {min(v):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
