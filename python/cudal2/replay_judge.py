#!/usr/bin/env python3
"""A stand-in for `cudal2 judge` that answers from recorded measurements (replay), no GPU.

`cudal2 tune --replay STORE ...` (and `cudal2 eval --replay STORE ...`) run with this judge: the
tuning loop on a CPU against a store of real measurements (e.g. bench/results/h100/grid-cublaslt/store,
imported with `python3 python/cudal2/store_csv.py import DIR FILE.db`). The CLI finds it beside
itself (src/cli/python_script.hpp) and names the store in the environment variable CUDAL2_REPLAY_DB;
run by hand, the store is the judge's second argument (after "judge"). Tested by
tests/replay/replay_test.py.

Protocol (src/judge/jobs.cpp, run_lt_space_job / run_eval_job): one JSON request per stdin
line, one JSON answer per stdout line.
  {"op": "lt-space", "shapes": [[m,n,k]...], "layouts": [...], "accum": ...}
      -> each problem's recorded specs (status ok, offline, graph timer): cuBLASLt's heuristic
         top-1 first, as the real judge lists it (src/baselines/cublaslt_space.hpp: the
         heuristic's suggestions first, in its ranking), then the others in the order they were
         first measured; "max" is ignored: the recorded space is the space.
         The store does not record which spec is the heuristic's top-1 (nor its ranking of the
         others: the grid campaign measured each problem's specs in the run's global order, not
         in the heuristic's). It records the heuristic's time in every row's job
         (baseline cublaslt-heuristic-<layout>), and the top-1 is in the space (cublaslt_space
         rebuilds the heuristic's suggestions bytewise), so it is inferred as the spec whose times
         match the heuristic's timed in the same jobs best (smallest |median log(spec/heuristic)|;
         ties: the first measured). Problems where no spec is within 1% of it are counted by
         bench/rl/evaluate_policy_replay.py (summary.json, heuristic_top1_inferred_within_1pct).
  {"op": "eval", "candidates": [{"name", "spec", ...}], "baselines": [...], "shapes": [...]}
      -> each candidate's recorded offline graph-timer summary on each shape; a spec never
         measured (ok) on that shape and layout -> "unsupported"; free-form sources -> "error".
         Baselines come from the recorded baseline_json of the shape's rows; one not recorded
         -> "unsupported".
  {"op": "canary"} -> healthy (no GPU to ask: a recorded verdict stands as recorded).
CUDAL2_REPLAY_JOB_SECONDS=S (default 0): every eval request takes at least S seconds, a stand-in for
the GPU's time per judge job. Without it a replayed job costs next to nothing, and tuners sharing a
store (each with its judge, as on several machines) have no GPU time to divide between them.
Where a spec was measured more than once on a problem, the replayed value is the row with the
median of the recorded medians (lower middle for an even count): a recorded row, no new noise.
bench/rl/evaluate_policy_replay.py uses the same rule for its references.
Only mode offline and timer graph are recorded: ask tune for `--mode offline --timers graph`.
"""
import json
import math
import os
import statistics
import sys
import time

try:
    from . import store_csv
except ImportError:  # run as a program (the tuner starts it) or loaded as a file: its sibling
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import store_csv


def summary(row):
    med, p10, p90, mn, n = row
    return {"median": med, "p10": p10 if p10 is not None else med, "p90": p90 if p90 is not None else med,
            "min": mn if mn is not None else med, "n": n or 1}


def pick_median(rows, key):
    rows = sorted(rows, key=key)
    return rows[(len(rows) - 1) // 2]


class Replay:
    def __init__(self, path, accum="f32"):
        self.con = store_csv.open_store(path)  # read only, its schema checked
        self.text_to_hash = store_csv.spec_hashes_by_text(self.con)
        self.cache = {}
        self.top1 = {}  # (m, n, k, accum, layout) -> (hash, |log(spec / heuristic)|) of the inferred top-1
        first, self.gpus = store_csv.recorded_gpus(self.con)
        self.gpu = os.environ.get("CUDAL2_REPLAY_GPU") or first or "unknown"
        # Every GPU and layout recorded, so that a problem's rows are found through the store's index
        # (store_csv.offline_graph_ok_rows); a tuner spent seconds per problem on a grid-sized store
        # without them.
        self.layouts = store_csv.recorded_layouts(self.con)

    def problems(self):
        """Every (m, n, k) the store has measurements of."""
        return store_csv.recorded_problems(self.con)

    def shape(self, m, n, k, accum):
        """{layout: {hash: (first_id, text, summary)}}, {baseline: summary}"""
        key = (m, n, k, accum)
        if key in self.cache:
            return self.cache[key]
        rows = store_csv.offline_graph_ok_rows(self.con, self.gpus, accum, self.layouts, m, n, k)
        grouped = {}
        baselines = {}
        same_job = {}  # (layout, hash) -> [log(spec / heuristic top-1) timed in one job]
        for i, layout, h, text, med, p10, p90, mn, ns, bj in rows:
            grouped.setdefault(layout, {}).setdefault(h, [i, text, []])[2].append((med, p10, p90, mn, ns))
            try:
                for name, t in json.loads(bj).items():
                    g = t["offline"]["graph"]
                    baselines.setdefault(name, []).append(
                        (g["median"], g.get("p10"), g.get("p90"), g.get("min"), g.get("n", 1)))
                    if name == f"cublaslt-heuristic-{layout}" and med > 0 and g["median"] > 0:
                        same_job.setdefault((layout, h), []).append(math.log(med / g["median"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                pass
        spaces = {}
        for layout, specs in grouped.items():
            spaces[layout] = {h: (first, text, summary(pick_median(s, lambda r: r[0])))
                              for h, (first, text, s) in specs.items()}
            # The heuristic's top-1 (see the module's docstring): first in the space's order.
            scored = [(abs(statistics.median(same_job[(layout, h)])), first, h)
                      for h, (first, _, _) in spaces[layout].items() if (layout, h) in same_job]
            if scored:
                miss, _, h = min(scored)
                self.top1[key + (layout,)] = (h, miss)
        base = {name: summary(pick_median(v, lambda r: r[0])) for name, v in baselines.items()}
        self.cache[key] = (spaces, base)
        return self.cache[key]

    def ordered(self, m, n, k, accum, layout):
        """The problem's space as the judge lists it: [(hash, text, summary)], heuristic top-1 first."""
        spaces, _ = self.shape(m, n, k, accum)
        specs = sorted(spaces.get(layout, {}).items(), key=lambda kv: kv[1][0])
        top = self.top1.get((m, n, k, accum, layout), (None, None))[0]
        specs.sort(key=lambda kv: kv[0] != top)  # stable: the rest keep their recorded order
        return [(h, text, s) for h, (_, text, s) in specs]

    def lt_space(self, req):
        accum = req.get("accum", "f32")
        out = []
        for m, n, k in req["shapes"]:
            for layout in req["layouts"]:
                out.append({"shape": [m, n, k], "layout": layout,
                            "specs": [t for _, t, _ in self.ordered(m, n, k, accum, layout)]})
        return {"ok": True, "gpu": self.gpu, "spaces": out}

    def eval(self, req):
        accum = req.get("accum", "f32")
        shapes = []
        for m, n, k in req["shapes"]:
            spaces, base = self.shape(m, n, k, accum)
            methods = []
            for c in req["candidates"]:
                text = c.get("spec", "")
                h = self.text_to_hash.get(text)
                if h is None and c.get("name", "").startswith("k-"):
                    h = c["name"][2:]
                layout = c.get("layout") or (text.split()[1] if text else "nn")
                rec = spaces.get(layout, {}).get(h) if h else None
                if not text:
                    methods.append({"method": c["name"], "status": "error", "failure": "",
                                    "reason": "replay: free-form sources were never recorded", "rel_err": None,
                                    "timing": {}})
                elif rec is None:
                    methods.append({"method": c["name"], "status": "unsupported", "failure": "",
                                    "reason": "replay: not measured on this shape and layout", "rel_err": None,
                                    "timing": {}})
                else:
                    methods.append({"method": c["name"], "status": "ok", "failure": "", "reason": "",
                                    "rel_err": None, "timing": {"offline": {"graph": rec[2]}}})
            for b in req.get("baselines", []):
                if b in base:
                    methods.append({"method": b, "status": "ok", "failure": "", "reason": "", "rel_err": None,
                                    "timing": {"offline": {"graph": base[b]}}})
                else:
                    methods.append({"method": b, "status": "unsupported", "failure": "",
                                    "reason": "replay: baseline not recorded", "rel_err": None, "timing": {}})
            shapes.append({"m": m, "n": n, "k": k, "methods": methods})
        return {"ok": True, "gpu": self.gpu, "shapes": shapes}


def main():
    args = [a for a in sys.argv[1:] if a != "judge"]
    path = args[0] if args else os.environ.get("CUDAL2_REPLAY_DB", "")
    if not path or not os.path.exists(path):
        print(f"replay_judge: no store (set CUDAL2_REPLAY_DB or pass a path; got '{path}')", file=sys.stderr)
        return 1
    try:
        job_seconds = float(os.environ.get("CUDAL2_REPLAY_JOB_SECONDS") or 0)
    except ValueError:
        job_seconds = -1
    if not 0 <= job_seconds <= 3600:
        print("replay_judge: CUDAL2_REPLAY_JOB_SECONDS must be seconds from 0 to 3600 (got "
              f"'{os.environ.get('CUDAL2_REPLAY_JOB_SECONDS', '')[:40]}')", file=sys.stderr)
        return 1
    try:
        replay = Replay(path)
    except store_csv.StoreError as e:
        print(f"replay_judge: {e}", file=sys.stderr)
        return 1
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op", "")
            if op == "lt-space":
                ans = replay.lt_space(req)
            elif op == "eval":
                started = time.monotonic()
                ans = replay.eval(req)
                time.sleep(max(0.0, job_seconds - (time.monotonic() - started)))
            elif op == "canary":  # no GPU to ask: recorded verdicts stand as recorded
                ans = {"ok": True, "healthy": True, "reason": "replay: no GPU", "gpu": replay.gpu}
            else:
                ans = {"ok": False, "error": "unknown op"}
        except Exception as e:  # an answer, never a dead judge
            ans = {"ok": False, "error": f"replay_judge: {type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
