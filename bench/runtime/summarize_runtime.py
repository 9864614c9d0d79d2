#!/usr/bin/env python3
"""The runtime against cuBLASLt, from a `cudal2 bench` CSV with the runtime-nn/tn methods
(bench/runtime/runtime_vs_cublaslt.sh). Per shape and mode/timer: ratio = best of cuBLASLt auto-tuning
NN/TN / best of runtime NN/TN (> 1: the runtime is faster), both from the same run; then the
geometric mean by class, the worst shapes, the number below 0.99, and which runtime path served
each shape (table kernel, neighbour kernel, cuBLASLt heuristic). Every shape and layout where the
runtime failed (wrong or unwritten output, an error) is listed first. Where the CSV has the
paired_ratio column (bench writes it since the paired-ratio change), the same figures for the paired ratio of the
runtime's faster layout to the run's reference (runtime_vs_cublaslt.sh: auto-tuning NN and TN,
whichever has the lower median; docs/measuring.md): the median over rounds of the two samples'
ratio, which cancels drift that a ratio of medians keeps.

  python3 bench/runtime/summarize_runtime.py RUN.csv[.gz] [OUT.csv] [--runtime runtime-b] [--more RUN2.csv ...]

--more adds the rows of further runs of the same library (a grid measured in several calls); a
shape measured by several runs is taken whole from the last one named.

--runtime names which build of the library to summarize when the run measured several
(runtime_vs_cublaslt.sh with CUDAL2_RUNTIME_LIB_B/_C: methods runtime-b-nn/tn, runtime-c-nn/tn).

--per-layout adds, per mode and timer, each layout on its own: runtime-nn against auto-tuning NN and
runtime-tn against auto-tuning TN (a caller whose data is NN compares with what cuBLASLt gives NN
data), with the count below 0.97 and the worst shapes. --shapes FILE (repeatable; "M,N,K" lines,
'#' comments) keeps only those shapes.

Every mode/timer line is followed, where the run has such pairs, by the same-configuration
control: the (shape, layout) pairs where the runtime ran exactly the configuration auto-tuning
picked in the same process (what the runtime ran after its first call, `spec_after_first_call`, or
its `spec`, is auto-tuning's `config`), so that any ratio away from 1 is the measurement's own
spread. How many of them fall below 0.97 is what noise alone puts below the floor at this run's
sample count.

Where the CSV has the paired ratio's confidence interval (paired_lo, paired_hi: bench writes them
since that change), the paired line counts the shapes whose whole interval lies below 0.97: behind
by more than the rounds' spread, not merely measured low.

--against runtime-c (another slot of the same run) compares that slot with --runtime's pair by pair:
per mode and timer, its time over --runtime's and both against auto-tuning of the layout, in two
groups: the (shape, layout) pairs where the other slot's plan changed after its first call (tuned in
the background) and those where it did not, which are the A/A control of that comparison.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import (CLASSES, best_of_layouts, gmean, load_last_wins, paired_intervals, paired_ratios, read_shapes,  # noqa: E402
                       write_rows)


def print_per_layout(t, runtime, mode, timer):
    """Each layout against auto-tuning of the same layout (runtime-nn / cublaslt-autotune-nn, ...)."""
    for lay in ("nn", "tn"):
        r = [(key, m["cublaslt-autotune-" + lay] / m[f"{runtime}-{lay}"]) for key, m in sorted(t.items())
             if key[4] == mode and key[5] == timer and f"{runtime}-{lay}" in m and "cublaslt-autotune-" + lay in m]
        if not r:
            continue
        low = sorted((x for x in r if x[1] < 0.97), key=lambda x: x[1])
        print(f"{'':8s} {'':6s} {lay}: {len(r):4d} shapes  {runtime}-{lay} vs auto-tuning {lay}: all "
              f"{gmean([x for _, x in r]):.4f}  below 0.99: {sum(x < 0.99 for _, x in r)}  below 0.97: {len(low)}"
              + "".join(f"  {k[0]}x{k[1]}x{k[2]} {x:.3f}" for k, x in low[:6]))


def details_of(r):
    """A row's details as a dict ({} where there are none or they do not parse)."""
    try:
        return json.loads(r["details"]) if r.get("details") else {}
    except ValueError:
        return {}


def ran_spec(d):
    """The configuration a runtime row's timed calls ran: a shape tuned in the background after its
    first call runs its tuned plan (`spec_after_first_call`), any other its `spec`."""
    return d.get("spec_after_first_call") or d.get("spec", "")


def layout_pairs(t, mode, timer):
    """(shape key, layout, {method: us}) for every shape of one mode and timer, NN then TN."""
    for key, m in t.items():
        if key[4] == mode and key[5] == timer:
            for lay in ("nn", "tn"):
                yield key, lay, m


def print_control(t, specs, runtime, mode, timer):
    """The same-configuration control (module docstring) for one mode and timer."""
    r = []
    for key, lay, m in layout_pairs(t, mode, timer):
        mine, theirs = f"{runtime}-{lay}", "cublaslt-autotune-" + lay
        spec = specs.get((key, mine), "")
        if spec and spec == specs.get((key, theirs)) and mine in m and theirs in m:
            r.append(m[theirs] / m[mine])
    if r:
        print(f"{'':8s} {'':6s} control: {len(r):4d} (shape, layout) pairs running auto-tuning's own configuration: "
              f"all {gmean(r):.4f}  below 0.99: {sum(x < 0.99 for x in r)}  below 0.97: {sum(x < 0.97 for x in r)}")


def print_against(t, changed, runtime, other, mode, timer):
    """--against: OTHER's time over RUNTIME's per (shape, layout) pair, in two groups: the pairs where
    OTHER's plan changed after its first call (tuned in the background) and those where it did not."""
    groups = defaultdict(list)
    for key, lay, m in layout_pairs(t, mode, timer):
        mine, theirs, auto = f"{runtime}-{lay}", f"{other}-{lay}", "cublaslt-autotune-" + lay
        if mine in m and theirs in m and auto in m and (key, theirs) in changed:
            groups[changed[(key, theirs)]].append((m[theirs] / m[mine], m[auto] / m[mine], m[auto] / m[theirs]))
    for tuned in (True, False):
        r = groups.get(tuned)
        if r:
            print(f"{'':8s} {'':6s} against {other}, {'its plan tuned to another' if tuned else 'its plan kept':25s}"
                  f" {len(r):4d} pairs: {other} / {runtime} {gmean([x[0] for x in r]):.4f}  vs auto-tuning: "
                  f"{runtime} {gmean([x[1] for x in r]):.4f} {other} {gmean([x[2] for x in r]):.4f}  below 0.97: "
                  f"{runtime} {sum(x[1] < 0.97 for x in r)} {other} {sum(x[2] < 0.97 for x in r)}")


def interval_text(sel):
    """The shapes whose paired interval lies wholly below 0.97 ('' where the run has no intervals)."""
    if not sel:
        return ""
    low = sorted((o for o in sel if o["paired_hi"] < 0.97), key=lambda o: o["paired_hi"])
    return (f"  interval below 0.97: {len(low)} of {len(sel)}"
            + "".join(f"  {o['m']}x{o['n']}x{o['k']} <{o['paired_hi']:.3f}" for o in low[:6]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--runtime", default="runtime", help="method prefix: runtime, runtime-b or runtime-c")
    ap.add_argument("--more", action="append", default=[], help="another run's CSV (repeatable; the last wins a shape)")
    ap.add_argument("--per-layout", action="store_true", help="each layout against auto-tuning of that layout too")
    ap.add_argument("--shapes", action="append", default=[], help="only the shapes of this file (repeatable)")
    ap.add_argument("--against", help="another slot of the run (runtime-b, runtime-c) measured pair by pair")
    a = ap.parse_args()
    keep = {s for path in a.shapes for s in read_shapes(path)}
    rt_nn, rt_tn = a.runtime + "-nn", a.runtime + "-tn"
    rows = load_last_wins([a.csv] + a.more)
    t = defaultdict(dict)  # (m,n,k,class,mode,timer) -> method -> us
    path = {}
    specs = {}  # ((m,n,k,class,mode,timer), method) -> the configuration it ran (runtime and auto-tuning)
    paired = paired_ratios(rows)  # (m,n,k,class,mode,timer) -> method -> paired ratio to the reference
    interval = paired_intervals(rows)  # the same keys -> method -> (paired_lo, paired_hi)
    failed = {}  # (m, n, k, layout) -> status and failure of a runtime method that did not run ok
    changed = {}  # ((m,n,k,class,mode,timer), --against's method) -> whether its plan changed after its first call
    for r in rows:
        if keep and (int(r["m"]), int(r["n"]), int(r["k"])) not in keep:
            continue
        # (not-capturable on the eager or host timer: a bench run before --timers wrote rows for
        # timers it did not run)
        if r["method"] in (rt_nn, rt_tn) and r["status"] not in ("ok", "unsupported") \
                and not (r["status"] == "not-capturable" and r["timer"] != "graph"):
            failed[(int(r["m"]), int(r["n"]), int(r["k"]), r["layout"])] = f"{r['status']}: {r['failure']}"
        if r["status"] != "ok" or not r["median_us"]:
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]), r["class"], r["mode"], r["timer"])
        t[key][r["method"]] = float(r["median_us"])
        if r["method"] in (rt_nn, rt_tn):
            d = details_of(r)
            specs[(key, r["method"])] = ran_spec(d)
            path[(key[:3], r["layout"])] = d.get("path", "?")
        elif a.against and r["method"] in (a.against + "-nn", a.against + "-tn"):
            d = details_of(r)
            changed[(key, r["method"])] = ran_spec(d) != d.get("spec", "")
        elif r["method"].startswith("cublaslt-autotune-"):
            specs[(key, r["method"])] = details_of(r).get("config", "")
    out = []
    for key, m in sorted(t.items()):
        rt = best_of_layouts(m, a.runtime)
        at = best_of_layouts(m, "cublaslt-autotune")
        he = best_of_layouts(m, "cublaslt-heuristic")
        if rt is None or at is None:
            continue
        layout = "nn" if m.get(rt_nn, 1e30) <= m.get(rt_tn, 1e30) else "tn"
        out.append({"m": key[0], "n": key[1], "k": key[2], "class": key[3], "mode": key[4], "timer": key[5],
                    "runtime_us": rt, "autotune_us": at, "heuristic_us": he if he is not None else "",
                    "vs_autotune": at / rt, "vs_heuristic": he / rt if he is not None else "",
                    "paired_vs_best": paired.get(key, {}).get(a.runtime + "-" + layout, ""),
                    "paired_hi": interval.get(key, {}).get(a.runtime + "-" + layout, ("", ""))[1],
                    "path": path.get((key[:3], layout), "?")})
    if not out:
        sys.exit(f"{a.csv}: no shape with {rt_nn}/{rt_tn} and auto-tuning both measured")
    if a.out:
        write_rows(a.out, out)
    # A failed layout is a wrong answer the library gave: never hidden behind the other layout.
    print(f"{a.runtime}: {len(failed)} shape/layout(s) failed"
          + "".join(f"\n  FAILED {m}x{n}x{k} {lay}: {why}" for (m, n, k, lay), why in sorted(failed.items())))
    for mode, timer in sorted({(o["mode"], o["timer"]) for o in out}):
        sel = [o for o in out if o["mode"] == mode and o["timer"] == timer]
        classes = CLASSES
        by = {c: [o["vs_autotune"] for o in sel if o["class"] == c] for c in classes}
        worst = min(sel, key=lambda o: o["vs_autotune"])
        below = sum(o["vs_autotune"] < 0.99 for o in sel)
        heur = [o["vs_heuristic"] for o in sel if o["vs_heuristic"] != ""]
        paths = defaultdict(int)
        for o in sel:
            paths[o["path"]] += 1
        print(f"{mode:8s} {timer:6s} shapes {len(sel):4d}  vs auto-tuning: all {gmean([o['vs_autotune'] for o in sel]):.4f} "
              + " ".join(f"{c} {gmean(by[c]):.4f}({len(by[c])})" for c in classes)
              + f"  below 0.99: {below}  below 0.97: {sum(o['vs_autotune'] < 0.97 for o in sel)}"
              + f"  worst {worst['m']}x{worst['n']}x{worst['k']} {worst['vs_autotune']:.3f}"
              + f"  vs heuristic {gmean(heur):.4f}  paths {dict(paths)}")
        if a.per_layout:
            print_per_layout(t, a.runtime, mode, timer)
        print_control(t, specs, a.runtime, mode, timer)
        if a.against:
            print_against(t, changed, a.runtime, a.against, mode, timer)
        pr = [o for o in sel if o["paired_vs_best"] != ""]
        if pr:
            pw = min(pr, key=lambda o: o["paired_vs_best"])
            print(f"{mode:8s} {timer:6s} shapes {len(pr):4d}  paired vs reference: all "
                  f"{gmean([o['paired_vs_best'] for o in pr]):.4f} "
                  + " ".join(f"{c} {gmean([o['paired_vs_best'] for o in pr if o['class'] == c]):.4f}" for c in classes
                             if any(o["class"] == c for o in pr))
                  + f"  below 0.99: {sum(o['paired_vs_best'] < 0.99 for o in pr)}"
                  + f"  worst {pw['m']}x{pw['n']}x{pw['k']} {pw['paired_vs_best']:.3f}"
                  + interval_text([o for o in sel if o["paired_hi"] != ""]))


if __name__ == "__main__":
    main()
