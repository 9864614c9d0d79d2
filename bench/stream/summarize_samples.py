#!/usr/bin/env python3
"""Tables from a `cudal2 bench --samples-csv` file (every sample in the order taken, with the method
sampled just before it).

    python3 bench/stream/summarize_samples.py SAMPLES.csv[.gz]
        per mode and timer, per shape: each method's median (us), cuBLASLt auto-tuning's (the
        better of NN and TN) over it, and p90/p10 of its samples; geometric means of the ratio.
    python3 bench/stream/summarize_samples.py --by-previous METHOD SAMPLES.csv[.gz]
        METHOD's samples per shape in the order taken, and their median grouped by the method
        sampled just before each (what the L2 held when its batch started).
"""
import argparse
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_stream import gmean, read  # noqa: E402


def shape_of(r):
    return (int(r["m"]), int(r["n"]), int(r["k"]))


def quantile(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))]


def tables(rows):
    by = defaultdict(list)
    shapes, methods = [], []
    for r in rows:
        s = shape_of(r)
        if s not in shapes:
            shapes.append(s)
        if r["method"] not in methods:
            methods.append(r["method"])
        by[(s, r["mode"], r["timer"], r["method"])].append(float(r["us"]))
    ours = [m for m in methods if not m.startswith("cublaslt-autotune")]
    for mode, timer in sorted({(k[1], k[2]) for k in by}):
        print(f"== {mode} {timer}: median us, auto-tuning (best of NN/TN) / median, (p90/p10)")
        print(f"{'shape':<16}{'MB':>5}  " + "".join(f"{m:<26}" for m in ours) + "auto-tuning")
        ratios = defaultdict(list)
        for s in shapes:
            tuned = [statistics.median(by[(s, mode, timer, m)]) for m in methods
                     if m.startswith("cublaslt-autotune") and (s, mode, timer, m) in by]
            if not tuned:
                continue
            best = min(tuned)
            cells = []
            for m in ours:
                v = by.get((s, mode, timer, m))
                if not v:
                    cells.append(f"{'-':<26}")
                    continue
                med = statistics.median(v)
                ratios[m].append(best / med)
                cells.append(f"{med:7.2f} {best / med:.3f} ({quantile(v, 0.9) / quantile(v, 0.1):.2f})".ljust(26))
            print(f"{'x'.join(map(str, s)):<16}{s[1] * s[2] * 2 / 1e6:>5.0f}  " + "".join(cells) + f"{best:.2f}")
        print(f"{'geomean':<23}" + "".join(f"{gmean(ratios[m]):<26.3f}" if ratios[m] else f"{'-':<26}" for m in ours))


def by_previous(rows, method):
    by = defaultdict(list)
    for r in rows:
        if r["method"] == method:
            by[(shape_of(r), r["mode"], r["timer"])].append(r)
    for (s, mode, timer), mine in by.items():
        us = [float(r["us"]) for r in mine]
        print(f"{'x'.join(map(str, s))} {mode} {timer} {method}: median {statistics.median(us):.2f}")
        print("    " + " ".join(f"{u:.1f}" for u in us))
        groups = defaultdict(list)
        for r in mine:
            groups[r["previous"] or "(first)"].append(float(r["us"]))
        for prev, v in sorted(groups.items()):
            print(f"    after {prev:<24} n={len(v):2d} median {statistics.median(v):.2f} "
                  f"min {min(v):.2f} max {max(v):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--by-previous", metavar="METHOD")
    ap.add_argument("samples")
    a = ap.parse_args()
    rows, _ = read(a.samples)
    if a.by_previous:
        by_previous(rows, a.by_previous)
    else:
        tables(rows)


if __name__ == "__main__":
    main()
