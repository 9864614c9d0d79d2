#!/usr/bin/env python3
"""Per-shape candidates of the lat family for a side-by-side confirmation run (`cudal2 eval
--spec-list`), chosen from an exploration measured on a sample of shapes.

  python3 bench/lat/lat_candidates.py --explore EXPLORE.csv[.gz] --space bench/spaces/lat_explore.txt \
      --shapes TARGETS.txt [--shapes MORE.txt] --table tables/h100-f32.json --top 4 > list.txt

For every target shape the explored shapes nearest to it (in log2 M, log2 N, log2 K) vote: each
explored spec scores the weighted mean of log(auto-tuning time / its time) over the neighbours,
and the `--top` best specs are written for both layouts (the explored TN spec and its NN twin),
beside the table's own entries for that shape (what the runtime runs there now), so that the
confirmation job times the incumbent and the challengers side by side with auto-tuning as the
baseline. Explored rows come from a `cudal2 tune --csv` file, whose candidates are named by spec
hash ("k-<hash>"): the space file maps hashes back to spec texts.
"""
import argparse
import csv
import gzip
import json
import math
import sys
from collections import defaultdict


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def read_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


def canonical(text):
    # The space files are written canonically already ("... | splits=N"); the hash is of that text.
    return " ".join(text.split())


def read_csv_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--explore", action="append", required=True, help="tune/eval CSV of the exploration")
    ap.add_argument("--space", action="append", required=True, help="spec file(s) the exploration measured")
    ap.add_argument("--shapes", action="append", required=True, help="target shapes, one M,N,K per line")
    ap.add_argument("--table", help="cudal2 table whose entries for each shape join the list")
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--neighbours", type=int, default=3)
    a = ap.parse_args()

    by_hash = {}
    for p in a.space:
        for line in read_lines(p):
            t = canonical(line)
            by_hash["k-" + fnv1a64(t)] = t
    times = defaultdict(dict)  # shape -> spec -> graph median (us)
    auto = {}  # shape -> best auto-tuning median (us)
    for p in a.explore:
        for r in read_csv_rows(p):
            if r["mode"] != "offline" or r["timer"] != "graph" or r["status"] != "ok":
                continue
            shape = (int(r["m"]), int(r["n"]), int(r["k"]))
            us = float(r["median_us"])
            if r["method"].startswith("cublaslt-autotune"):
                auto[shape] = min(auto.get(shape, math.inf), us)
            elif r["method"] in by_hash:
                spec = by_hash[r["method"]]
                times[shape][spec] = min(times[shape].get(spec, math.inf), us)
    explored = [s for s in times if s in auto]
    if not explored:
        sys.exit("lat_candidates: no explored shape has both candidates and auto-tuning")

    entries = defaultdict(list)
    if a.table:
        with open(a.table) as f:
            for e in json.load(f)["entries"]:
                if e["run"]["kernel"] >= 0:
                    entries[(e["m"], e["n"], e["k"])].append(e["run"]["spec"])

    def feat(s):
        return [math.log2(x) for x in s]

    targets = []
    for p in a.shapes:
        for line in read_lines(p):
            targets.append(tuple(int(x) for x in line.split(",")))
    print(f"# lat candidates: top {a.top} of {len(by_hash)} explored specs from the {a.neighbours} nearest of "
          f"{len(explored)} explored shapes, both layouts, beside the table's entries")
    for t in targets:
        ft = feat(t)
        near = sorted(explored, key=lambda s: sum(abs(x - y) for x, y in zip(feat(s), ft)))[: a.neighbours]
        score = defaultdict(float)
        weight = defaultdict(float)
        for s in near:
            w = 1.0 / (1.0 + sum(abs(x - y) for x, y in zip(feat(s), ft)))
            for spec, us in times[s].items():
                score[spec] += w * math.log(auto[s] / us)
                weight[spec] += w
        ranked = sorted(score, key=lambda spec: -score[spec] / weight[spec])[: a.top]
        shape = f"{t[0]},{t[1]},{t[2]}"
        for spec in ranked:
            print(f"{shape} {spec}")
            print(f"{shape} {spec.replace(' tn ', ' nn ', 1)}")
        for spec in entries.get(t, []):
            print(f"{shape} {spec}")


if __name__ == "__main__":
    main()
