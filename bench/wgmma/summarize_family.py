#!/usr/bin/env python3
"""One family against cuBLASLt auto-tuning, from the CSV of `cudal2 tune --csv` (or bench): per shape,
the best candidate's ratio = min(auto-tuning NN, TN) / candidate, both timed in the same job (the
rows of a job share its input seed; times from two jobs are never divided). Prints per shape the
best spec, its time, TFLOP/s and % of the roofline, then the geometric mean by shape class.
    python3 bench/wgmma/summarize_family.py RUN.csv[.gz] [--timer graph] [--mode offline] [--out OUT.csv]
RUN may also be a store as files (python/cudal2/store_csv.py export): each measurement row carries the
baselines of its own job (baseline_json), so the ratio is still within one job; TFLOP/s and the
roofline (800 TFLOP/s, 3.0 TB/s of compulsory traffic) are computed here, and --families keeps
the specs of those families only."""
import sys
import argparse
import collections
import csv
import gzip
import json
import math
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import roof_us, shape_class, spec_measurements  # noqa: E402


def store_rows(path, timer, mode, families):
    """A store directory's ok measurements as the bench CSV's columns, autotune baselines as rows of their job."""
    rows = []
    for family, text, rid, m, n, k, us, baselines in spec_measurements(path, timer, mode):
        if families and family not in families:
            continue
        common = {"m": m, "n": n, "k": k, "seed": f"store-{rid}",  # one row and its own baselines make one job
                  "class": shape_class(m, n, k), "timer": timer, "mode": mode, "status": "ok"}
        rows.append(dict(common, method=text, median_us=us, tflops=f"{2.0 * m * n * k / us / 1e6:.1f}",
                         roofline_pct=f"{100 * roof_us((m, n, k)) / us:.1f}", details=json.dumps({"spec": text})))
        for name, b in json.loads(baselines or "{}").items():
            t = b.get(mode, {}).get(timer, {}).get("median")
            if name.startswith("cublaslt-autotune") and t:
                rows.append(dict(common, method=name, median_us=t, tflops="", roofline_pct="", details="{}"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--timer", default="graph")
    ap.add_argument("--mode", default="offline")
    ap.add_argument("--out")
    ap.add_argument("--families", help="store input: keep these families' specs (comma-separated)")
    a = ap.parse_args()
    if os.path.isdir(a.csv):
        rows = store_rows(a.csv, a.timer, a.mode, set(a.families.split(",")) if a.families else set())
    else:
        opener = gzip.open if a.csv.endswith(".gz") else open
        with opener(a.csv, "rt") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    jobs = collections.defaultdict(list)  # (m, n, k, seed) -> rows of that job
    for r in rows:
        if r["timer"] == a.timer and r["mode"] == a.mode and r["status"] == "ok" and r["median_us"]:
            jobs[(int(r["m"]), int(r["n"]), int(r["k"]), r["seed"])].append(r)
    def spec_of(r):  # the spec text (candidate rows name the artifact by hash)
        try:
            return json.loads(r["details"]).get("spec", r["method"])
        except (ValueError, AttributeError):
            return r["method"]

    best = {}  # (m, n, k) -> (ratio, row, autotune us)
    for (m, n, k, _), rs in jobs.items():
        at = [float(r["median_us"]) for r in rs if r["method"].startswith("cublaslt-autotune")]
        if not at:
            continue
        for r in rs:
            if r["method"].startswith(("cublas", "torch", "runtime")):
                continue
            ratio = min(at) / float(r["median_us"])
            if (m, n, k) not in best or ratio > best[(m, n, k)][0]:
                best[(m, n, k)] = (ratio, r, min(at))
    by_class = collections.defaultdict(list)
    roof_by_class = collections.defaultdict(list)  # % of the roofline of each shape's best
    out = []
    print(f"{'shape':>20} {'class':>7} {'ratio':>6} {'us':>9} {'autotune':>9} {'TFLOP/s':>8} {'roof%':>6}  spec")
    for (m, n, k), (ratio, r, at) in sorted(best.items()):
        by_class[r["class"]].append(ratio)
        roof_by_class[r["class"]].append(float(r["roofline_pct"] or 0))
        print(f"{m}x{n}x{k:>6} {r['class']:>7} {ratio:6.3f} {float(r['median_us']):9.2f} {at:9.2f} "
              f"{float(r['tflops']):8.1f} {float(r['roofline_pct']):6.1f}  {spec_of(r)}")
        out.append({"m": m, "n": n, "k": k, "class": r["class"], "ratio_vs_autotune": f"{ratio:.4f}",
                    "us": r["median_us"], "autotune_us": f"{at:.3f}", "tflops": r["tflops"],
                    "roofline_pct": r["roofline_pct"], "spec": spec_of(r)})
    allr = [x for v in by_class.values() for x in v]
    roof_by_class["all"] = [x for v in roof_by_class.values() for x in v]
    for c, v in sorted(by_class.items()) + [("all", allr)]:
        if v:
            g = math.exp(sum(map(math.log, v)) / len(v))
            roof = sorted(roof_by_class[c])
            print(f"{c:>8}: geomean {g:.4f} over {len(v)} shapes, {sum(x >= 1.0 for x in v)} at >= 1.00, "
                  f"min {min(v):.3f}, median {roof[len(roof) // 2]:.1f}% of the roofline")
    if a.out and out:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)


if __name__ == "__main__":
    main()
