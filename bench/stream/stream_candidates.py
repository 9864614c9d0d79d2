#!/usr/bin/env python3
"""The stream family's candidates for `cudal2 eval --spec-list`: per shape, the configurations of
its token tile (the smallest of 8, 16, 32, 64 that holds M; for M > 64 the 64-token tile, whose
token blocks share B through L2) at split counts around one full wave of resident CTAs.

    python3 bench/stream/stream_candidates.py SHAPES [--layouts tn,nn] [--accum f32] [--bulk | --occupancy] > LIST

--occupancy: configurations compiled for several CTAs an SM (`ctas=`, fewer registers a thread,
more warps streaming at once) beside the runtime's current one, each without and with stages
fetched into L2 ahead (`ahead=`), at the split count that fills one wave of the CTAs an SM holds
(TN only).

--bulk: the bulk pipeline's candidates instead (tile K over 64, TN only): the smallest token tile
of 8, 16, 32 that holds M (32 beyond), stage K 128, 256, 512, the deepest ring shared memory holds
and two stages less.

SHAPES: one M,N,K per line ('#' comments). Written for exploration sets only: the held-out set is
measured, never searched (bench/shapes/stream_heldout.txt).
"""
import argparse
import sys

SMS = 132
# (row tiles a warp, warps along rows, k-warps, ring stages) per token tile. Warps along rows
# share the tokens' loads; the ring's stages in flight are the bytes each warp keeps requested.
TN = {
    8: [(2, 4, 2, 4), (2, 2, 4, 4), (2, 8, 1, 4), (2, 4, 1, 6), (2, 2, 2, 8), (4, 2, 2, 4), (1, 4, 4, 4), (2, 4, 2, 3)],
    16: [(2, 4, 2, 3), (2, 2, 2, 6), (2, 8, 1, 3), (4, 2, 2, 3), (2, 4, 1, 6)],
    32: [(2, 4, 1, 4), (2, 8, 1, 2), (4, 4, 1, 3), (2, 4, 2, 3)],
    64: [(2, 4, 1, 4), (2, 8, 1, 2), (2, 4, 1, 3), (1, 4, 1, 4)],
}
NN = {
    8: [(4, 2, 2, 4), (4, 4, 1, 4), (2, 4, 1, 4)],
    16: [(4, 2, 2, 3), (4, 4, 1, 3)],
    32: [(4, 4, 1, 2)],
    64: [(2, 4, 1, 2)],
}


def shapes(path):
    for line in open(path):
        line = line.split("#")[0].strip()
        if line:
            yield tuple(int(x) for x in line.split(","))


def smem(layout, toks, mt, wr, wk, d):
    chunks = 4 * mt + 2 * (toks // 8) if layout == "tn" else 16 + 4 * (toks // 8)
    red = max(wk - 1, 1) * wr * mt * (toks // 8) * 32 * 16
    return wr * wk * d * chunks * 512 + red


def valid(layout, toks, mt, wr, wk, d):
    """codegen/family_stream.cpp's register and shared-memory budgets."""
    regs = 16 * mt + toks + 4 * mt * (toks // 8)
    red = max(wk - 1, 1) * wr * mt * (toks // 8) * 32 * 16
    return regs <= 200 and red <= 48 * 1024 and wr * wk <= 16 and smem(layout, toks, mt, wr, wk, d) <= 200 * 1024


def splits_around(m, n, k, toks, rows, wk, threads, smem_bytes):
    resident = max(1, min(2048 // threads, 227 * 1024 // smem_bytes))
    tiles = -(-n // rows) * -(-m // toks)
    stages = -(-k // 64)
    cap = max(1, min(64, stages // wk))
    target = max(1, -(-SMS * resident // tiles))  # one full wave at least
    return sorted({min(cap, s) for s in (target, 2 * target)})


def bulk_smem(toks, tk, stages, rows=64):
    """codegen/family_stream.cpp's bulk_smem_bytes."""
    consumers = tk // 64
    red = max(consumers - 1, 1) * (rows // 16) * (toks // 8) * 32 * 16
    return stages * consumers * (rows + toks) * 128 + red + 16 * stages + 1024


def bulk_candidates(m, n, k, accum):
    toks = next((t for t in (8, 16, 32) if t >= m), 32)
    for tk in (128, 256, 512):
        fits = [s for s in range(2, 13) if bulk_smem(toks, tk, s) <= 227 * 1024]
        if not fits:
            continue
        deepest = max(fits)
        for stages in sorted({deepest, max(2, deepest - 2)}):
            yield (f"{m},{n},{k} stream tn {accum} tile={toks}x64x{tk} warps=1x1 kwarps={tk // 64} "
                   f"stages={stages} | splits=1")


# (row tiles a warp, warps along rows, k-warps, ring stages, CTAs an SM) by token tile: the
# runtime's configuration first, then ones ptxas fits without spilling at 2-8 CTAs an SM.
OCCUPANCY = {
    8: [(2, 2, 4, 2, 1), (2, 2, 4, 1, 4), (2, 4, 2, 1, 4), (1, 2, 4, 2, 3), (2, 2, 4, 2, 2), (2, 1, 4, 1, 8)],
    16: [(2, 2, 4, 2, 1), (2, 2, 4, 1, 3), (1, 2, 4, 2, 2), (1, 2, 4, 1, 4), (2, 2, 4, 2, 2)],
}
# Stages fetched into L2 ahead (`ahead=`): none, and 4 for every configuration; 2 for the second.
AHEAD = (0, 4)


def occupancy_candidates(m, n, k, accum):
    toks = 8 if m <= 8 else 16
    for i, (mt, wr, wk, d, ctas) in enumerate(OCCUPANCY[toks]):
        rows = 16 * mt * wr
        tiles = -(-n // rows) * -(-m // toks)
        cap = max(1, min(64, -(-k // 64) // wk))
        # The most splits that keep the launch one wave of the CTAs an SM holds.
        s = max(1, min(cap, SMS * ctas // tiles))
        for ahead in AHEAD + ((2,) if i == 1 else ()):
            extra = (f" ctas={ctas}" if ctas > 1 else "") + (f" ahead={ahead}" if ahead else "")
            yield (f"{m},{n},{k} stream tn {accum} tile={toks}x{rows}x64 warps=1x{wr} kwarps={wk} stages={d}"
                   f"{extra} | splits={s}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes")
    ap.add_argument("--layouts", default="tn,nn")
    ap.add_argument("--accum", default="f32")
    ap.add_argument("--bulk", action="store_true")
    ap.add_argument("--occupancy", action="store_true")
    a = ap.parse_args()
    if a.occupancy:
        for m, n, k in shapes(a.shapes):
            print("\n".join(occupancy_candidates(m, n, k, a.accum)))
        return 0
    if a.bulk:
        for m, n, k in shapes(a.shapes):
            print("\n".join(bulk_candidates(m, n, k, a.accum)))
        return 0
    for m, n, k in shapes(a.shapes):
        toks = next((t for t in (8, 16, 32, 64) if t >= m), 64)
        for layout in a.layouts.split(","):
            for mt, wr, wk, d in (TN if layout == "tn" else NN)[toks]:
                if not valid(layout, toks, mt, wr, wk, d):
                    continue
                rows = 16 * mt * wr
                for s in splits_around(m, n, k, toks, rows, wk, 32 * wr * wk, smem(layout, toks, mt, wr, wk, d)):
                    print(f"{m},{n},{k} stream {layout} {a.accum} tile={toks}x{rows}x64 warps=1x{wr} kwarps={wk} "
                          f"stages={d} | splits={s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
