#!/usr/bin/env python3
"""Per shape, mode and timer: cuBLASLt auto-tuning (best of NN/TN) and every free-form variant of
bench/stream/stream_load_sources.py that a run of bench/stream/stream_rows_call.sh measured
(GEN="bench/stream/stream_load_sources.py [--mid]"), as one CSV row (medians in us; empty: no ok
result), with a read-ceiling CSV's column beside when given (offline rows: warm, server: cold).

    python3 bench/stream/summarize_sources.py [--ceiling CEILING.csv] RUN.csv[.gz] [RUN.csv[.gz] ...]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_load_sources as sources  # noqa: E402
from summarize_rows import method_of, ok_medians  # noqa: E402


def variant_names():
    """Method column -> variant name, for every source stream_load_sources.py writes."""
    out = {}
    for name, load, order in sources.VARIANTS:
        out[method_of(sources.source(name, load, order))] = f"{name}-load{load}-order{order}"
    for name, waves, l2 in sources.VARIANTS_MID:
        out[method_of(sources.source(name, 0, 0, waves, l2))] = f"{name}-waves{waves}-l2whole{l2}"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ceiling")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    names = variant_names()
    ceiling = {}
    if a.ceiling:
        with open(a.ceiling) as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                ceiling[(int(r["m"]), int(r["n"]), int(r["k"]))] = (float(r["warm_us"]), float(r["cold_us"]))
    rows = ok_medians(a.runs)
    seen = {m for d in rows.values() for m in d if m in names}
    cols = [m for m in names if m in seen]
    w = csv.writer(sys.stdout)
    w.writerow(["m", "n", "k", "mode", "timer", "ceiling_us", "autotune_us"] + [names[m] for m in cols])
    for key in sorted(rows, key=lambda k: (k[3], k[4], k[1] * k[2], k[0])):
        d = rows[key]
        at = min((v for k, v in d.items() if "autotune" in k), default=None)
        c = ceiling.get(key[:3])
        ceil_us = "" if c is None else (c[1] if key[3] == "server" else c[0])
        w.writerow(list(key) + [ceil_us, "" if at is None else round(at, 2)] +
                   ["" if m not in d else round(d[m], 2) for m in cols])


if __name__ == "__main__":
    sys.exit(main())
