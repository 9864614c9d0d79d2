#!/usr/bin/env python3
"""Spec list (`cudal2 eval --spec-list`) of lat_staged candidates (src/kernels/lat_staged_gemm.cuh):
for every shape, each tile below with the split counts (one cluster, up to 16) that fill about one
wave of the H100's 132 SMs, and half of that, each with the ring that requests its K slice whole
(or the deepest that fits).

    python3 bench/lat/lat_staged_candidates.py SHAPES [--layouts tn,nn] [--min-ctas 8] [--tiles decode] [--max-m M] > LIST

SHAPES: lines "M,N,K" (# comments). No ranking: the list is every tile at its one-wave split
counts, so the measurement, not a model, decides.
"""
import argparse
import sys

SMS = 132
# (tile M, N, K, warps M, N, kwarps): valid lat_staged tiles (src/codegen/family_lat_staged.cpp's
# rules), 4 to 16 warps, the k steps of a stage split over kwarps warps.
TILES = [
    (32, 32, 64, 1, 1, 4),
    (32, 32, 64, 2, 2, 2),
    (32, 32, 128, 1, 1, 4),
    (32, 64, 64, 1, 2, 4),
    (64, 32, 64, 2, 1, 4),
    (64, 64, 64, 2, 2, 2),
    (64, 64, 128, 2, 2, 4),
    (128, 128, 64, 4, 2, 2),
]
# Decode (--tiles decode: M of a few tokens, weights N x K streamed once): 16-row tiles waste no
# rows of A, and every CTA reads its own columns of B once.
DECODE_TILES = [
    (16, 64, 128, 1, 2, 4),
    (16, 128, 128, 1, 4, 2),
    (16, 128, 64, 1, 4, 2),
    (32, 64, 128, 1, 2, 4),
]
SMEM_BUDGET = 227 * 1024 - 1024
RINGS = [4, 6, 8, 12, 16, 24, 32]  # stage counts offered (each one is a build)


def ceil_div(a, b):
    return (a + b - 1) // b


def ring_bytes(bm, bn, bk, stages, tn):
    b_stage = bn * (bk + 8) if tn else bk * (bn + 8)
    return stages * (bm * (bk + 8) + b_stage) * 2


def stages_for(bm, bn, bk, kw, tn, k_tiles):
    """The smallest offered ring that requests the CTA's whole K slice up front (k_tiles + 1
    stages), else the deepest that fits in shared memory: bytes in flight set a CTA's bandwidth."""
    fits = [r for r in RINGS if max(ring_bytes(bm, bn, bk, r, tn), kw * bm * bn * 4) <= SMEM_BUDGET]
    if not fits:
        return None
    whole = [r for r in fits if r >= k_tiles + 1]
    return whole[0] if whole else fits[-1]


def candidates(m, n, k, layout, min_ctas, tiles_set=TILES):
    out = []
    for bm, bn, bk, wm, wn, kw in tiles_set:
        tiles = ceil_div(m, bm) * ceil_div(n, bn)
        if tiles > SMS or bm >= 2 * max(m, 32) or bn >= 2 * max(n, 32):  # over a wave, or mostly empty tiles
            continue
        fit = [s for s in (1, 2, 4, 8, 16) if tiles * s <= SMS and s <= ceil_div(k, bk)]
        for s in sorted({fit[-1], max(1, fit[-1] // 2)}):
            if tiles * s < min_ctas and s != fit[-1]:
                continue
            st = stages_for(bm, bn, bk, kw, layout == "tn", ceil_div(ceil_div(k, s), bk))
            if st is None:
                continue
            out.append(f"lat_staged {layout} f32 tile={bm}x{bn}x{bk} warps={wm}x{wn} kwarps={kw} stages={st} | splits={s}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes")
    ap.add_argument("--layouts", default="tn")
    ap.add_argument("--min-ctas", type=int, default=8, help="drop the half split count below this many CTAs")
    ap.add_argument("--tiles", choices=["default", "decode"], default="default", help="tile set (decode: 16-row tiles)")
    ap.add_argument("--max-m", type=int, default=0, help="only shapes with M at most this (0: all)")
    a = ap.parse_args()
    n_out = 0
    lines = []
    for line in open(a.shapes):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m, n, k = (int(x) for x in line.split(","))
        if a.max_m and m > a.max_m:
            continue
        for layout in a.layouts.split(","):
            for c in candidates(m, n, k, layout, a.min_ctas, DECODE_TILES if a.tiles == "decode" else TILES):
                lines.append(f"{m},{n},{k} {c}")
                n_out += 1
    print(f"# lat_staged candidates: every tile at its one-wave split count and half of it, deep rings, layouts {a.layouts}")
    print("\n".join(lines))
    print(f"{n_out} candidates", file=sys.stderr)


if __name__ == "__main__":
    main()
