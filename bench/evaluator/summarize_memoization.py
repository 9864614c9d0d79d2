#!/usr/bin/env python3
"""What bench/evaluator/check_memoization.sh found, as tables: the verdict of every adversarial candidate
under the chained protocol (and of the reuse class under the old one, with its fake speedup over
its honest twin), what chains cost (honest kernels' and baselines' times, old against new, and the
wall time of the same evaluations), and the chain timer beside the graph timer for every baseline.
Writes verdicts.csv, cost_times.csv and chain_timer.csv next to the inputs.
    python3 bench/evaluator/summarize_memoization.py OUT_DIR"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "out"
HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "..", "tests", "gpu", "adversarial", "README.md")
KINDS = ["wrong-result", "out-of-bounds", "input-modified", "implausible-time", "timing-mismatch",
         "inconsistent-time", "host-thread", "protocol-error", "illegal-address", "device-assert",
         "illegal-instruction", "cuda-fatal", "crash", "hang", "exited", "error"]
# Reusing one call in ten saves about 10%: a cheat recorded ok must be within 7% of its twin.
HONEST = 0.93


def path(name):
    return os.path.join(OUT, name)


def rows(name):
    if not os.path.exists(path(name)):
        return []
    with open(path(name)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def verdict_lines(name):
    """(file, hash, status) per candidate, from check_memoization.sh's verdict files."""
    out = []
    if not os.path.exists(path(name)):
        return out
    for line in open(path(name)):
        parts = line.split()
        if len(parts) >= 3:
            out.append((parts[0], parts[1], parts[2]))
        elif parts:
            out.append((parts[0], "", "missing"))
    return out


def accepted():
    """File -> (accepted kinds, ok accepted as such, ok accepted with honest times), from the README."""
    acc, prev = {}, set()
    for line in open(README):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].endswith(".cu"):
            continue
        text = cells[-1]
        kinds = {k for k in KINDS if re.search(r"(^|[^-\w])" + re.escape(k) + r"($|[^-\w])", text)}
        if "same" in text:
            kinds |= prev
        honest = "honest twin" in text
        acc[cells[0]] = (kinds, text.startswith("ok") or "ok (and" in text, honest)
        prev = kinds
    return acc


def medians(table, timer="graph"):
    """(method, shape) -> offline median of ok rows."""
    out = {}
    for r in table:
        if r["mode"] == "offline" and r["timer"] == timer and r["status"] == "ok" and r["median_us"]:
            out[(r["method"], f'{r["m"]}x{r["n"]}x{r["k"]}')] = float(r["median_us"])
    return out


def speedups(med, cand_hash, twin_hash):
    """Per shape: twin's graph time / the candidate's (above 1: faster than its honest twin)."""
    out = {}
    for (m, shape), us in med.items():
        if m == "k-" + cand_hash and ("k-" + twin_hash, shape) in med:
            out[shape] = med[("k-" + twin_hash, shape)] / us
    return out


def verdicts():
    acc = accepted()
    new, old = verdict_lines("new_verdicts.txt"), {f: (h, s) for f, h, s in verdict_lines("old_verdicts.txt")}
    new_med, old_med = medians(rows("new.csv")), medians(rows("old.csv"))
    twin_new = next((h for f, h, _ in new if f == "tiled.cu"), "")
    twin_old = old.get("tiled.cu", ("", ""))[0]
    out, missed = [], 0
    print(f"{'candidate':26} {'old status':18} {'old speedup':>11} {'old':>7}  {'new status':18} {'new speedup':>11}  "
          "verdict")
    for f, h, status in new:
        base = re.sub(r"_k\d+\.cu$", ".cu", f)
        kinds, ok_probe, ok_honest = acc.get(base, (set(), False, False))
        sp = speedups(new_med, h, twin_new)
        worst = max(sp.values()) if sp else float("nan")
        if f in ("tiled.cu", "naive.cu"):
            verdict = "control" if status == "ok" else "BROKEN"
        elif status in kinds:
            verdict = "caught"
        elif status == "ok" and ok_probe:
            verdict = "held (probe)"
        elif status == "ok" and ok_honest and sp and worst <= 1 / HONEST:
            verdict = "honest times"
        else:
            verdict = "MISSED"
            missed += 1
        oh, os_ = old.get(f, ("", ""))
        osp = speedups(old_med, oh, twin_old) if oh else {}
        # Under the old protocol: did the cheat get through (ok, faster than its twin)?
        old_verdict = ("-" if not os_ or f in ("tiled.cu", "naive.cu") else
                       "FOOLED" if os_ == "ok" and osp and max(osp.values()) > 1 / HONEST else
                       "honest" if os_ == "ok" else "caught")
        fmt = lambda d: f"{gmean(d.values()):.3f}" if d else "-"
        print(f"{f:26} {os_ or '-':18} {fmt(osp):>11} {old_verdict:>7}  {status:18} {fmt(sp):>11}  {verdict}")
        out.append({"candidate": f, "old_status": os_, "old_speedup_vs_twin": fmt(osp), "old_verdict": old_verdict,
                    "new_status": status, "new_speedup_vs_twin": fmt(sp), "verdict": verdict})
    with open(path("verdicts.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0]) if out else ["candidate"])
        w.writeheader()
        w.writerows(out)
    print(f"\n{len(new)} candidates, {missed} missed (speedup: the honest twin's graph time / the candidate's, "
          "geomean over shapes)")


def cost():
    names = {}
    for side in ("old", "new", "old2"):
        log = path(f"cost-{side}.log")
        if not os.path.exists(log):
            continue
        for line in open(log):
            m = re.match(r"^([0-9a-f]{16}) +\S+ +(.*)$", line)
            if m:
                names["k-" + m.group(1)] = m.group(2).strip()
    sides = {s: medians(rows(f"cost-{s}.csv")) for s in ("old", "new", "old2")}
    keys = sorted(set(sides["old"]) & set(sides["new"]))
    out = []
    print(f"\n{'method':58} {'shape':16} {'old us':>9} {'new us':>9} {'new/old':>8} {'old2/old':>8}")
    ratios = {"candidate": [], "baseline": []}
    for k in keys:
        o, n, o2 = sides["old"][k], sides["new"][k], sides["old2"].get(k)
        name = names.get(k[0], k[0])
        kind = "candidate" if k[0].startswith("k-") else "baseline"
        ratios[kind].append(n / o)
        print(f"{name[:58]:58} {k[1]:16} {o:9.2f} {n:9.2f} {n / o:8.3f} {o2 / o if o2 else float('nan'):8.3f}")
        out.append({"method": name, "shape": k[1], "old_us": o, "new_us": n, "new_over_old": n / o,
                    "old2_over_old": o2 / o if o2 else ""})
    for kind, r in ratios.items():
        if r:
            print(f"geomean new/old, {kind}s: {gmean(r):.3f} over {len(r)}")
    with open(path("cost_times.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["method", "shape", "old_us", "new_us", "new_over_old", "old2_over_old"])
        w.writeheader()
        w.writerows(out)
    if os.path.exists(path("cost_wall.txt")):
        wall = dict(line.split() for line in open(path("cost_wall.txt")) if line.strip())
        print("wall time of the same evaluations (tuning throughput): " +
              ", ".join(f"{s} {float(v):.1f} s" for s, v in wall.items()) +
              (f"; new/old {float(wall['new']) / float(wall['old']):.2f}x" if "new" in wall and "old" in wall else ""))


def chain_timer():
    table = rows("bench_chain.csv")
    g, c = medians(table, "graph"), medians(table, "chain")
    out = []
    print(f"\n{'method':24} {'shape':16} {'graph us':>9} {'chain us':>9} {'chain/graph':>11}")
    for k in sorted(set(g) & set(c)):
        print(f"{k[0]:24} {k[1]:16} {g[k]:9.2f} {c[k]:9.2f} {c[k] / g[k]:11.3f}")
        out.append({"method": k[0], "shape": k[1], "graph_us": g[k], "chain_us": c[k], "chain_over_graph": c[k] / g[k]})
    with open(path("chain_timer.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["method", "shape", "graph_us", "chain_us", "chain_over_graph"])
        w.writeheader()
        w.writerows(out)


if __name__ == "__main__":
    verdicts()
    cost()
    chain_timer()
