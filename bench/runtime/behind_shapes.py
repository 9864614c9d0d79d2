#!/usr/bin/env python3
"""The shapes a whole-grid runtime run measured behind cuBLASLt auto-tuning, one "M,N,K" line each,
furthest behind first: the shape list of a confirmation (bench/runtime/confirm_candidates.py --shapes).

  python3 bench/runtime/behind_shapes.py --run SHARDS.csv.xz[,MORE.csv.xz] [--run ...] --below 0.985 \\
      [--timers graph,chain] [--per-layout] [--interval-below 0.99] [--min-runs 2] [--skip-compiled TABLE]

A run is one or more bench CSVs (bench/runtime/grid_shards.sh writes a grid as shards, sometimes
over two device calls: name them comma-separated or as a glob; a shape in several takes the last
one's rows). Per shape and timer (and mode: offline runs read graph and chain, server runs graph),
the ratio is auto-tuning's best of NN/TN over the runtime's best of NN/TN, ratio of medians, as
summarize_runtime.py prints it:
- a shape is behind in a run when that ratio is below --below under any of --timers;
- --per-layout: a (shape, layout) pair is behind when runtime-LAYOUT runs below --below times
  cublaslt-autotune-LAYOUT (a caller whose data has that layout); the shape is listed once;
- --interval-below X instead: when the upper end of the paired ratio's 95% interval (the bench's
  paired_hi, the runtime's faster layout; docs/measuring.md) is below X, behind beyond the rounds'
  spread, which a server-mode run needs (noise alone puts a tenth of its shapes below 0.97).
--min-runs N keeps what is behind in at least N of the runs under the same layout (--per-layout),
mode and timer: a noise loser rarely repeats. --skip-compiled TABLE leaves out shapes whose entry in
TABLE (either layout) is a compiled kernel of ours: a back-to-back confirmation times cuBLASLt
configurations, and a job that does not time an entry drops it. --build names the runtime slot
(runtime, runtime-b, runtime-c). Standard library only.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import best_of_layouts, expand, load_last_wins, paired_intervals, times  # noqa: E402


def ratios(rows, build, timers, per_layout, interval):
    """(m, n, k, layout or None, mode, timer) -> that shape's ratio in this run."""
    # the paired interval's upper end per (m, n, k, mode, timer) and method
    his = {(k[0], k[1], k[2], k[4], k[5]): v for k, v in paired_intervals(rows).items()} if interval else {}
    out = {}
    for mode in sorted({r["mode"] for r in rows}):
        for timer in sorted(timers):
            for (m, n, k), ms in times(rows, mode, timer).items():
                if per_layout:
                    for lay in ("nn", "tn"):
                        rt, at = ms.get(f"{build}-{lay}"), ms.get(f"cublaslt-autotune-{lay}")
                        if rt and at:
                            out[(m, n, k, lay, mode, timer)] = at / rt
                    continue
                rt, at = best_of_layouts(ms, build), best_of_layouts(ms, "cublaslt-autotune")
                if rt is None or at is None:
                    continue
                if not interval:
                    out[(m, n, k, None, mode, timer)] = at / rt
                    continue
                fast = min((x for x in (f"{build}-nn", f"{build}-tn") if x in ms), key=ms.get)
                hi = his.get((m, n, k, mode, timer), {}).get(fast)
                if hi:
                    out[(m, n, k, None, mode, timer)] = hi[1]
    return out


def compiled_shapes(table_path):
    """Shapes whose entry in the table, either layout, is not a cuBLASLt configuration (nor the heuristic)."""
    with open(table_path) as f:
        entries = json.load(f)["entries"]
    return {(e["m"], e["n"], e["k"]) for e in entries if not e["spec"].startswith("cublaslt")}


def behind(runs, below, min_runs):
    """The shapes with a pair (layout, mode and timer) behind in at least min_runs of the runs, furthest
    behind first (the shape's worst ratio in any run)."""
    worst, count = {}, defaultdict(int)
    for run in runs:
        for key, r in run.items():
            worst[key[:3]] = min(worst.get(key[:3], r), r)
            if r < below:
                count[key] += 1
    chosen = {key[:3] for key, c in count.items() if c >= min_runs}
    return sorted(chosen, key=lambda s: (worst[s], s))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", required=True,
                    help="one run: a bench CSV, or its shards comma-separated or as a glob (repeatable)")
    ap.add_argument("--below", type=float, default=0.97, help="the ratio a shape is behind below")
    ap.add_argument("--timers", default="graph,chain", help="comma-separated: graph, chain")
    ap.add_argument("--per-layout", action="store_true", help="each layout against auto-tuning of that layout")
    ap.add_argument("--interval-below", type=float, default=None,
                    help="behind when the paired interval's upper end is below this (replaces --below)")
    ap.add_argument("--min-runs", type=int, default=1)
    ap.add_argument("--skip-compiled", metavar="TABLE", help="leave out shapes whose entry here is a compiled kernel")
    ap.add_argument("--build", default="runtime", help="the runtime slot: runtime, runtime-b or runtime-c")
    a = ap.parse_args()
    timers = {t for t in a.timers.split(",") if t}
    if not timers <= {"graph", "chain"} or not timers:
        ap.error("--timers names graph and/or chain")
    if a.min_runs < 1 or a.min_runs > len(a.run):
        ap.error(f"--min-runs is 1 to the number of runs ({len(a.run)})")
    if a.interval_below is not None and a.per_layout:
        ap.error("--interval-below reads the faster layout's interval: not with --per-layout")
    runs = [ratios(load_last_wins(expand(p)), a.build, timers, a.per_layout, a.interval_below is not None) for p in a.run]
    if not any(runs):
        sys.exit(f"behind_shapes: no shape with {a.build}-nn/tn and auto-tuning measured"
                 + (" (and paired_hi: a bench from before the interval?)" if a.interval_below is not None else ""))
    shapes = behind(runs, a.interval_below if a.interval_below is not None else a.below, a.min_runs)
    skipped = []
    if a.skip_compiled:
        compiled = compiled_shapes(a.skip_compiled)
        skipped = [s for s in shapes if s in compiled]
        shapes = [s for s in shapes if s not in compiled]
    for s in shapes:
        print(f"{s[0]},{s[1]},{s[2]}")
    what = f"paired interval below {a.interval_below}" if a.interval_below is not None else f"below {a.below}"
    print(f"behind_shapes: {len(shapes)} shape(s) {what} ({'per layout, ' if a.per_layout else ''}"
          f"{'/'.join(sorted(timers))}) in {a.min_runs}+ of {len(runs)} run(s)"
          + (f"; left out with a compiled entry: {' '.join('x'.join(map(str, s)) for s in skipped)}" if skipped else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
