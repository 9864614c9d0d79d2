#!/usr/bin/env python3
"""Runtime variants against cuBLASLt auto-tuning, from one `cudal2 bench` CSV (offline, graph
timer, or --timer chain): for each runtime method (runtime-*, e.g. one library under several M
bucket rules through CUDAL2_RUNTIME_ENV_B/_C), per shape ratio = auto-tuning's time / the method's time in the same
run (> 1: the runtime is faster), then the geometric mean, the count below 0.99, the worst shapes
and the dispatch paths taken. Only the layouts the run measured (TN for nn.Linear shapes).

    python3 bench/runtime/summarize_rules.py RUN.csv[.gz] [--label runtime-b=off ...] [--timer chain]
"""
import argparse
import json
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean, load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--label", action="append", default=[], help="METHOD_PREFIX=LABEL for the table")
    ap.add_argument("--timer", default="graph", help="the timer whose medians are compared (default graph)")
    a = ap.parse_args()
    labels = dict(x.split("=", 1) for x in a.label)
    t = defaultdict(dict)  # (m, n, k, layout) -> method -> us
    path = {}
    failed = []
    for r in load(a.csv):
        if r["mode"] != "offline" or r["timer"] != a.timer:
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]), r["layout"])
        if r["status"] != "ok":
            if r["method"].startswith("runtime"):
                failed.append((key, r["method"], r["status"], r.get("failure", "")))
            continue
        t[key][r["method"]] = float(r["median_us"])
        if r["method"].startswith("runtime"):
            try:
                path[(key, r["method"])] = json.loads(r.get("details") or "{}").get("path", "?")
            except ValueError:
                path[(key, r["method"])] = "?"
    methods = sorted({m for v in t.values() for m in v if m.startswith("runtime")})
    for key, m, st, why in failed:
        print(f"FAILED {m} {key}: {st} {why}")
    print(f"{'method':16} {'label':24} {'shapes':>6} {'geomean':>8} {'<0.99':>6} {'worst':>28}  paths")
    for meth in methods:
        ratios = []
        for key, v in sorted(t.items()):
            ref = v.get(f"cublaslt-autotune-{key[3]}")
            if ref and meth in v and meth.endswith(key[3]):
                ratios.append((ref / v[meth], key))
        if not ratios:
            continue
        worst = min(ratios)
        paths = Counter(path.get((k, meth), "?") for _, k in ratios)
        prefix = meth.rsplit("-", 1)[0]
        print(f"{meth:16} {labels.get(prefix, ''):24} {len(ratios):6d} {gmean([r for r, _ in ratios]):8.4f}"
              f" {sum(r < 0.99 for r, _ in ratios):6d} {worst[0]:8.3f} {'x'.join(map(str, worst[1][:3])):>19}  "
              + ", ".join(f"{p} {c}" for p, c in sorted(paths.items())))
    heur = [(v[f"cublaslt-autotune-{k[3]}"] / v[f"cublaslt-heuristic-{k[3]}"]) for k, v in t.items()
            if f"cublaslt-autotune-{k[3]}" in v and f"cublaslt-heuristic-{k[3]}" in v]
    if heur:
        print(f"{'(heuristic)':16} {'cuBLASLt heuristic':24} {len(heur):6d} {gmean(heur):8.4f} {sum(h < 0.99 for h in heur):6d}")
    print("\nshapes below 0.99 (method: MxNxK ratio)")
    for meth in methods:
        low = sorted((t[k][f"cublaslt-autotune-{k[3]}"] / t[k][meth], k) for k in t
                     if meth in t[k] and meth.endswith(k[3]) and f"cublaslt-autotune-{k[3]}" in t[k])
        low = [x for x in low if x[0] < 0.99]
        if low:
            print(f"  {meth}: " + ", ".join(f"{k[0]}x{k[1]}x{k[2]} {r:.3f} ({path.get((k, meth), '?')})"
                                            for r, k in low[:20]) + (" ..." if len(low) > 20 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
