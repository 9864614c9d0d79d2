#!/usr/bin/env python3
"""How much the H100's tuning data speeds up tuning the H200, by REPLAY of recorded measurements (no GPU).

The ground truth is the H200 transfer confirmation (bench/results/h200/transfer/store1: 422 paper
shapes, each measured in one job with ~9 candidates per layout). A problem is (shape, layout); its
space is the specs recorded ok for it there; a "measurement" is the recorded offline graph-timer
median (python/cudal2/replay_judge.py's rule). Per problem: evaluations until the best so far is
within 2% of the problem's best recorded time, and the geometric mean over problems of
(best recorded / best so far) after R evaluations. Starts compared:

  transfer  the H100 table's entry (tables/h100-f32.json) first when the space holds it, then the
            cold order below (the H100 entry not repeated);
  rl-warm   `cudal2 tune --search rl` with a policy trained (replay) on the H100 cuBLASLt-space
            grid store's other 578 shapes (--train-shapes says why not all), one run over all 422
            shapes with `--round 0 --per-problem 1` (docs/rl-policy.md, "The whole grid in one
            run"): each round gives every problem one evaluation, the first is the policy's
            zero-shot pick, later ones learn from the H200 results of every shape so far.
            `cudal2 suggest --candidates` gives the zero-shot pick alone (zero-shot.csv).
            rl-warm-per-shape: bench/rl/evaluate_policy_replay.py's search (a fresh copy of the
            policy per shape, one spec a round) on a sample of --per-shape shapes;
  rl-cold   the same run with no policy file (an untrained policy);
  heuristic cuBLASLt's heuristic top-1 first (inferred as replay_judge.py does), then the rest of
            the space in a seeded random order (the heuristic's ranking of the others is not recorded);
  random    the space in a seeded random order;
  transfer-then-rl-cold  computed from rl-cold's run, not a run: the H100 entry moved first.
Static orders (transfer, heuristic, random) are averaged over --seeds. The store's recorded order
puts the transfer candidates (H100 and old H200 entries, H100 runners-up) first, so the rl runs see
a copy of the store whose rows are shuffled (--list-seed): the judge lists top-1 first, then that
shuffle, and nothing of the recorded order leaks the H100's choice into the cold starts.

GPU time (assumed, stated in the README): the confirmation timed ~18 candidates and 4 baselines
in ~1.1 s a shape, one job; --eval-s (0.05 s) per evaluation and --job-s (0.2 s: the job's 4
baselines) per judge job, one job per shape per round, give 18 * 0.05 + 0.2 = 1.1 s for such a job.

  python3 python/cudal2/store_csv.py import bench/results/h100/grid-cublaslt/store /tmp/xr/h100grid.db
  python3 python/cudal2/store_csv.py import bench/results/h200/transfer/store1 /tmp/xr/h200.db
  python3 bench/h200/transfer_replay.py --cudal2 build/cudal2 --h100 /tmp/xr/h100grid.db \\
      --h200 /tmp/xr/h200.db --out bench/results/h200/transfer/replay --work /tmp/xr/work
"""
import argparse
import csv
import json
import os
import random
import shutil
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "rl"))
from evaluate_policy_replay import BASELINES, Replay, evals_to_within, gmean, rows_in_order, run  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "bench"))
from _analysis import measured_shapes, store_csv  # noqa: E402

ROUNDS = (1, 2, 3, 4, 6, 8)


def shuffled_copy(src, dst, seed):
    """A copy of the store whose measurement rows are renumbered in a seeded random order."""
    for f in (dst, dst + "-wal", dst + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    shutil.copy(src, dst)
    store_csv.shuffle_measurements(dst, seed)


def cold_order(space, top1, seed):
    """Heuristic top-1 first, then the rest in a seeded random order."""
    rest = sorted(h for h in space if h != top1)
    random.Random(seed).shuffle(rest)
    return ([top1] if top1 in space else []) + rest


def after(order, times, ref, r):
    """best recorded / best of the first r evaluations (0 when none of them was measured)."""
    got = [times[h] for h in order[:r] if h in times]
    return ref / min(got) if got else 0.0


def gpu_seconds(evals, a):
    """{problem: evaluations} -> assumed GPU seconds: each evaluation, and one job per shape per round."""
    rounds = {}
    for (m, n, k, _), e in evals.items():
        rounds[(m, n, k)] = max(rounds.get((m, n, k), 0), e)
    return sum(evals.values()) * a.eval_s + sum(rounds.values()) * a.job_s


def evals(order, space, best, p):
    """Evaluations of problem p until within 2% of its best recorded time (space + 1: never)."""
    return evals_to_within(order[p], space[p], best[p]) or len(space[p]) + 1


def metrics(runs, space, best, a):
    """The mean over runs ({problem: order}) of each measure, over the problems of space."""
    per = {}
    for o in runs:
        evp = {p: evals(o, space, best, p) for p in space}
        ev = list(evp.values())
        # gmean leaves out the zeros: problems with nothing measured yet (counted in unmeasured_problems)
        g = {r: gmean([after(o[p], space[p], best[p], r) for p in space])
             for r in range(1, max(map(len, space.values())) + 1)}
        rt = min((r for r in g if g[r] >= 1 / 1.02), default=len(g) + 1)  # the table's geomean within 2%
        got = {"evals_mean": statistics.mean(ev), "evals_median": statistics.median(ev),
               "first_within_2pct": sum(e == 1 for e in ev) / len(ev), "all_within_2pct_evals": max(ev),
               **{f"gmean_after_{r}": g[r] for r in ROUNDS},
               **{f"within_2pct_after_{r}": sum(e <= r for e in ev) / len(ev) for r in ROUNDS},
               "unmeasured_problems": sum(1 for p in space if not any(h in space[p] for h in o[p])),
               "evals_table_within_2pct": rt,
               "gpu_min_table_within_2pct": gpu_seconds({p: min(rt, len(space[p])) for p in space}, a) / 60,
               # each problem stopped as soon as it is within 2% (an oracle: a tuner cannot know)
               "gpu_min_every_problem": gpu_seconds(evp, a) / 60}
        for k, v in got.items():
            per.setdefault(k, []).append(v)
    return dict({k: statistics.mean(v) for k, v in per.items()}, runs=len(runs))


def per_shape_orders(work, space):
    """{problem: order} of the per-shape rl runs (search rl-warm-per-shape) that finished."""
    out = {}
    d = os.path.join(work, "per-shape")
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if f.endswith(".db") and not os.path.exists(os.path.join(d, f[:-3] + ".json")):
            out.update((p, o) for p, o in rows_in_order(os.path.join(d, f)).items() if p in space)
    return out


def per_shape(a, shapes, policy, common, log, env):
    """bench/rl/evaluate_policy_replay.py's search: per shape a fresh copy of the H100 policy, one spec a
    round, the whole space; on --per-shape shapes drawn with --list-seed (the rl runs take seconds each)."""
    d = os.path.join(a.work, "per-shape")
    os.makedirs(d, exist_ok=True)
    for m, n, k in sorted(random.Random(a.list_seed).sample(shapes, min(a.per_shape, len(shapes)))):
        pol, db = os.path.join(d, f"{m}-{n}-{k}.json"), os.path.join(d, f"{m}-{n}-{k}.db")
        if os.path.exists(db) and not os.path.exists(pol):
            continue  # finished by an earlier run
        for f in (db, db + "-wal", db + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        shutil.copy(policy, pol)
        run([a.cudal2, "tune", "--shape", f"{m},{n},{k}", "--search", "rl", "--policy-file", pol, "--round", "1",
             "--db", db] + common, log, env)
        os.remove(pol)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudal2", default="build/cudal2")
    ap.add_argument("--h100", required=True, help="SQLite store of the H100 grid-cublaslt campaign (training)")
    ap.add_argument("--h200", required=True, help="SQLite store of the H200 transfer confirmation (store1)")
    ap.add_argument("--table", default=os.path.join(ROOT, "tables", "h100-f32.json"))
    ap.add_argument("--train-round", type=int, default=64)
    # A policy's observations are keyed by problem (shape, layout, accum), not by GPU: trained on the
    # same shapes, the H200 run takes every spec the H100 measured there as measured, skips them and
    # skips the zero-shot pick (src/search/rl_policy.cpp, propose). "all" shows that; "others" (the
    # default) trains on the H100 shapes the H200 store does not hold.
    ap.add_argument("--train-shapes", choices=("others", "all"), default="others")
    ap.add_argument("--seeds", default="1,2,3,4,5", help="seeds of the static random orders")
    ap.add_argument("--list-seed", type=int, default=1, help="shuffle of the store the rl runs' judge lists")
    ap.add_argument("--eval-s", type=float, default=0.05, help="assumed GPU seconds per evaluation")
    ap.add_argument("--job-s", type=float, default=0.2, help="assumed GPU seconds per judge job (shape x round)")
    ap.add_argument("--stages", default="train,zero,search,report")
    ap.add_argument("--searches", default="rl-warm,rl-cold,rl-warm-per-shape", help="the search stage's runs")
    ap.add_argument("--per-shape", type=int, default=40, help="rl-warm-per-shape: shapes in its sample")
    ap.add_argument("--out", default="bench/results/h200/transfer/replay")
    ap.add_argument("--work", default="/tmp/transfer-replay")
    a = ap.parse_args()
    stages = set(a.stages.split(","))
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    log = os.path.join(a.out, "commands.log")
    judge = os.path.join(ROOT, "python", "cudal2", "replay_judge.py")
    common = ["--families", "cublaslt", "--accum", "f32", "--mode", "offline", "--timers", "graph",
              "--baselines", BASELINES, "--judge", judge, "--no-gpu-check"]
    policy = os.path.join(a.work, "h100-policy.json")
    listed = os.path.join(a.work, "h200-listed.db")

    if "train" in stages:  # the H100 policy: every spec of the H100 grid store's shapes (not the H200's: below)
        shapes = measured_shapes(a.h100)
        if a.train_shapes == "others":
            h200 = set(measured_shapes(a.h200))
            shapes = [s for s in shapes if s not in h200]
        with open(os.path.join(a.work, "h100-shapes.txt"), "w") as f:
            f.writelines(f"{m},{n},{k}\n" for m, n, k in shapes)
        for f in (policy, os.path.join(a.work, "h100-train.db")):
            if os.path.exists(f):
                os.remove(f)
        env = dict(os.environ, CUDAL2_REPLAY_DB=os.path.abspath(a.h100))
        out = run([a.cudal2, "tune", "--shapes", os.path.join(a.work, "h100-shapes.txt"), "--search", "rl",
                   "--policy-file", policy, "--round", str(a.train_round), "--budget", "0",
                   "--db", os.path.join(a.work, "h100-train.db")] + common, log, env)
        with open(os.path.join(a.out, "train-summary.txt"), "w") as f:
            f.write("\n".join(l for l in out.splitlines() if not l.startswith("  ")) + "\n")

    if not os.path.exists(listed) or "search" in stages:
        shuffled_copy(a.h200, listed, a.list_seed)
    replay = Replay(listed)
    env = dict(os.environ, CUDAL2_REPLAY_DB=os.path.abspath(listed))
    shapes = measured_shapes(listed)
    with open(os.path.join(a.out, "h200-shapes.txt"), "w") as f:
        f.write("# the H200 transfer confirmation's shapes (bench/results/h200/transfer/store1)\n")
        f.writelines(f"{m},{n},{k}\n" for m, n, k in shapes)
    space, best, top1 = {}, {}, {}
    for m, n, k in shapes:
        spaces, _ = replay.shape(m, n, k, "f32")
        for layout, specs in spaces.items():
            p = (m, n, k, layout)
            space[p] = {h: v[2]["median"] for h, v in specs.items()}
            best[p] = min(space[p].values())
            top1[p] = replay.ordered(m, n, k, "f32", layout)[0][0]
    with open(a.table) as f:
        h100_entry = {(e["m"], e["n"], e["k"], e["layout"]): replay.text_to_hash.get(e["spec"])
                      for e in json.load(f)["entries"] if e["accum"] == "f32"}

    if "zero" in stages:  # the H100 policy's zero-shot pick per H200 problem, among its recorded space
        tsv = os.path.join(a.work, "h200-space.tsv")
        with open(tsv, "w") as f:
            for m, n, k, layout in sorted(space):
                f.writelines(f"{m},{n},{k}\t{layout}\t{t}\n" for _, t, _ in replay.ordered(m, n, k, "f32", layout))
        rows = []
        for layout in ("nn", "tn"):
            cmd = [a.cudal2, "suggest", "--policy-file", policy, "--layout", layout, "--candidates", tsv, "--json"]
            for m, n, k, l in sorted(space):
                cmd += ["--shape", f"{m},{n},{k}"] if l == layout else []
            for s in json.loads(run(cmd, log, env)):
                p = (s["m"], s["n"], s["k"], layout)
                t = space[p].get(replay.text_to_hash.get(s["spec"], s["hash"]))
                rows.append({"m": p[0], "n": p[1], "k": p[2], "layout": layout, "best_us": best[p], "pick_us": t,
                             "pick_ratio": best[p] / t if t else 0.0, "pick_is_top1": int(s.get("top1", False)),
                             "pick_is_h100_entry": int(replay.text_to_hash.get(s["spec"]) == h100_entry.get(p)),
                             "pick": s["spec"]})
        with open(os.path.join(a.out, "zero-shot.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    if "search" in stages:  # one tune run over every H200 shape, a round = one evaluation per problem
        for name in a.searches.split(","):
            if name == "rl-warm-per-shape":
                per_shape(a, shapes, policy, common, log, env)
                continue
            db, pol = os.path.join(a.work, f"{name}.db"), os.path.join(a.work, f"{name}-policy.json")
            for f in (db, db + "-wal", db + "-shm", pol):
                if os.path.exists(f):
                    os.remove(f)
            if name == "rl-warm":
                shutil.copy(policy, pol)
            out = run([a.cudal2, "tune", "--shapes", os.path.join(a.out, "h200-shapes.txt"), "--search", "rl",
                       "--policy-file", pol, "--round", "0", "--per-problem", "1", "--db", db] + common, log, env)
            with open(os.path.join(a.out, f"{name}-summary.txt"), "w") as f:
                f.write("\n".join(l for l in out.splitlines() if not l.startswith("  ")) + "\n")

    if "report" in stages:
        seeds = [int(s) for s in a.seeds.split(",")]
        orders = {}  # method -> [per seed: {problem: [hash...]}]
        orders["transfer"] = [{p: ([h100_entry[p]] if h100_entry.get(p) in space[p] else []) +
                               [h for h in cold_order(space[p], top1[p], s) if h != h100_entry.get(p)]
                               for p in space} for s in seeds]
        for name in ("rl-warm", "rl-cold"):
            db = os.path.join(a.work, f"{name}.db")
            if os.path.exists(db):
                o = rows_in_order(db)
                orders[name] = [{p: o.get(p, []) for p in space}]
        if "rl-cold" in orders:  # computed, not a run: rl-cold's order with the H100 entry moved first
            cold = orders["rl-cold"][0]
            orders["transfer-then-rl-cold"] = [{p: ([h100_entry[p]] if h100_entry.get(p) in space[p] else []) +
                                                [h for h in cold[p] if h != h100_entry.get(p)] for p in space}]
        orders["heuristic"] = [{p: cold_order(space[p], top1[p], s) for p in space} for s in seeds]
        orders["random"] = []
        for s in seeds:
            rng = random.Random(s)
            orders["random"].append({p: rng.sample(sorted(space[p]), len(space[p])) for p in sorted(space)})
        summary = {"problems": len(space), "shapes": len(shapes),
                   "mean_space": sum(map(len, space.values())) / len(space),
                   "gpu_min_whole_space": gpu_seconds({p: len(v) for p, v in space.items()}, a) / 60,
                   "h100_entry_in_space": sum(1 for p in space if h100_entry.get(p) in space[p]),
                   "eval_s": a.eval_s, "job_s": a.job_s, "seeds": seeds}
        summary["methods"] = {name: metrics(runs, space, best, a) for name, runs in orders.items()}
        rows = [{"m": p[0], "n": p[1], "k": p[2], "layout": p[3], "space": len(space[p]),
                 "h100_entry_in_space": int(h100_entry.get(p) in space[p])} for p in sorted(space)]
        for name, runs in orders.items():  # per problem: evaluations to within 2% (mean over runs)
            for r, p in zip(rows, sorted(space)):
                r[name] = round(statistics.mean(evals(o, space, best, p) for o in runs), 2)
        ps = per_shape_orders(a.work, space)
        if ps:  # the per-shape protocol's sample, every start on the same problems
            sub = {p: space[p] for p in ps}
            got = {"rl-warm-per-shape": metrics([ps], sub, best, a)}
            got.update((name, metrics(runs, sub, best, a)) for name, runs in orders.items())
            summary["per_shape_sample"] = {"problems": len(sub), "methods": got}
        with open(os.path.join(a.out, "per-problem.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        zs = os.path.join(a.out, "zero-shot.csv")
        if os.path.exists(zs):
            with open(zs) as f:
                z = list(csv.DictReader(f))
            summary["zero_shot"] = {"problems": len(z), "gmean": gmean([float(r["pick_ratio"]) for r in z]),
                                    "within_2pct": sum(float(r["pick_ratio"]) >= 1 / 1.02 for r in z) / len(z),
                                    "picks_top1": sum(int(r["pick_is_top1"]) for r in z),
                                    "picks_h100_entry": sum(int(r["pick_is_h100_entry"]) for r in z)}
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
