#!/usr/bin/env python3
"""Spec list (`cudal2 eval --spec-list`) of lat candidates for few-tile shapes with a long K: for
every shape and CTA tile, the split counts that fill about one wave of the H100's 132 SMs, with
groups of clusters (splits 24..128) where one cluster of 16 is not enough.

    python3 bench/lat/lat_grouped_candidates.py SHAPES [--layouts tn,nn] [--per-shape 12] > LIST

SHAPES: lines "M,N,K" (# comments). Candidates are ranked by a rough latency model (waves of
CTAs, k-blocks each warp walks through one after another, operand bytes read from L2) and the
best --per-shape kept: the measurement decides, the model only keeps the list short.
"""
import argparse
import sys

SMS = 132
# (tile M, N, K, warps M, N, kwarps, stages): valid lat tiles (src/codegen/family_lat.cpp's rules)
# from small to large, K-split over the CTA's warps so each warp has few k-blocks.
TILES = [
    (16, 16, 64, 1, 1, 8, 2),
    (32, 32, 64, 1, 1, 8, 2),
    (32, 32, 64, 1, 1, 4, 2),
    (64, 64, 32, 2, 2, 2, 2),
    (16, 64, 64, 1, 2, 4, 2),
    (16, 128, 64, 1, 4, 2, 2),
    (64, 32, 64, 2, 1, 4, 2),
    (32, 64, 64, 1, 2, 4, 2),
    (16, 16, 64, 1, 1, 4, 4),
    (32, 32, 32, 1, 1, 8, 4),
    (16, 16, 64, 1, 1, 8, 4),
]
SPLITS = [1, 2, 4, 8, 16, 32, 64, 128]
REFERENCE = (16, 16, 64, 1, 1, 8, 4)


def ceil_div(a, b):
    return (a + b - 1) // b


def spec(layout, t, splits):
    bm, bn, bk, wm, wn, kw, st = t
    stages = f" stages={st}" if st != 2 else ""
    return f"lat {layout} f32 tile={bm}x{bn}x{bk} warps={wm}x{wn} kwarps={kw}{stages} | splits={splits}"


def estimate_us(m, n, k, t, s):
    """Rough latency of one launch: waves of CTAs (two resident per SM) x (a fixed cost plus half a
    microsecond per k-block a warp walks through in sequence, fewer with deeper stages), plus the
    operand bytes every tile reads from L2 at about 6 TB/s."""
    bm, bn, bk, wm, wn, kw, st = t
    tiles, iters = ceil_div(m, bm) * ceil_div(n, bn), ceil_div(k, bk)
    waves = ceil_div(tiles * s, 2 * SMS)
    per_warp = ceil_div(ceil_div(iters, s), kw)
    l2_us = tiles * (bm + bn) * k * 2 / 6e6
    return waves * (2.0 + 0.5 * per_warp * 2 / st) + l2_us


def candidates(m, n, k, layouts, per_shape):
    scored = []
    for t in TILES:
        iters = ceil_div(k, t[2])
        for s in SPLITS:
            if s > iters or (s > 16 and s % 8):
                continue
            scored.append((estimate_us(m, n, k, t, s), t, s))
    scored.sort(key=lambda x: x[0])
    keep = [(t, s) for _, t, s in scored[:per_shape]]
    # The table's usual small-class pick, unsplit and split in two, as the reference in every job.
    for s in (1, 2):
        if (REFERENCE, s) not in keep and s <= ceil_div(k, REFERENCE[2]):
            keep.append((REFERENCE, s))
    return [spec(lay, t, s) for t, s in keep for lay in layouts]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes")
    ap.add_argument("--layouts", default="tn")
    ap.add_argument("--per-shape", type=int, default=12)
    a = ap.parse_args()
    layouts = a.layouts.split(",")
    print(f"# lat candidates for few tiles and a long K: {a.per_shape} per shape, layouts {a.layouts}")
    for line in open(a.shapes):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m, n, k = (int(x) for x in line.split(","))
        for s in candidates(m, n, k, layouts, a.per_shape):
            print(f"{m},{n},{k} {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
