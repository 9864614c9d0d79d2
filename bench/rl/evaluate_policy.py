#!/usr/bin/env python3
"""The rl policy's evaluation protocol (docs/rl-policy.md) for `cudal2 tune --search rl`, on a GPU, against a store.

  1. Split the paper grid's 1000 shapes by a fixed seed: 80% training, 20% held out.
  2. Train: `cudal2 tune --search rl --policy-file policy.json` on the training shapes, a fixed
     budget of specs (each measured on every training shape).
  3. Zero-shot: before any held-out measurement, `cudal2 suggest` picks one spec per held-out
     problem; `cudal2 eval` times each pick with cuBLASLt's heuristic top-1 and auto-tuning in the
     same job. Reported: geometric mean of (tuned best / zero-shot time) and of
     (tuned best / cuBLASLt heuristic time). Target: >= 0.95.
  4. Search: on the held-out problems, `cudal2 tune` with rl (warm: a copy of the trained policy),
     random and exhaustive order, each with the same budget (a fraction of the space) into its own
     store. Reported per method: evaluations until a spec within 2% of the exhaustive sweep's best
     (the reference store), as a fraction of the space, and the share of problems that got there.
     Target (rl): within 2% using <= 10% of the evaluations.

The reference is a store holding an exhaustive sweep of the same space on the held-out shapes
(`--reference`, e.g. the whole-grid exhaustive campaign's merged store); without one, the script
runs that sweep first (`--run-reference`: the expensive part).

Status: NOT RUN yet on a GPU (bench/rl/evaluate_policy_replay.py ran the same protocol by replay). Example:
  bench/rl/evaluate_policy.py --cudal2 build/cudal2 --reference results/exhaustive.db \\
      --families sm90_cutlass,mma,tiny --space core --out results/policy-eval
"""
import argparse
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import gmean, offline_graph_rows  # noqa: E402

PAPER_SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384]


def paper_grid():
    # The order of cudal2::grid("paper"): M outermost, K innermost.
    return list(itertools.product(PAPER_SIZES, PAPER_SIZES, PAPER_SIZES))


def split(seed, frac=0.8):
    g = paper_grid()
    random.Random(seed).shuffle(g)
    cut = int(round(frac * len(g)))
    return g[:cut], g[cut:]


def write_shapes(path, shapes):
    with open(path, "w") as f:
        f.write("# bench/rl/evaluate_policy.py split\n")
        for m, n, k in shapes:
            f.write(f"{m},{n},{k}\n")


def run(cmd, log):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, text=True)
        f.write(r.stdout)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}; see {log}")
    return r.stdout


def ok_graph_rows(db, shapes=None):
    """(m, n, k, layout) -> [(id, spec_hash, median or None)] of offline graph rows, in id order."""
    out = defaultdict(list)
    for i, m, n, k, layout, h, status, med, bj in offline_graph_rows(db):
        if shapes is not None and (m, n, k) not in shapes:
            continue
        out[(m, n, k, layout)].append((i, h, med if status == "ok" else None, bj))
    return out


def best_of(rows):
    t = [med for _, _, med, _ in rows if med]
    return min(t) if t else None


def evals_to_within(rows, ref, tol=1.02):
    """Distinct specs evaluated (in order) until one is within tol of ref; None if never."""
    seen = set()
    for _, h, med, _ in rows:
        seen.add(h)
        if med and med <= tol * ref:
            return len(seen)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudal2", default="build/cudal2")
    ap.add_argument("--reference", help="store with an exhaustive sweep of the space on the held-out shapes")
    ap.add_argument("--run-reference", action="store_true", help="run that sweep first (into OUT/reference.db)")
    ap.add_argument("--families", default="sm90_cutlass,mma,tiny")
    ap.add_argument("--space", default="core")
    ap.add_argument("--accum", default="f32")
    ap.add_argument("--seed", type=int, default=2026, help="the split's fixed seed")
    ap.add_argument("--train-specs", type=int, default=64,
                    help="training budget in specs (each measured on every training shape)")
    ap.add_argument("--budget-frac", type=float, default=0.10, help="held-out budget as a fraction of the space")
    ap.add_argument("--round", type=int, default=4, help="specs per propose/observe round")
    ap.add_argument("--random-seeds", default="1,2,3")
    ap.add_argument("--out", default="results/policy-eval")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "commands.log")
    train, held = split(a.seed)
    train_file, held_file = os.path.join(a.out, "train.txt"), os.path.join(a.out, "held.txt")
    write_shapes(train_file, train)
    write_shapes(held_file, held)
    common = ["--families", a.families, "--space", a.space, "--accum", a.accum, "--mode", "offline",
              "--timers", "graph"]

    ref_db = a.reference or os.path.join(a.out, "reference.db")
    if a.run_reference:
        run([a.cudal2, "tune", "--shapes", held_file, "--search", "exhaustive", "--db", ref_db] + common, log)
    if not os.path.exists(ref_db):
        sys.exit(f"no reference store {ref_db}: pass --reference or --run-reference")
    held_set = set(held)
    ref_rows = ok_graph_rows(ref_db, held_set)
    ref = {p: best_of(r) for p, r in ref_rows.items() if best_of(r)}
    space = {p: len({h for _, h, _, _ in r}) for p, r in ref_rows.items()}
    if not ref:
        sys.exit(f"{ref_db} holds no ok offline graph measurement of a held-out shape")

    # 2. Train. A round's specs are compiled once and measured on every training shape (run_tune),
    # so the budget counts specs, and each is an evaluation on 800 x 2 problems.
    policy = os.path.join(a.out, "policy.json")
    run([a.cudal2, "tune", "--shapes", train_file, "--search", "rl", "--policy-file", policy, "--round",
         str(a.round), "--budget", str(a.train_specs), "--db", os.path.join(a.out, "train.db")] + common, log)
    zero = os.path.join(a.out, "policy-zero-shot.json")
    shutil.copy(policy, zero)

    # 3. Zero-shot picks, timed with cuBLASLt's heuristic and auto-tuning in the same jobs.
    picks = defaultdict(list)  # spec text -> [(shape, layout)]
    for layout in ("nn", "tn"):
        cmd = [a.cudal2, "suggest", "--policy", zero, "--layout", layout, "--accum", a.accum, "--json",
               "--families", a.families, "--space", a.space]
        for m, n, k in held:
            cmd += ["--shape", f"{m},{n},{k}"]
        for p in json.loads(run(cmd, log)):
            picks[p["spec"]].append(((p["m"], p["n"], p["k"]), layout))
    zs_db = os.path.join(a.out, "zero-shot.db")
    for spec, problems in picks.items():
        cmd = [a.cudal2, "eval", "--spec", spec, "--db", zs_db, "--mode", "offline", "--timers", "graph",
               "--baselines", "cublaslt-heuristic-nn,cublaslt-heuristic-tn,cublaslt-autotune-nn,cublaslt-autotune-tn"]
        for (m, n, k), _ in problems:
            cmd += ["--shape", f"{m},{n},{k}"]
        run(cmd, log)
    zs_rows = ok_graph_rows(zs_db, held_set)
    zs_ratio, lt_ratio = [], []
    for p, r in zs_rows.items():
        if p not in ref:
            continue
        t = best_of(r)
        zs_ratio.append(ref[p] / t if t else 0.0)  # a failing pick counts as 0 (excluded from gmean)
        try:
            bj = json.loads(r[-1][3])
            h = bj[f"cublaslt-heuristic-{p[3]}"]["offline"]["graph"]["median"]
            lt_ratio.append(ref[p] / h)
        except (KeyError, TypeError, ValueError):
            pass

    # 4. Held-out search, one shape at a time (so each proposal is for that shape's two problems),
    # the same budget for every method: budget-frac of the shape's space (both layouts).
    methods = ["rl"] + [f"random-{x}" for x in a.random_seeds.split(",")] + ["exhaustive"]
    pol = os.path.join(a.out, "policy-held.json")
    shutil.copy(zero, pol)  # rl keeps learning from one held-out shape to the next
    results = {}
    for name in methods:
        db = os.path.join(a.out, f"held-{name}.db")
        if name == "rl":
            args = ["--search", "rl", "--policy-file", pol]
        elif name.startswith("random-"):
            args = ["--search", "random", "--seed", name.split("-", 1)[1]]
        else:
            args = ["--search", "exhaustive"]
        for m, n, k in held:
            size = sum(space.get((m, n, k, lay), 0) for lay in ("nn", "tn"))
            if not size:
                continue
            budget = max(1, math.ceil(a.budget_frac * size))
            run([a.cudal2, "tune", "--shape", f"{m},{n},{k}", "--round", str(a.round), "--budget", str(budget),
                 "--db", db] + args + common, log)
        rows = ok_graph_rows(db, held_set)
        ev, fr, reached = [], [], 0
        for p in ref:
            e = evals_to_within(rows.get(p, []), ref[p])
            if e is not None:
                reached += 1
                ev.append(e)
                fr.append(e / space[p])
        results[name] = {"problems": len(ref), "reached": reached, "mean_evals": sum(ev) / len(ev) if ev else None,
                         "mean_fraction_of_space": sum(fr) / len(fr) if fr else None}

    summary = {
        "split_seed": a.seed, "train_shapes": len(train), "held_shapes": len(held), "families": a.families,
        "space": a.space, "budget_frac": a.budget_frac,
        "zero_shot_gmean_vs_tuned": gmean(zs_ratio), "zero_shot_failed": sum(1 for x in zs_ratio if x == 0),
        "cublaslt_heuristic_gmean_vs_tuned": gmean(lt_ratio), "search": results,
    }
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"held-out problems: {len(ref)} (shapes x layouts), budget {100 * a.budget_frac:.0f}% of each shape's space")
    print(f"zero-shot pick / tuned best (gmean): {summary['zero_shot_gmean_vs_tuned']:.3f}  (target >= 0.95); "
          f"cuBLASLt heuristic top-1: {summary['cublaslt_heuristic_gmean_vs_tuned']:.3f}")
    print(f"{'method':<12} {'reached 2%':>11} {'mean evals':>11} {'of space':>9}")
    for name, r in results.items():
        me = f"{r['mean_evals']:.1f}" if r["mean_evals"] is not None else "-"
        mf = f"{100 * r['mean_fraction_of_space']:.1f}%" if r["mean_fraction_of_space"] is not None else "-"
        print(f"{name:<12} {r['reached']:>5}/{r['problems']:<5} {me:>11} {mf:>9}")


if __name__ == "__main__":
    main()
