#!/usr/bin/env python3
"""Two builds of libcudal2_runtime (two tables) against each other, from one `cudal2 bench` run that
measured both (methods runtime-nn/tn and runtime-b-nn/tn, or runtime-c-*: CUDAL2_RUNTIME_LIB_B/_C,
bench/runtime/runtime_vs_cublaslt.sh). Per shape: ratio = best of the reference's NN/TN / best of the
candidate's NN/TN (> 1: the candidate is faster), both timed in the same process on the same
inputs; then the geometric mean by class, the worst shapes and how many are below 0.98 and 0.99.
A shape where either build failed or was not measured (a run cut short) is left out and counted.

  python3 bench/runtime/compare_tables.py RUN.csv[.gz]... --candidate runtime-b --reference runtime-c \\
      [--mode offline] [--timer graph] [--csv OUT.csv]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import CLASSES, gmean, load, shape_class, times, write_rows  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--candidate", required=True, help="method prefix, e.g. runtime-b")
    ap.add_argument("--reference", required=True, help="method prefix, e.g. runtime-c")
    ap.add_argument("--mode", default="offline")
    ap.add_argument("--timer", default="graph")
    ap.add_argument("--csv", dest="out", help="per-shape ratios")
    a = ap.parse_args()
    t = times([r for p in a.csv for r in load(p)], a.mode, a.timer)  # (m, n, k) -> method -> us, ok rows only
    out, skipped = [], 0
    for s, m in sorted(t.items()):
        best = {}
        for side in (a.candidate, a.reference):
            v = [m.get(f"{side}-{lay}") for lay in ("nn", "tn")]
            best[side] = min(v) if all(x is not None for x in v) else None
        if best[a.candidate] is None or best[a.reference] is None:
            skipped += 1
            continue
        out.append({"m": s[0], "n": s[1], "k": s[2], "class": shape_class(*s), "candidate_us": best[a.candidate],
                    "reference_us": best[a.reference], "ratio": best[a.reference] / best[a.candidate]})
    if not out:
        raise SystemExit(f"no shape with both {a.candidate}-nn/tn and {a.reference}-nn/tn measured")
    if a.out:
        write_rows(a.out, out)
    by = {c: [o["ratio"] for o in out if o["class"] == c] for c in CLASSES}
    print(f"{a.mode} {a.timer}: {a.candidate} vs {a.reference} (reference time / candidate time) on {len(out)} shapes"
          f" ({skipped} left out): all {gmean([o['ratio'] for o in out]):.4f} "
          + " ".join(f"{c} {gmean(by[c]):.4f}({len(by[c])})" for c in CLASSES)
          + f"  below 0.98: {sum(o['ratio'] < 0.98 for o in out)}  below 0.99: {sum(o['ratio'] < 0.99 for o in out)}")
    for o in sorted(out, key=lambda o: o["ratio"])[:5]:
        print(f"  worst {o['m']}x{o['n']}x{o['k']} ({o['class']}): {o['ratio']:.3f}"
              f" ({o['candidate_us']:.2f} us vs {o['reference_us']:.2f} us)")


if __name__ == "__main__":
    main()
