#!/usr/bin/env python3
"""Pick a portfolio of specs from tuning stores: each shape's `top` fastest specs of each family
(offline, graph timer, status ok), deduplicated, printed one spec text per line.

Usage: python3 bench/cublaslt/portfolio.py STORE[,STORE...] [--top N] [--families mma,tiny] [--shapes FILE]
STORE: a SQLite store, or a directory holding its CSV export (python/cudal2/store_csv.py).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import best_spec_times  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("dbs")
ap.add_argument("--top", type=int, default=2)
ap.add_argument("--families", default="")
ap.add_argument("--shapes", default="", help="only these shapes (M,N,K per line)")
a = ap.parse_args()
fams = set(a.families.split(",")) if a.families else None
only = None
if a.shapes:
    only = {tuple(int(x) for x in l.split(",")) for l in open(a.shapes) if l.strip() and not l.startswith("#")}
out = []
for path in a.dbs.split(","):
    rows = best_spec_times(path)  # a store file or its CSV export, schema checked
    best = {}
    for fam, text, m, n, k, layout, us in rows:
        if (fams and fam not in fams) or (only and (m, n, k) not in only):
            continue
        best.setdefault((fam, m, n, k), []).append((us, text))
    for key in sorted(best):
        for us, text in sorted(best[key])[: a.top]:
            if text not in out:
                out.append(text)
print("\n".join(out))
