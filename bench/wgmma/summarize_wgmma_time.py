#!/usr/bin/env python3
"""Per grid class: geometric mean of cuBLASLt auto-tuning time / our best time, from the CSV that
`bash bench/wgmma/wgmma_bench.sh csv TIME_OUTPUT` writes (gzip accepted). Only rows of one accumulator
(--accum, default f32) compete: the baseline accumulates in fp32.

--mode offline (default): the graph-timed rows (status ok/base), our fastest spec per shape.
--mode server: the cold rows (status server/sbase: our offline-fastest spec and the baseline's
algorithm, each timed after an L2 flush and an idle gap). Both modes report the achieved fraction
of the roofline, max(2MNK / 800 TFLOP/s, compulsory bytes / 3.0 TB/s), and, for the shapes whose
roofline is the memory term (HBM-bound), the fraction of the 3.0 TB/s bandwidth reached.

  python3 bench/wgmma/summarize_wgmma_time.py bench/results/h100/wgmma-pingpong/time-sample.csv.gz
  python3 bench/wgmma/summarize_wgmma_time.py T.csv.gz --mode server --out per-shape.csv
  python3 bench/wgmma/summarize_wgmma_time.py T.csv.gz --exclude " OFF"   # one build of an A/B run
"""
import sys
import os
import argparse
import csv
import gzip
import statistics
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import compute_us, gmean, memory_us, roof_us, write_rows  # noqa: E402
from _analysis import shape_class as grid_class  # noqa: E402  (docs/grids.md, as src/core/roofline.cpp)

STATUS = {"offline": ("ok", "base"), "server": ("server", "sbase")}


def hbm_bound(s):
    return memory_us(s) > compute_us(s)


def bandwidth_pct(s, us):
    return 100 * memory_us(s) / us


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--accum", default="f32")
    ap.add_argument("--mode", choices=STATUS, default="offline")
    ap.add_argument("--worst", type=int, default=5)
    ap.add_argument("--only", help="only methods whose name contains this text (e.g. an A/B build's suffix)")
    ap.add_argument("--exclude", help="leave out methods whose name contains this text")
    ap.add_argument("--out", help="per-shape CSV: shape, class, ours, auto-tuning, ratio, roofline %%, spec")
    a = ap.parse_args()
    ours_status, base_status = STATUS[a.mode]
    opener = gzip.open if a.csv.endswith(".gz") else open
    with opener(a.csv, "rt") as f:
        rows = list(csv.DictReader(f))
    base, best = {}, {}
    for r in rows:
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["status"] == base_status:
            base[shape] = float(r["us"])
        elif (r["status"] == ours_status and f" {a.accum} " in r["method"]
              and (not a.only or a.only in r["method"]) and not (a.exclude and a.exclude in r["method"])):
            us = float(r["us"])
            if shape not in best or us < best[shape][0]:
                best[shape] = (us, r["method"])
    ratio = {s: base[s] / best[s][0] for s in best if s in base}
    by_class = defaultdict(list)
    for s in ratio:
        by_class[grid_class(*s)].append(s)
    print(f"mode {a.mode}, accumulator {a.accum}: auto-tuning's time / our best")
    print(f"{'class':8} {'shapes':>6} {'geomean':>8} {'wins':>5} {'worst':>6} {'best':>6} "
          f"{'roof% ours':>10} {'roof% lt':>8} {'HBM-bound':>9} {'BW% ours':>8} {'BW% lt':>7}")
    for c in ("small", "skinny", "medium", "large", "all"):
        ss = list(ratio) if c == "all" else by_class.get(c)
        if not ss:
            continue
        xs = [ratio[s] for s in ss]
        roof = statistics.median(100 * roof_us(s) / best[s][0] for s in ss)
        roof_lt = statistics.median(100 * roof_us(s) / base[s] for s in ss)
        hb = [s for s in ss if hbm_bound(s)]
        bw = f"{statistics.median(bandwidth_pct(s, best[s][0]) for s in hb):8.1f}" if hb else f"{'-':>8}"
        bw_lt = f"{statistics.median(bandwidth_pct(s, base[s]) for s in hb):7.1f}" if hb else f"{'-':>7}"
        print(f"{c:8} {len(xs):6d} {gmean(xs):8.4f} {sum(x >= 1 for x in xs):5d} {min(xs):6.3f} {max(xs):6.3f} "
              f"{roof:10.1f} {roof_lt:8.1f} {len(hb):9d} {bw} {bw_lt}")
    print("(roof%: median achieved fraction of the roofline; BW%: median fraction of 3.0 TB/s over the HBM-bound shapes)")
    print("\nworst shapes (lt/us, our best):")
    for x, s in sorted((x, s) for s, x in ratio.items())[: a.worst]:
        print(f"  {s[0]}x{s[1]}x{s[2]:<8} {x:.3f}  {best[s][1]}")
    print("\nwinning variant per shape:")
    for name, n in Counter(best[s][1].split(" | ")[0] for s in ratio).most_common():
        print(f"  {n:4d}  {name}")
    if a.out:
        write_rows(a.out, [{"m": s[0], "n": s[1], "k": s[2], "class": grid_class(*s), "mode": a.mode,
                            "ours_us": best[s][0], "autotune_us": base[s], "ratio": ratio[s],
                            "roofline_pct": 100 * roof_us(s) / best[s][0], "spec": best[s][1]}
                           for s in sorted(ratio)])


if __name__ == "__main__":
    main()
