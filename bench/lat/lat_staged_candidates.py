#!/usr/bin/env python3
"""Spec list (`cudal2 eval --spec-list`) of lat_staged candidates (src/kernels/lat_staged_gemm.cuh):
for every shape, every tile of the family's space with the split counts (one cluster, up to 16)
that fill about one wave of the H100's 132 SMs, and half of that.

    python3 bench/lat/lat_staged_candidates.py SHAPES [--layouts tn,nn] [--min-ctas 8] [--stages deep] > LIST

SHAPES: lines "M,N,K" (# comments). No ranking: the list is every tile at its one-wave split
counts, so the measurement, not a model, decides.
"""
import argparse
import sys

SMS = 132
# (tile M, N, K, warps M, N, stages): src/codegen/family_lat_staged.cpp's enumeration.
TILES = [(bm, bn, bk, wm, wn, st)
         for bm, bn, wm, wn in [(32, 32, 2, 2), (32, 64, 2, 2), (64, 32, 2, 2), (64, 64, 2, 2), (64, 128, 2, 4),
                                (128, 64, 4, 2), (128, 128, 4, 2)]
         for bk, st in [(64, 4), (64, 8), (32, 8)]
         if not (bm == 128 and bn == 128 and bk == 64 and st == 8)]
# --stages deep: only the 8-deep rings (and 128x128's 4-deep one, its deepest at tile K 64).
DEEP = [t for t in TILES if t[5] == 8 or (t[0] == 128 and t[1] == 128)]


def ceil_div(a, b):
    return (a + b - 1) // b


def candidates(m, n, k, layout, min_ctas, tiles_list):
    out = []
    for bm, bn, bk, wm, wn, st in tiles_list:
        tiles = ceil_div(m, bm) * ceil_div(n, bn)
        if tiles > SMS:
            continue
        fit = [s for s in (1, 2, 4, 8, 16) if tiles * s <= SMS and s <= ceil_div(k, bk)]
        for s in sorted({fit[-1], max(1, fit[-1] // 2)}):
            if tiles * s < min_ctas and s != fit[-1]:
                continue
            out.append(f"lat_staged {layout} f32 tile={bm}x{bn}x{bk} warps={wm}x{wn} stages={st} | splits={s}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes")
    ap.add_argument("--layouts", default="tn")
    ap.add_argument("--min-ctas", type=int, default=8, help="drop the half split count below this many CTAs")
    ap.add_argument("--stages", choices=["all", "deep"], default="all")
    a = ap.parse_args()
    n_out = 0
    lines = []
    for line in open(a.shapes):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m, n, k = (int(x) for x in line.split(","))
        for layout in a.layouts.split(","):
            for c in candidates(m, n, k, layout, a.min_ctas, DEEP if a.stages == "deep" else TILES):
                lines.append(f"{m},{n},{k} {c}")
                n_out += 1
    print(f"# lat_staged candidates: every tile at its one-wave split count and half of it, layouts {a.layouts}")
    print("\n".join(lines))
    print(f"{n_out} candidates", file=sys.stderr)


if __name__ == "__main__":
    main()
