#!/usr/bin/env python3
"""Per shape, mode and timer: cuBLASLt auto-tuning (best of NN/TN), the runtime's stream kernel and
the best stream_rows configuration, from the CSVs of bench/stream/stream_rows_call.sh (medians in
us; rows/stream > 1: the stream_rows kernel is slower).

    python3 bench/stream/summarize_rows.py OFFLINE.csv[.gz] SERVER.csv[.gz]
"""
import collections
import csv
import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_rows_sources  # noqa: E402


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def method_of(source_text, layout="tn"):
    """The bench CSV's method column of a free-form fp32 source run as `layout` (tuner/candidate.cpp names it)."""
    key = f"source {fnv1a64(source_text.encode()):016x} {layout} f32"
    return f"k-{fnv1a64(key.encode()):016x}"


def candidate_names():
    """Method column -> a readable name, for every stream_rows configuration."""
    return {method_of(stream_rows_sources.rows_source(*c)): "rows toks={} loads={} warps={} ctas={}".format(*c)
            for c in stream_rows_sources.CONFIGS}


def ok_medians(paths):
    """(m, n, k, mode, timer) -> {method: median us} over the ok rows of eval/bench CSVs."""
    rows = collections.defaultdict(dict)
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                if r["status"] != "ok" or not r["median_us"]:
                    continue
                key = (int(r["m"]), int(r["n"]), int(r["k"]), r["mode"], r["timer"])
                rows[key][r["method"]] = float(r["median_us"])
    return rows


def main():
    names = candidate_names()
    stream = method_of(stream_rows_sources.stream_load_sources.source(*stream_rows_sources.STREAM))
    rows = ok_medians(sys.argv[1:])
    print("shape,mode,timer,autotune_us,stream_us,best_rows_us,best_rows,rows_over_stream")
    for key in sorted(rows, key=lambda k: (k[3], k[4], k[0], k[1], k[2])):
        d = rows[key]
        at = min((v for k, v in d.items() if "autotune" in k), default=float("nan"))
        st = d.get(stream, float("nan"))
        cand = [(v, names[k]) for k, v in d.items() if k in names]
        if not cand:
            continue
        best = min(cand)
        print(f"{key[0]}x{key[1]}x{key[2]},{key[3]},{key[4]},{at:.1f},{st:.1f},{best[0]:.1f},{best[1]},"
              f"{best[0] / st:.2f}")


if __name__ == "__main__":
    sys.exit(main())
