#!/usr/bin/env python3
"""Tables from a tuning run's final-measurement CSV (`cudal2 tune --final-csv`), stdlib only.

Usage: python3 bench/h200/analyze_tune.py FINAL.csv[,MORE.csv.gz] [--families fam1,fam2] [--no-shapes] > summary.md
Candidates are the methods named k-<hash> (their spec text is in the details column); the
baselines are cuBLAS and cuBLASLt auto-tuning, each the best of NN and TN. Every ratio is
baseline time / our time for two methods of one job (same process, same inputs, interleaved).
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean, load_many  # noqa: E402
from _analysis import shape_class as cls  # noqa: E402  (the grid classes, docs/grids.md)

MODES_TIMERS = [("offline", "graph"), ("offline", "eager"), ("offline", "host"), ("server", "graph"),
                ("server", "eager"), ("server", "host")]


def load(paths):
    rows = load_many(paths)
    t = defaultdict(lambda: defaultdict(dict))  # shape -> (mode,timer) -> method -> us
    spec = {}
    bad = defaultdict(list)
    for r in rows:
        s = (int(r["m"]), int(r["n"]), int(r["k"]))
        meth = r["method"]
        if meth.startswith("k-") and r["details"]:
            try:
                spec[meth] = (json.loads(r["details"]) or {}).get("spec", meth)  # "null" where the job wrote none
            except json.JSONDecodeError:
                pass
        if r["status"] == "ok" and r["median_us"]:
            t[s][(r["mode"], r["timer"])][meth] = min(float(r["median_us"]), t[s][(r["mode"], r["timer"])].get(meth, 1e30))
        elif r["status"] not in ("ok", "unsupported"):
            bad[s].append((meth, r["status"], r["failure"]))
    return t, spec, bad


def esc(text):
    return text.replace("|", "\\|")


def family(text):
    return text.split()[0] if text else "?"


def main():
    path = sys.argv[1]
    fams = None
    if "--families" in sys.argv:
        fams = set(sys.argv[sys.argv.index("--families") + 1].split(","))
    t, spec, bad = load(path)

    def best(d, pred):
        c = [(us, m) for m, us in d.items() if pred(m)]
        return min(c) if c else (None, None)

    ours = lambda m: m.startswith("k-") and (fams is None or family(spec.get(m, "")) in fams)
    cublas = lambda m: m in ("cublas-nn", "cublas-tn")
    lt = lambda m: m in ("cublaslt-autotune-nn", "cublaslt-autotune-tn")
    print("| shape | class | best spec (offline graph) | us | vs cuBLASLt-AT | vs cuBLAS | server graph vs LT-AT | offline host vs LT-AT |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(lambda: defaultdict(list))  # (mode,timer) -> base -> [ratios]
    by_class = defaultdict(lambda: defaultdict(list))
    for s in sorted(t):
        g = t[s][("offline", "graph")]
        us, m = best(g, ours)
        if us is None:
            continue
        row = {}
        for mt in MODES_TIMERS:
            d = t[s].get(mt, {})
            o, _ = best(d, ours)  # best of ours in this mode/timer (the same portfolio)
            for name, pred in (("lt", lt), ("cublas", cublas)):
                b, _ = best(d, pred)
                if o and b:
                    ratios[mt][name].append(b / o)
                    row[(mt, name)] = b / o
                    if name == "lt":
                        by_class[mt][cls(*s)].append(b / o)
        f = lambda key: f"{row[key]:.3f}" if key in row else "-"
        if "--no-shapes" not in sys.argv:
          print(f"| {s[0]}x{s[1]}x{s[2]} | {cls(*s)} | `{esc(spec.get(m, m))}` | {us:.2f} | {f((('offline','graph'),'lt'))} | "
                f"{f((('offline','graph'),'cublas'))} | {f((('server','graph'),'lt'))} | {f((('offline','host'),'lt'))} |")
    print()
    print("Geometric means of baseline time / our time (best of our candidates per shape and timer):")
    print()
    print("| mode | timer | vs cuBLASLt auto-tuning (best NN/TN) | vs cuBLAS (best NN/TN) | shapes |")
    print("|---|---|---|---|---|")
    for mt in MODES_TIMERS:
        if ratios[mt]["lt"]:
            print(f"| {mt[0]} | {mt[1]} | {gmean(ratios[mt]['lt']):.3f} | {gmean(ratios[mt]['cublas']):.3f} | {len(ratios[mt]['lt'])} |")
    print()
    print("By shape class, vs cuBLASLt auto-tuning:")
    print()
    print("| mode | timer | " + " | ".join(["small", "skinny", "medium", "large"]) + " |")
    print("|---|---|---|---|---|---|")
    for mt in MODES_TIMERS:
        if by_class[mt]:
            cells = [f"{gmean(by_class[mt][c]):.3f} ({len(by_class[mt][c])})" if by_class[mt][c] else "-"
                     for c in ["small", "skinny", "medium", "large"]]
            print(f"| {mt[0]} | {mt[1]} | " + " | ".join(cells) + " |")
    nbad = sum(len(v) for v in bad.values())
    if nbad:
        print(f"\n{nbad} candidate rows failed verification or errored:")
        for s, v in sorted(bad.items()):
            for meth, st, fail in sorted(set(v)):
                print(f"- {s}: {spec.get(meth, meth)}: {st} {fail}")


if __name__ == "__main__":
    main()
