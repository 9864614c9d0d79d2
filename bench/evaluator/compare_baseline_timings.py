#!/usr/bin/env python3
"""Baseline times measured inside an evaluation job (beside untrusted candidates) against the
same baselines measured by `cudal2 bench`: offline, graph timer, per shape and method.
    python3 bench/evaluator/compare_baseline_timings.py JOB.csv BENCH.csv [BENCH_AFTER.csv]
With two bench runs (one before the job, one after) the reference is their geometric mean, and
the two runs are also compared with each other: that ratio is the noise floor of two processes
measuring the same thing, which the job-vs-bench ratio can be read against."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean as geomean  # noqa: E402
from _analysis import load  # noqa: E402  (a CSV, .gz or not)


def medians(path):
    out = {}
    for r in load(path):
        if r["mode"] == "offline" and r["timer"] == "graph" and r["method"].startswith("cublaslt") and r["median_us"]:
            out[(int(r["m"]), int(r["n"]), int(r["k"]), r["method"])] = float(r["median_us"])
    return out


def summary(name, ratios):
    within = sum(1 for r in ratios if abs(r - 1) <= 0.01)
    print(f"geomean {name} {geomean(ratios):.4f} over {len(ratios)} rows; min {min(ratios):.3f} "
          f"max {max(ratios):.3f}; {within} rows within 1%")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    job = medians(sys.argv[1])
    benches = [medians(p) for p in sys.argv[2:]]
    keys = sorted(set(job).intersection(*benches))
    if not keys:
        sys.exit("no common (shape, method) rows")
    ref = {k: geomean([b[k] for b in benches]) for k in keys}
    head = f"{'shape':<18} {'method':<22} {'in job us':>10} {'bench us':>10} {'job/bench':>10}"
    print(head + (f" {'bench1/bench2':>14}" if len(benches) == 2 else ""))
    ratios, noise = [], []
    for k in keys:
        r = job[k] / ref[k]
        ratios.append(r)
        line = f"{k[0]}x{k[1]}x{k[2]:<8} {k[3]:<22} {job[k]:>10.2f} {ref[k]:>10.2f} {r:>10.3f}"
        if len(benches) == 2:
            noise.append(benches[0][k] / benches[1][k])
            line += f" {noise[-1]:>14.3f}"
        print(line)
    summary("job/bench", ratios)
    if noise:
        summary("bench1/bench2 (noise floor)", noise)


if __name__ == "__main__":
    main()
