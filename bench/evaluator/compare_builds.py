#!/usr/bin/env python3
"""Summary of bench/evaluator/compare_builds.sh: the two builds' sample tunes (same candidates,
same verdicts, time ratio NEW/BASE per candidate and shape) and their runtime libraries measured
in one process (runtime-* = NEW, runtime-b-* = BASE). Baselines give the noise floor of two
processes (the tunes) and of one (the runtime run: auto-tuning against itself is 1 by
construction, so the spread of NEW/BASE there is read against the 3% band).

    python3 bench/evaluator/compare_builds.py OUT_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _analysis import gmean, load  # noqa: E402


def rows(path):
    out = {}
    if not os.path.exists(path):
        path += ".gz"
        if not os.path.exists(path):
            return out
    for r in load(path):
        if r["mode"] != "offline" or r["timer"] != "graph":
            continue
        out[(r["method"], r["layout"], int(r["m"]), int(r["n"]), int(r["k"]))] = r
    return out


def ratio_line(name, ratios):
    if not ratios:
        return f"{name}: nothing to compare"
    rs = sorted(r for r, _ in ratios)
    worst = max(ratios, key=lambda x: abs(x[0] - 1))
    beyond = sum(abs(r - 1) > 0.03 for r, _ in ratios)
    return (f"{name}: {len(rs)} pairs, geomean {gmean(rs):.4f}, min {rs[0]:.3f}, max {rs[-1]:.3f}, "
            f"beyond 3%: {beyond}, furthest {worst[0]:.3f} at {worst[1]}")


def main():
    out = sys.argv[1]
    base, new = rows(os.path.join(out, "tune-BASE.csv")), rows(os.path.join(out, "tune-NEW.csv"))
    if not base and not new:
        print("tune: not run")
    cands = lambda t: {k for k in t if k[0].startswith("k-")}  # candidates are named by spec hash
    print(f"tune: BASE {len(cands(base))} candidate rows, NEW {len(cands(new))}, "
          f"in both {len(cands(base) & cands(new))}")
    verdicts = [(k, base[k]["status"], new[k]["status"]) for k in cands(base) & cands(new)
                if base[k]["status"] != new[k]["status"]]
    print(f"tune: verdicts that differ: {len(verdicts)}" + "".join(f"\n  {k}: {b} -> {n}" for k, b, n in verdicts))
    for label, keep in (("tune candidates NEW/BASE", lambda k: k[0].startswith("k-")),
                        ("tune baselines NEW/BASE (noise of two processes)", lambda k: not k[0].startswith("k-"))):
        pairs = [(float(new[k]["median_us"]) / float(base[k]["median_us"]), "{}x{}x{} {} {}".format(*k[2:], k[1], k[0]))
                 for k in base.keys() & new.keys() if keep(k) and base[k]["status"] == "ok" == new[k]["status"]]
        print(ratio_line(label, pairs))
    rt = rows(os.path.join(out, "runtime.csv"))
    pairs, vs_new, vs_base = [], [], []
    for (meth, lay, m, n, k), r in rt.items():
        if meth != f"runtime-{lay}" or r["status"] != "ok":
            continue
        b = rt.get((f"runtime-b-{lay}", lay, m, n, k))
        a = rt.get((f"cublaslt-autotune-{lay}", lay, m, n, k))
        if b and b["status"] == "ok":
            pairs.append((float(r["median_us"]) / float(b["median_us"]), f"{m}x{n}x{k} {lay}"))
            if a and a["status"] == "ok":
                vs_new.append(float(a["median_us"]) / float(r["median_us"]))
                vs_base.append(float(a["median_us"]) / float(b["median_us"]))
    print(ratio_line("runtime NEW/BASE time, one process", pairs))
    if vs_new:
        print(f"runtime vs auto-tuning (same layout): NEW {gmean(vs_new):.4f}, BASE {gmean(vs_base):.4f}")
    failed = [(k, r["status"]) for k, r in rt.items() if r["status"] != "ok"]
    print(f"runtime rows not ok: {len(failed)}" + "".join(f"\n  {k}: {s}" for k, s in failed[:10]))


if __name__ == "__main__":
    main()
