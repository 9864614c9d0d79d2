#!/usr/bin/env python3
"""A/B table of the wgmma split-K reduction from one `bench/wgmma/wgmma_bench.sh time` output whose
artifacts built from the previous header carry " OLD" in their description (see
bench/results/h100/wgmma-splitk/README.md). Per grid class: geomean of cuBLASLt auto-tuning's time
over the old split-K (splits=auto), over the new split-K (auto or 16) and over our best variant.
Usage: summarize_splitk_ab.py TIME.txt [per-shape.csv]"""
import os
import csv
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean, shape_class  # noqa: E402


def read(path):
    """cuBLASLt auto-tuning's fastest time per shape, and [(method, us)] of ours per shape."""
    lt, ours = {}, defaultdict(list)
    for line in open(path):
        f = line.split()
        if len(f) < 6 or f[0] == "shape":
            continue
        if f[-3] == "base":
            lt[f[0]] = min(lt.get(f[0], 1e9), float(f[-2]))
        elif f[-5] == "ok":
            ours[f[0]].append((" ".join(f[1:-5]), float(f[-3])))
    return lt, ours


def main():
    lt, ours = read(sys.argv[1])
    out = []
    for sh, rs in ours.items():
        m, n, k = map(int, sh.split("x"))
        old = min(u for nm, u in rs if "OLD" in nm)
        new = min(u for nm, u in rs if "OLD" not in nm and (" pA" in nm or " p16" in nm))
        best = min((u, nm) for nm, u in rs if "OLD" not in nm)
        out.append(dict(m=m, n=n, k=k, cls=shape_class(m, n, k), lt=lt[sh], old_splitk=old, new_splitk=new, best=best[0],
                        best_spec=best[1], r_old=lt[sh] / old, r_new=lt[sh] / new, r_best=lt[sh] / best[0]))
    for c in ["skinny", "medium", "large", "all"]:
        s = [o for o in out if c == "all" or o["cls"] == c]
        if not s:
            continue
        print("%-7s %3d shapes: old split-K %.3f  new split-K %.3f (x%.2f)  best new %.3f  "
              "new split-K faster than old on %d, >=1.00 vs lt: %d"
              % (c, len(s), gmean([o["r_old"] for o in s]), gmean([o["r_new"] for o in s]),
                 gmean([o["old_splitk"] / o["new_splitk"] for o in s]), gmean([o["r_best"] for o in s]),
                 sum(o["new_splitk"] < o["old_splitk"] for o in s), sum(o["r_best"] >= 1 for o in s)))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(out[0].keys()))
            w.writeheader()
            for o in sorted(out, key=lambda o: o["r_best"]):
                w.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in o.items()})


if __name__ == "__main__":
    main()
