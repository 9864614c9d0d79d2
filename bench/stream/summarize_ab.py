#!/usr/bin/env python3
"""Two or three runtime libraries of one `cudal2 bench` run side by side (bench/stream/stream_call.sh
runtime with CUDAL2_RUNTIME_LIB_B/_C), by timer, weight size (fits a 60 MiB L2 or not) and tokens
(1-8, 9-16, more): each method's geometric mean of (better of auto-tuning NN/TN) / method, and
NEW/OLD, the two named methods' time ratio on the shapes where NEW ran a stream kernel, and NEW's
own geometric mean against auto-tuning on those shapes ("NEW where stream").

    python3 bench/stream/summarize_ab.py [--old runtime-b-tn] [--new runtime-c-tn] RUN.csv.gz [...]
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_stream import gmean, read  # noqa: E402


def main():
    args, old, new = sys.argv[1:], "runtime-b-tn", "runtime-c-tn"
    while len(args) >= 2 and args[0] in ("--old", "--new"):
        old, new = (args[1], new) if args[0] == "--old" else (old, args[1])
        args = args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    for path in args:
        cells = defaultdict(dict)
        for r in read(path)[0]:
            if r["status"] != "ok":
                continue
            kernel = json.loads(r["details"]).get("path", "") if r["details"] else ""
            cells[(int(r["m"]), int(r["n"]), int(r["k"]), r["timer"])][r["method"]] = (float(r["median_us"]), kernel)
        groups = defaultdict(lambda: defaultdict(list))
        for (m, n, k, timer), v in cells.items():
            auto = [v[x][0] for x in v if x.startswith("cublaslt-autotune")]
            if not auto:
                continue
            key = (timer, "in L2" if n * k * 2 < 60 * 2**20 else "beyond L2", "1-8" if m <= 8 else "9-16" if m <= 16 else ">16")
            for meth, (us, _) in v.items():
                if meth.startswith("runtime"):
                    groups[key][meth].append(min(auto) / us)
            if old in v and new in v and v[new][1] == "stream":
                groups[key][f"{new}/{old}"].append(v[old][0] / v[new][0])
                groups[key][f"{new} where stream"].append(min(auto) / v[new][0])
        print(f"== {path}")
        for key in sorted(groups):
            cols = "  ".join(f"{m} {gmean(x):.3f} (n {len(x)}, min {min(x):.2f})" for m, x in sorted(groups[key].items()))
            print(f"{key[0]:5} {key[1]:9} {key[2]:4}  {cols}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
