#!/usr/bin/env python3
"""Joint variations of cuBLASLt's configuration space for a few shapes, as spec lists for
`cudal2 eval --spec-list`. `cudal2 lt-space` varies one attribute of each heuristic suggestion at a
time; a kernel that needs two changes at once (a tile with another cluster shape, a split count
with another custom option) is not in it. Two steps, both from what lt-space listed for the shape
on the GPU (so every value is one cuBLASLt names for that shape):

  product LTSPACE M,N,K [--clusters C,..] [--customs U,..] [--tiles-from CSV --top T] [--max N]
      every (tile, cluster, custom) of the listed specs' values (or of those given; with
      --tiles-from, only the T fastest tiles of an earlier step's eval CSV), one split, the first
      suggestion's stages, no swizzle: the kernel's shape and placement. A sweep of every tile
      with one cluster first, then every cluster and custom option of its fastest tiles, covers
      what the whole product (some 18,000 specs a shape) would at a tenth of the cost.
  refine LTSPACE M,N,K CSV [--top T] [--max N]
      the T fastest (tile, cluster, custom) of an eval CSV (graph timer), each with every listed
      split count (the reduction schemes lt-space paired with it) and stages id, and CTA
      swizzling on and off: the knobs on top of the shape.

LTSPACE: the output of `cudal2 lt-space --shape M,N,K --layout L --max 0` (one spec a line, a `#`
comment allowed after it). Writes `M,N,K spec` lines, each once; lt-space's own specs are among
them where the product holds them, so a step ranks against them in its own job. The judge's
can_implement (cublasLtMatmulAlgoCheck) rejects the combinations cuBLASLt does not run before
anything is timed, and the `cublaslt` family compiles nothing, so a step of a thousand specs takes
a minute or two (bench/results/h200/floor/).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
from _analysis import load  # noqa: E402  (.csv, .csv.gz or .csv.xz)

FIELDS = ("algo", "tile", "stages", "reduction", "swizzle", "custom", "inner", "cluster")


def parse_spec(text):
    """(layout, accum, {field: value}, splits) of a `cublaslt` spec line, or None."""
    text = text.split("#", 1)[0].strip()
    m = re.match(r"cublaslt (nn|tn) (f32|f16) (.*?)\s*\|\s*splits=(\d+)$", text)
    if not m:
        return None
    kv = dict(p.split("=", 1) for p in m.group(3).split())
    if set(kv) != set(FIELDS):
        return None
    return m.group(1), m.group(2), kv, int(m.group(4))


def spec_text(layout, accum, kv, splits):
    return f"cublaslt {layout} {accum} " + " ".join(f"{f}={kv[f]}" for f in FIELDS) + f" | splits={splits}"


def read_space(path):
    with open(path) as f:
        specs = [s for s in (parse_spec(line) for line in f) if s]
    if not specs:
        sys.exit(f"lt_joint_space: {path}: no cublaslt spec lines")
    return specs


def ordered(values):
    """values without repeats, in first-seen order."""
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v), out.append(v)
    return out


def emit(shape, specs, limit):
    """Prints each spec once as a spec-list line, at most limit (0: all); the counts on stderr."""
    out, seen = [], set()
    for s in specs:
        t = spec_text(*s)
        if t not in seen:
            seen.add(t), out.append(t)
    for t in out[:limit] if limit > 0 else out:
        print(f"{shape} {t}")
    print(f"lt_joint_space: {shape}: {len(out)} spec(s), {min(len(out), limit) if limit > 0 else len(out)} "
          "written", file=sys.stderr)


def product(space, tiles=None, clusters=None, customs=None):
    """The first suggestion's algorithm with every (tile, cluster, custom) given or listed."""
    layout, accum, first, _ = space[0]
    same_algo = [s for s in space if s[2]["algo"] == first["algo"]]
    tiles = tiles or ordered(s[2]["tile"] for s in same_algo)
    clusters = clusters or ordered(s[2]["cluster"] for s in same_algo)
    customs = customs or ordered(s[2]["custom"] for s in same_algo)
    specs = []
    for tile in tiles:
        for cluster in clusters:
            for custom in customs:
                kv = dict(first, tile=tile, cluster=cluster, custom=custom, reduction="0", swizzle="0")
                specs.append((layout, accum, kv, 1))
    return specs


def fastest(csv_path, shape, top, fields=("tile", "cluster", "custom")):
    """The top `fields` tuples of k- methods on shape in an eval CSV, graph timer."""
    m, n, k = shape.split(",")
    best = {}
    for r in load(csv_path):
        if (r["m"], r["n"], r["k"]) != (m, n, k) or r["timer"] != "graph" or r["status"] != "ok":
            continue
        if not r["method"].startswith("k-") or not r["median_us"]:
            continue
        try:
            p = parse_spec(json.loads(r["details"] or "{}").get("spec", ""))
        except ValueError:
            continue
        if not p:
            continue
        key = tuple(p[2][f] for f in fields)
        best[key] = min(best.get(key, float("inf")), float(r["median_us"]))
    return sorted(best, key=best.get)[:top]


def refine(space, shape, csv_path, top):
    """The top (tile, cluster, custom) of csv_path with every listed split, stages id and swizzle."""
    layout, accum, first, _ = space[0]
    same_algo = [s for s in space if s[2]["algo"] == first["algo"]]
    # The split counts lt-space listed, each with the reduction schemes it was listed with.
    split_red = ordered((s[3], s[2]["reduction"]) for s in same_algo) or [(1, "0")]
    stages = ordered(s[2]["stages"] for s in same_algo)
    specs = []
    for tile, cluster, custom in fastest(csv_path, shape, top):
        for splits, reduction in split_red:
            for st in stages:
                for swizzle in ("0", "1"):
                    kv = dict(first, tile=tile, cluster=cluster, custom=custom, stages=st, reduction=reduction,
                              swizzle=swizzle)
                    specs.append((layout, accum, kv, splits))
    return specs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("product", "refine"))
    ap.add_argument("ltspace")
    ap.add_argument("shape", help="M,N,K")
    ap.add_argument("csv", nargs="?", help="refine: the product's eval CSV (.csv or .csv.gz)")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--max", type=int, default=0, help="at most this many specs (0: all)")
    ap.add_argument("--clusters", help="product: only these cluster shapes (comma-separated, e.g. 1x1,2x1)")
    ap.add_argument("--customs", help="product: only these custom options (comma-separated)")
    ap.add_argument("--tiles-from", help="product: only the --top fastest tiles of this eval CSV")
    a = ap.parse_args()
    if not re.fullmatch(r"\d+,\d+,\d+", a.shape):
        ap.error(f"shape {a.shape!r}: not M,N,K")
    space = read_space(a.ltspace)
    if a.step == "product":
        tiles = [t for (t,) in fastest(a.tiles_from, a.shape, a.top, ("tile",))] if a.tiles_from else None
        if a.tiles_from and not tiles:
            sys.exit(f"lt_joint_space: {a.tiles_from}: no measured tile on {a.shape}")
        split = lambda v: [x for x in v.split(",") if x] if v else None  # noqa: E731
        emit(a.shape, product(space, tiles, split(a.clusters), split(a.customs)), a.max)
    else:
        if not a.csv:
            ap.error("refine needs the product's eval CSV")
        emit(a.shape, refine(space, a.shape, a.csv, a.top), a.max)


if __name__ == "__main__":
    main()
