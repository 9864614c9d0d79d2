#!/usr/bin/env python3
"""Summaries for bench/results/README.md from the H100 CSVs (stdlib only).

Usage: python3 bench/baselines/summarize_baselines.py bench/results/h100 > /tmp/summary.md
Every ratio is between two methods of the same run (same process, same inputs, interleaved).
"""
import csv
import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import CLASSES, gmean, load, roof_us, shape_class, times  # noqa: E402


def cls(s):
    """The class of a shape (m, n, k), the rule of src/core/roofline.cpp."""
    return shape_class(*s)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def by_class(t, fn):
    """fn(shape, methods) -> value or None; returns {class: [values]} plus 'all'."""
    d = defaultdict(list)
    for s, ms in t.items():
        v = fn(s, ms)
        if v is not None:
            d[cls(s)].append(v)
            d["all"].append(v)
    return d


def main(folder):
    folder = Path(folder)
    grid = []
    for i in range(4):
        p = folder / f"grid{i}.csv"
        if p.exists():
            grid += load(p)
    g = times(grid)
    print(f"## Full grid ({len(g)} shapes), offline, graph timer\n")
    counts = defaultdict(int)
    for s in g:
        counts[cls(s)] += 1
    print("Shapes per class: " + ", ".join(f"{c} {counts[c]}" for c in CLASSES) + "\n")

    # NN vs TN
    rows = []
    for a, b, label in [("cublas-nn", "cublas-tn", "cuBLAS"), ("cublaslt-autotune-nn", "cublaslt-autotune-tn", "cuBLASLt auto-tuned")]:
        d = by_class(g, lambda s, ms: ms[b] / ms[a] if a in ms and b in ms else None)  # >1: NN faster
        for c in CLASSES + ["all"]:
            v = d[c]
            if not v:
                continue
            nn = sum(x > 1.02 for x in v)
            tn = sum(x < 1 / 1.02 for x in v)
            rows.append([label, c, len(v), nn, tn, len(v) - nn - tn, f"{gmean(v):.3f}", f"{min(v):.2f}", f"{max(v):.2f}"])
    print("### NN or TN\n\nt(TN)/t(NN): above 1 NN is faster. A win is a >2% difference.\n")
    print(table(["library", "class", "shapes", "NN wins", "TN wins", "within 2%", "geomean t(TN)/t(NN)", "min", "max"], rows))
    worst = sorted(((g[s]["cublas-tn"] / g[s]["cublas-nn"], s) for s in g if "cublas-nn" in g[s] and "cublas-tn" in g[s]))
    print("\nLargest cuBLAS layout gaps: TN faster at " +
          ", ".join(f"{s[0]}x{s[1]}x{s[2]} ({1/r:.2f}x)" for r, s in worst[:5]) +
          "; NN faster at " + ", ".join(f"{s[0]}x{s[1]}x{s[2]} ({r:.2f}x)" for r, s in worst[-5:][::-1]) + ".\n")

    # auto-tuning vs heuristic top-1, from the auto-tuner's own candidate timings
    gains = defaultdict(list)
    returned = []
    for r in grid:
        if r["method"].startswith("cublaslt-autotune") and r["timer"] == "graph" and r["status"] == "ok":
            d = json.loads(r["details"])
            c = [x for x in d.get("candidate_us", []) if x > 0]
            returned.append(d.get("heuristic_returned", 0))
            s = (int(r["m"]), int(r["n"]), int(r["k"]))
            if c and d.get("candidate_us", [0])[0] > 0:
                v = d["candidate_us"][0] / min(c)
            else:
                v = 1.0
            gains[cls(s)].append(v)
            gains["all"].append(v)
    print("### Auto-tuning vs the heuristic's top-1\n")
    print("From the auto-tuner's own ranking (graph replay of each candidate, same process and inputs): "
          "gain = time of the heuristic's first algorithm / time of the fastest candidate, over both layouts.\n")
    rows = []
    for c in CLASSES + ["all"]:
        v = gains[c]
        if v:
            rows.append([c, len(v), f"{gmean(v):.3f}", f"{sum(x > 1.05 for x in v)}", f"{max(v):.2f}"])
    print(table(["class", "runs", "geomean gain", "runs gaining >5%", "max gain"], rows))
    hist = defaultdict(int)
    for x in returned:
        hist[x] += 1
    print("\nAlgorithms the heuristic returned when asked for 100: " +
          ", ".join(f"{k}: {v} runs" for k, v in sorted(hist.items())) + ".\n")

    # distance from roofline
    print("### Distance from the roofline\n\nAchieved fraction of the roofline (max(2MNK/800 TFLOP/s, bytes/3.0 TB/s)), geometric mean by class; "
          "`best` is the fastest of the four per shape.\n")
    rows = []
    for meth in ["cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn", "best"]:
        d = by_class(g, lambda s, ms: roof_us(s) / (min(ms.values()) if meth == "best" else ms[meth]) if (meth == "best" or meth in ms) else None)
        rows.append([meth] + [f"{100*gmean(d[c]):.1f}%" for c in CLASSES + ["all"]])
    print(table(["method"] + CLASSES + ["all"], rows))

    # autotune vs cublas
    d = by_class(g, lambda s, ms: min(ms.get("cublas-nn", 1e30), ms.get("cublas-tn", 1e30)) /
                 min(ms.get("cublaslt-autotune-nn", 1e30), ms.get("cublaslt-autotune-tn", 1e30)))
    print("\n### cuBLASLt auto-tuning (best of NN/TN) vs cuBLAS (best of NN/TN)\n")
    print(table(["class"] + ["geomean speedup", "min", "max"],
                [[c, f"{gmean(d[c]):.3f}", f"{min(d[c]):.2f}", f"{max(d[c]):.2f}"] for c in CLASSES + ["all"] if d[c]]))

    # timers: graph vs eager vs host, small shapes
    e = times(grid, timer="eager")
    h = times(grid, timer="host")
    print("\n### The three timers (best of the four methods per shape), median over shapes of the class\n")
    rows = []
    for c in CLASSES:
        ss = [s for s in g if cls(s) == c]
        gv = [min(g[s].values()) for s in ss]
        ev = [min(e[s].values()) for s in ss if s in e]
        hv = [min(h[s].values()) for s in ss if s in h]
        rows.append([c, f"{statistics.median(gv):.2f}", f"{statistics.median(ev):.2f}", f"{statistics.median(hv):.2f}"])
    print(table(["class", "graph us", "eager us", "host us"], rows))

    # sample grid: all baselines, both modes
    sample = load(folder / "sample.csv") if (folder / "sample.csv").exists() else []
    if sample:
        print("\n## Sample grid (16 shapes), every baseline, both modes\n")
        for mode in ["offline", "server"]:
            rows = []
            for timer in ["graph", "eager", "host"]:
                t = times(sample, mode, timer)
                methods = sorted({m for ms in t.values() for m in ms})
                best = {s: min(ms[m] for m in ms if m != "torch-matmul") for s, ms in t.items()}
                for m in methods:
                    v = [best[s] / t[s][m] for s in t if m in t[s]]
                    rows.append([timer, m, f"{gmean(v):.3f}"])
            print(f"### {mode}: geomean over the 16 shapes of (best cuBLAS/cuBLASLt time / method time)\n")
            print(table(["timer", "method", "geomean ratio"], rows))
            print()
        t_off, t_srv = times(sample, "offline"), times(sample, "server")
        rows = []
        for s in sorted(t_off, key=lambda s: s[0] * s[1] * s[2]):
            m = "cublaslt-autotune-nn"
            if m in t_off[s] and m in t_srv.get(s, {}):
                rows.append([f"{s[0]}x{s[1]}x{s[2]}", f"{t_off[s][m]:.2f}", f"{t_srv[s][m]:.2f}", f"{t_srv[s][m]/t_off[s][m]:.2f}"])
        print("### Offline vs server (cold L2, idle gaps), cuBLASLt auto-tune NN, graph timer\n")
        print(table(["shape", "offline us", "server us", "server/offline"], rows))
        # heuristic vs autotune directly
        rows = []
        for s in sorted(t_off, key=lambda s: s[0] * s[1] * s[2]):
            ms = t_off[s]
            for lay in ["nn", "tn"]:
                a, b = f"cublaslt-heuristic-{lay}", f"cublaslt-autotune-{lay}"
                if a in ms and b in ms:
                    rows.append((ms[a] / ms[b]))
        print(f"\nMeasured directly on the sample grid (offline, graph): auto-tune / heuristic speedup geomean {gmean(rows):.3f}, "
              f"range {min(rows):.2f}-{max(rows):.2f} over {len(rows)} shape-layout pairs.\n")

    f16 = load(folder / "sample-f16.csv") if (folder / "sample-f16.csv").exists() else []
    if f16:
        t16, t32 = times(f16), times(sample)
        errs = {}
        for r in f16:
            if r["timer"] == "graph" and r["method"] == "cublas-nn":
                errs[(int(r["m"]), int(r["n"]), int(r["k"]))] = (r["rel_err"], r["tol"])
        errs32 = {(int(r["m"]), int(r["n"]), int(r["k"])): r["rel_err"] for r in sample if r["timer"] == "graph" and r["method"] == "cublas-nn" and r["mode"] == "offline"}
        rows = []
        for s in sorted(t16, key=lambda s: s[0] * s[1] * s[2]):
            b16 = min(t16[s].values())
            b32 = min(v for m, v in t32.get(s, {}).items() if m != "torch-matmul") if s in t32 else float("nan")
            rows.append([f"{s[0]}x{s[1]}x{s[2]}", f"{b32:.2f}", f"{b16:.2f}", f"{b32/b16:.2f}", errs32.get(s, ""), errs.get(s, ("", ""))[0], errs.get(s, ("", ""))[1]])
        print("## fp16 accumulation (`--fp16-accum`), sample grid, offline graph\n")
        print("Best of the cuBLAS/cuBLASLt methods in each run (two runs: times compare across runs only roughly); errors are cublas-nn's relative Frobenius error.\n")
        print(table(["shape", "fp32-acc us", "fp16-acc us", "speedup", "rel err fp32-acc", "rel err fp16-acc", "fp16 tol"], rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/h100")
