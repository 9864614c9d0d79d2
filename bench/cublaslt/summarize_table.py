#!/usr/bin/env python3
"""Summarize an exported dispatch table (`cudal2 export --out T.json`) against cuBLASLt, per shape:
ratio = min(auto-tuning NN, TN) / what the runtime runs (the table's kernel, or the cuBLASLt-heuristic
fallback where that measured faster), both from the job of the entry's measurement, for the layout
(NN or TN) where that ratio is higher. Prints the geometric mean by shape class, the worst shapes, and writes a CSV.
    python3 bench/cublaslt/summarize_table.py T.json [OUT.csv]"""
import collections
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
# shape_class: the classes of src/core/roofline.cpp (classify), so this summary and the bench's agree
from _analysis import CLASSES, gmean, shape_class  # noqa: E402


def main():
    table = json.load(open(sys.argv[1]))
    by_shape = collections.defaultdict(dict)
    for e in table["entries"]:
        by_shape[(e["m"], e["n"], e["k"])][e["layout"]] = e
    rows = []
    for (m, n, k), lays in sorted(by_shape.items()):
        # Per layout, within that entry's own job (jobs run at different clocks, so times from two
        # jobs are never divided): what the runtime runs there (the entry's kernel, or cuBLASLt's
        # heuristic where that was faster) against the best of auto-tuning NN/TN timed in the same
        # job. Best of NN/TN = the layout with the higher ratio.
        def within(e, prefix):
            ts = [b["us"] for name, b in e["baselines"].items() if name.startswith(prefix)]
            return (min(ts) / e["run"]["us"], min(ts)) if ts else (None, None)
        pick = max(lays.values(), key=lambda e: within(e, "cublaslt-autotune")[0] or 0)
        (r_at, at), (r_heur, heur) = within(pick, "cublaslt-autotune"), within(pick, "cublaslt-heuristic")
        rows.append({"m": m, "n": n, "k": k, "class": shape_class(m, n, k), "layouts": "+".join(sorted(lays)),
                     "table_us": pick["run"]["us"], "autotune_us": at, "heuristic_us": heur,
                     "ratio_autotune": r_at, "ratio_heuristic": r_heur})
    print(f"{table['gpu']}: {len(rows)} shapes; ratio = cuBLASLt baseline / what the runtime runs, same job")
    print(f"{'class':<8} {'shapes':>6} {'vs autotune':>12} {'vs heuristic':>13} {'min vs AT':>10}")
    for c in CLASSES + ["all"]:
        rs = [r for r in rows if c == "all" or r["class"] == c]
        a = [r["ratio_autotune"] for r in rs if r["ratio_autotune"]]
        h = [r["ratio_heuristic"] for r in rs if r["ratio_heuristic"]]
        if rs:
            print(f"{c:<8} {len(rs):>6} {gmean(a):>12.4f} {gmean(h):>13.4f} {min(a):>10.3f}")
    worst = sorted((r for r in rows if r["ratio_autotune"]), key=lambda r: r["ratio_autotune"])[:8]
    print("worst vs auto-tuning:", ", ".join(f"{r['m']}x{r['n']}x{r['k']} {r['ratio_autotune']:.3f}" for r in worst))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
