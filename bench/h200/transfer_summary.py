#!/usr/bin/env python3
"""What the transfer confirmation (bench/h200/transfer_call.sh) measured, per shape in one job:
auto-tuning (best of NN/TN) over the best candidate of each origin, geometric mean over shapes.

  python3 bench/h200/transfer_summary.py [--before H200_TABLE.json] STORE_DIR [STORE_DIR ...]

--before: the H200 table the transfer started from (default tables/h200-f32.json; once the
transfer's export is committed, the older one: `git show a061551:tables/h200-f32.json`).

Origins (each shape's candidates, either layout, best of them): `h200-table` (this GPU's table
entry before the transfer), `h100-table` (the other GPU's entry: the zero-shot transfer),
`h100-search` (the H100 cuBLASLt-space campaign's runners-up), `heuristic` (cuBLASLt's own
suggestions: auto-tuning's candidates), `all` (the best of every candidate: what export picks).
Ratios > 1: faster than auto-tuning. In-job ratios favour the picked candidate (the best of ~18
noisy medians); a fresh run of the runtime is the honest number.
"""
import argparse
import csv
import json
import math
import os
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from _analysis import store_csv  # noqa: E402  (a store's CSV export, its tables .gz or not)


def table_specs(path):
    with open(path) as f:
        return {(e["m"], e["n"], e["k"], e["layout"]): e["spec"] for e in json.load(f)["entries"] if e["accum"] == "f32"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default=os.path.join(ROOT, "tables/h200-f32.json"))
    ap.add_argument("stores", nargs="+")
    a = ap.parse_args()
    h200 = table_specs(a.before)
    h100 = table_specs(os.path.join(ROOT, "tables/h100-f32.json"))
    best = defaultdict(dict)  # shape -> origin -> best us
    at = {}
    for d in a.stores:
        with store_csv.open_csv(os.path.join(d, "specs.csv")) as f:
            text = {r["hash"]: r["text"] for r in csv.DictReader(f)}
        with store_csv.open_csv(os.path.join(d, "measurements.csv")) as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok" or r["timer"] != "graph" or not r["median_us"]:
                    continue
                s = (int(r["m"]), int(r["n"]), int(r["k"]))
                key = s + (r["layout"],)
                bl = json.loads(r["baseline_json"])
                a = min(bl[x]["offline"]["graph"]["median"] for x in ("cublaslt-autotune-nn", "cublaslt-autotune-tn"))
                at[s] = a
                spec, us = text[r["spec_hash"]], float(r["median_us"])
                origins = ["all"]
                if h200.get(key) == spec:
                    origins.append("h200-table")
                if h100.get(key) == spec:
                    origins.append("h100-table")
                if not spec.startswith("cublaslt"):
                    origins.append("compiled")
                for o in origins:
                    best[s][o] = min(best[s].get(o, 1e30), us)
    print(f"{len(at)} shapes")
    print("origin        shapes  geomean(autotune/best)  below 0.99  below 0.97")
    for o in ("all", "h200-table", "h100-table", "compiled"):
        r = [at[s] / best[s][o] for s in at if o in best[s]]
        if r:
            g = math.exp(sum(map(math.log, r)) / len(r))
            print(f"{o:12s} {len(r):7d}  {g:22.4f}  {sum(x < 0.99 for x in r):10d}  {sum(x < 0.97 for x in r):10d}")
    # zero-shot: per shape the H100 entry where it exists, else the H200 entry
    r = [at[s] / best[s].get("h100-table", best[s].get("h200-table", 1e30)) for s in at
         if "h100-table" in best[s] or "h200-table" in best[s]]
    print(f"h100 entry, else h200's: {len(r)} shapes, geomean {math.exp(sum(map(math.log, r)) / len(r)):.4f}")


if __name__ == "__main__":
    main()
