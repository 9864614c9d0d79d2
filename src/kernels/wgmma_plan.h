// Host-side planning for the `wgmma` family (src/kernels/wgmma_gemm.cuh) and its CPU tests: tile
// counts, the persistent grid, the tile order (raster + swizzle), split-K (work items, the auto
// split count, the workspace), shared-memory sizes and the alignment rules TMA imposes. Plain C++17, no CUDA,
// everything constexpr.
#ifndef CUDAL2_WGMMA_PLAN_H
#define CUDAL2_WGMMA_PLAN_H
#include <cstddef>
#include <cstdint>

// Internal linkage, like everything in a kernel artifact but its C ABI (several artifacts share
// one process).
namespace cudal2_wgmma_plan {
namespace {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One K tile is 64 fp16 = one 128-byte swizzle row of TMA and of the wgmma descriptor.
constexpr int kTileK = 64;
constexpr int kSmemBudget = 227 * 1024;  // H100 max dynamic shared memory per block
// Bytes beyond the stages: up to 1023 to align the stages to 1024 (the 128-byte swizzle atom),
// and the barriers' room.
constexpr int kBarrierBytes = 256;
constexpr int kSmemSlack = 1024 + kBarrierBytes;
// The barriers (two 8-byte mbarriers a stage, two ping-pong turns) fit in that room: 15 stages.
constexpr int kMaxStages = kBarrierBytes / 16 - 1;

// One producer warpgroup, and either one consumer warpgroup per 64 rows of the tile (cooperative:
// the consumers share each tile) or two consumer warpgroups that take whole tiles in turn
// (ping-pong: one stores its tile while the other computes the next).
constexpr int consumers(int bm, bool pingpong = false) { return pingpong ? 2 : bm / 64; }
constexpr int stage_bytes(int bm, int bn) { return (bm + bn) * kTileK * 2; }
// The TMA-store epilogue: per consumer warpgroup two 64x64 fp16 buffers (8 KB each), filled in
// turn while the previous one drains to global memory.
constexpr int kEpiChunk = 64 * 64 * 2;
constexpr int epi_bytes(int bm, bool pingpong = false) { return consumers(bm, pingpong) * 2 * kEpiChunk; }
// Its buffers are 64 columns wide: a narrower tile (N 32) stores C from registers and has none.
constexpr bool tma_epilogue(int bn) { return bn >= 64; }
constexpr int own_bytes(int bm, int bn, bool pingpong = false) {
  return tma_epilogue(bn) ? epi_bytes(bm, pingpong) : 0;
}
constexpr int smem_bytes(int bm, int bn, int stages, bool pingpong = false) {
  return stages * stage_bytes(bm, bn) + own_bytes(bm, bn, pingpong) + kSmemSlack;
}
constexpr int max_stages(int bm, int bn, bool pingpong = false) {
  const int fit = (kSmemBudget - kSmemSlack - own_bytes(bm, bn, pingpong)) / stage_bytes(bm, bn);
  return fit < kMaxStages ? fit : kMaxStages;
}
constexpr int threads(int bm, bool pingpong = false) { return (consumers(bm, pingpong) + 1) * 128; }
// Ping-pong: a consumer warpgroup holds a whole tile's accumulators, at most 128 fp32 registers per
// thread (64x256 or 128x128) within the 224 setmaxnreg gives it.
constexpr bool pingpong_fits(int bm, int bn) { return bm * bn <= 128 * 128; }

struct Tiles {
  int64_t m = 0, n = 0;  // tiles along M and N
  constexpr int64_t count() const { return m * n; }
};
constexpr Tiles tiles(int64_t m, int64_t n, int bm, int bn) { return {ceil_div(m, bm), ceil_div(n, bn)}; }
constexpr int64_t k_tiles(int64_t k) { return ceil_div(k, kTileK); }

// Persistent grid: one CTA per SM (at most one work item each when there are fewer), a multiple
// of the cluster size so every cluster is whole.
constexpr int64_t persistent_ctas(int64_t items, int sms, int cluster) {
  int64_t c = items < sms ? items : sms;
  c = ceil_div(c, cluster) * cluster;
  const int64_t most = int64_t{sms / cluster} * cluster;  // whole clusters that fit on the GPU
  return c > most && most > 0 ? most : c;
}
constexpr int64_t persistent_ctas(const Tiles& t, int sms, int cluster) {
  return persistent_ctas(t.count(), sms, cluster);
}

// What the persistent loop deals out: output tiles, or for a 2-CTA cluster pairs of tiles along
// M (2x1) or N (1x2), the CTA of rank r taking tile 2u + r of the pair (past the edge: a tile of
// zeros it computes but does not store, so that its half of the shared operand still arrives).
constexpr Tiles cluster_units(const Tiles& t, int cluster_m, int cluster_n) {
  return {ceil_div(t.m, cluster_m), ceil_div(t.n, cluster_n)};
}

// Tile order. raster 1 (along M): consecutive tile ids walk down M; 2 (along N): along N.
// swizzle s (1, 2, 4, 8): the walk zigzags across a band of s tiles of the other dimension, so
// the tiles in flight at once form a block about s wide instead of a line (L2 reuse of A and B).
// 0 (heuristic): along M when there are at least as many N tiles as M tiles, else along N (the
// bands are cut across the longer dimension).
constexpr int resolve_raster(int raster, const Tiles& t) {
  if (raster == 1 || raster == 2) return raster;
  return t.n >= t.m ? 1 : 2;
}

struct Coord {
  int64_t m = 0, n = 0;  // tile coordinates
};
// Tile id (0 <= id < t.count()) to tile coordinates; a bijection for every raster and swizzle.
constexpr Coord tile_coord(int64_t id, const Tiles& t, int raster, int swizzle) {
  const bool along_m = resolve_raster(raster, t) == 1;
  const int64_t walk = along_m ? t.m : t.n;   // the dimension consecutive ids walk along
  const int64_t cross = along_m ? t.n : t.m;  // the one the bands are cut across
  const int64_t s = swizzle < 1 ? 1 : swizzle;
  const int64_t band = id / (s * walk), in = id % (s * walk);
  const int64_t width = cross - band * s < s ? cross - band * s : s;  // the last band may be narrower
  const int64_t w = in / width, c = band * s + in % width;
  return along_m ? Coord{w, c} : Coord{c, w};
}

// ---- Split-K (the `splits` knob) ------------------------------------------------------------
// splits S > 1 cuts each output tile's K tiles into S contiguous ranges; the persistent loop deals
// out (unit, split) work items. Every split stores its fp32 partial tile in the workspace and
// counts itself in on a per-tile counter; once all S have, each split sums 1/S of the tile over
// the S partials in split order (the same sum whichever finishes first) and writes that part of
// C; the last split past the wait sets the counter back to 0 for the next call.
constexpr int kMaxSplits = 64;
// splits 0 (auto) never leaves a split fewer K tiles than this.
constexpr int kMinSplitKTiles = 4;
// The artifact asks the GPU for its SM count; the search (shape_refusal, no GPU) assumes the
// H100's.
constexpr int kSplitSms = 132;

struct KRange {
  int64_t begin = 0, end = 0;  // K tiles [begin, end)
};
// K tiles of split s (0 <= s < splits <= k_tiles): balanced, the first k_tiles % splits splits
// one tile longer; contiguous, in split order, covering [0, k_tiles) exactly once.
constexpr KRange split_range(int64_t k_tiles, int splits, int s) {
  const int64_t base = k_tiles / splits, extra = k_tiles % splits;
  const int64_t begin = s * base + (s < extra ? s : extra);
  return {begin, begin + base + (s < extra ? 1 : 0)};
}

struct Work {
  int64_t unit = 0;  // scheduling unit (tile, or a cluster's pair of tiles)
  int split = 0;
  KRange k;
};
// Work item w (0 <= w < units * splits) to its unit, split and K tiles. Unit-major: the splits of
// one unit are consecutive items, so they run side by side on neighbouring CTAs (in the same wave)
// and the tile's reduction happens as soon as the wave ends, not a wave later.
constexpr Work work_of(int64_t w, int splits, int64_t k_tiles) {
  const int s = static_cast<int>(w % splits);
  return {w / splits, s, split_range(k_tiles, splits, s)};
}

// Cost of the split-K reduction, in K-tile steps of the mainloop: every split writes one fp32
// partial tile and reads one tile's worth of slices (BM x BN x 8 bytes, through L2 like the
// mainloop's (BM + BN) x 64 x 2 bytes per step), plus one step for the wait.
constexpr int64_t reduce_steps(int bm, int bn) { return ceil_div(int64_t{bm} * bn * 8, stage_bytes(bm, bn)) + 1; }

// splits 0: the split count for `units` scheduling units of k_tiles K tiles on `slots` CTAs (or
// clusters) at once. None when the units fill a wave; else the S that keeps units * S within one
// wave, no range under kMinSplitKTiles K tiles, and has the least estimated time in K-tile steps:
// ceil(k_tiles / S) of mainloop plus the reduction (reduce_steps: the same for every S, since the
// reduction is spread over the splits). The smaller S on ties.
constexpr int auto_splits(int64_t units, int64_t k_tiles, int slots, int64_t reduce) {
  if (units < 1 || slots < 1 || units >= slots) return 1;
  int64_t most = k_tiles / kMinSplitKTiles;
  if (most > slots / units) most = slots / units;
  if (most > kMaxSplits) most = kMaxSplits;
  int best = 1;
  int64_t best_cost = k_tiles;
  for (int64_t s = 2; s <= most; ++s) {
    const int64_t cost = ceil_div(k_tiles, s) + reduce;
    if (cost < best_cost) best = static_cast<int>(s), best_cost = cost;
  }
  return best;
}

// The split count a call runs with: `splits` (0: auto_splits), 1 for data-parallel.
constexpr int resolve_splits(int splits, int64_t units, int64_t k_tiles, int slots, int64_t reduce) {
  return splits == 0 ? auto_splits(units, k_tiles, slots, reduce) : splits < 1 ? 1 : splits;
}

// Every split of a tile waits for the others, so every (unit, split) item must hold a CTA (or
// cluster) of the persistent grid at once, all of them resident (a cooperative launch): one wave.
// (Items dealt over several laps would be correct but slow: a split would wait a whole lap for a
// partner dealt in the next one; measured on the H100, 4096x128x4096 with 32 splits of 32 tiles
// took 330 us against 20 in one wave.)
constexpr bool splits_fit_wave(int64_t units, int splits, int slots) { return units * splits <= slots; }

// Split-K workspace: one int counter per output tile, padded to 256 bytes, then one fp32 BM x BN
// partial tile per (output tile, split). Nothing when splits <= 1.
constexpr size_t counters_bytes(const Tiles& t) { return static_cast<size_t>(ceil_div(t.count() * 4, 256) * 256); }
constexpr size_t workspace_bytes(const Tiles& t, int bm, int bn, int splits) {
  return splits <= 1 ? 0 : counters_bytes(t) + static_cast<size_t>(t.count()) * splits * bm * bn * 4;
}
// Split-K slots the workspace may hold (2^24: 2 TB of 128x256 partials): beyond, refuse.
constexpr bool split_fits(const Tiles& t, int splits) {
  return splits <= 1 || t.count() * splits <= (int64_t(1) << 24);
}

// TMA addresses rows by a byte stride that must be a multiple of 16, from a 16-byte-aligned base:
// A (M x K) and a column-major B (N x K) need K % 8 == 0; a row-major B (K x N) needs N % 8 == 0.
constexpr bool tma_rows_ok(int64_t n, int64_t k, bool tn) { return k % 8 == 0 && (tn || n % 8 == 0); }

}  // namespace
}  // namespace cudal2_wgmma_plan
#endif
