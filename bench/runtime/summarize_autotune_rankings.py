#!/usr/bin/env python3
"""What ranking cuBLASLt auto-tuning's candidates twice changed (src/baselines/cublaslt.cpp,
docs/measuring.md): for every auto-tuning row of `cudal2 bench` CSVs that carries both rankings
(details `first_ranking_index`/`first_ranking_us` beside `chosen_index`/`candidate_us`), whether the
first ranking alone would have kept another algorithm, and what that algorithm costs by the second
ranking's times (its time over the kept one's: 1.00 = nothing lost).

    python3 bench/runtime/summarize_autotune_rankings.py RUN.csv[.gz|.xz] [RUN.csv[.gz|.xz] ...]
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import load  # noqa: E402  (.csv, .csv.gz or .csv.xz)


def rankings(paths):
    """One entry per (shape, method): (shape text, method, first pick, kept pick, cost of the first pick)."""
    seen = set()
    for path in paths:
        for r in load(path):
            if "autotune" not in r["method"] or not r.get("details"):
                continue
            key = (r["m"], r["n"], r["k"], r["method"])
            if key in seen:
                continue
            d = json.loads(r["details"])
            if "first_ranking_index" not in d:
                continue
            seen.add(key)
            first, kept, times = d["first_ranking_index"], d["chosen_index"], d["candidate_us"]
            cost = times[first] / times[kept] if times[first] > 0 and times[kept] > 0 else float("nan")
            yield f"{r['m']}x{r['n']}x{r['k']}", r["method"], first, kept, cost


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = list(rankings(argv[1:]))
    if not found:
        print("no auto-tuning rows with both rankings (a bench from before the baseline ranked twice?)")
        return 1
    changed = [f for f in found if f[2] != f[3]]
    costs = [f[4] for f in found if not math.isnan(f[4])]
    gm = math.exp(sum(math.log(c) for c in costs) / len(costs)) if costs else float("nan")
    print(f"{len(found)} auto-tuning rankings, {len(changed)} kept another algorithm than the first ranking alone; "
          f"the first ranking's pick by the second's times: geomean {gm:.3f}, worst {max(costs, default=float('nan')):.3f}")
    for shape, method, first, kept, cost in sorted(changed, key=lambda f: -f[4]):
        print(f"  {shape:>20} {method:<22} first #{first} kept #{kept}: x{cost:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
