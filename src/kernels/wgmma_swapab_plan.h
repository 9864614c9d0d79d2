// Host-side planning for the `wgmma_swapab` family (src/kernels/wgmma_swapab.cuh) and its CPU
// tests: which tiles and split counts exist, the grid, each split's K range, shared-memory sizes
// and the auto split count. Plain C++17, no CUDA, everything constexpr.
#ifndef CUDAL2_WGMMA_SWAPAB_PLAN_H
#define CUDAL2_WGMMA_SWAPAB_PLAN_H
#include <cstdint>

namespace cudal2_swapab_plan {
namespace {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One K tile is 64 fp16 = one 128-byte swizzle row, as in the wgmma family.
constexpr int kTileK = 64;
constexpr int kSmemBudget = 227 * 1024;  // H100 max dynamic shared memory per block
// Up to 1023 bytes to align the stages to 1024 (the 128-byte swizzle atom) and the barriers.
constexpr int kSmemSlack = 1024 + 256;
constexpr int kMaxStages = 16;  // two mbarriers per stage fit in the slack's 256 bytes
// Split-K is a cluster of that many CTAs along K, reduced through distributed shared memory:
// at most 8 (the portable cluster size), and a power of two so that it divides the tile's M rows.
constexpr int kMaxSplits = 8;

// The tile M (the problem's small M, which lands on wgmma's N) is 8, 16, 32 or 64; the tile N
// (the problem's N, wgmma's M) 64 per consumer warpgroup: 64 or 128.
constexpr bool tile_m_ok(int bm) { return bm == 8 || bm == 16 || bm == 32 || bm == 64; }
constexpr bool tile_n_ok(int bn) { return bn == 64 || bn == 128; }
constexpr bool splits_ok(int s) { return s == 1 || s == 2 || s == 4 || s == 8; }
// A cluster of 2 CTAs that share an operand instead of K: "2x1" pairs neighbouring M tiles, which
// read the same B tile (each loads half of it and multicasts it to both); "1x2" pairs neighbouring
// N tiles, which share the A tile (halves of at least 8 rows: one 1024-byte swizzle atom each).
// Without split-K: a cluster is either a split group or an operand pair.
constexpr bool cluster_ok(int cm, int cn) {
  return (cm == 1 && cn == 1) || (cm == 2 && cn == 1) || (cm == 1 && cn == 2);
}
constexpr bool cluster_tile_ok(int cm, int cn, int bm) { return cluster_ok(cm, cn) && (cn == 1 || bm >= 16); }
constexpr int consumers(int bn) { return bn / 64; }
// The consumer warpgroups, then one producer warp.
constexpr int threads(int bn) { return consumers(bn) * 128 + 32; }

constexpr int stage_bytes(int bm, int bn) { return (bm + bn) * kTileK * 2; }
// The fp32 tile each CTA leaves for the reduction: rows of M, each BN + 4 floats (the 4 spread
// the accumulator fragment's writes over all 32 banks and keep rows 16-byte aligned).
constexpr int red_pitch(int bn) { return bn + 4; }
constexpr int red_bytes(int bm, int bn) { return bm * red_pitch(bn) * 4; }
constexpr int smem_bytes(int bm, int bn, int stages) {
  return stages * stage_bytes(bm, bn) + red_bytes(bm, bn) + kSmemSlack;
}
constexpr int max_stages(int bm, int bn) {
  const int s = (kSmemBudget - kSmemSlack - red_bytes(bm, bn)) / stage_bytes(bm, bn);
  return s < kMaxStages ? s : kMaxStages;
}

struct Grid {
  int64_t m_tiles = 0, n_tiles = 0;
  int splits = 1;
  // CTAs: split fastest (a cluster is `splits` consecutive CTAs), then M tiles (the CTAs that read
  // the same B tile run side by side, so B comes from L2 after the first), then N tiles. A 2x1 pair
  // is two consecutive M tiles; a 1x2 pair two consecutive CTAs on N tiles 2j and 2j+1.
  constexpr int64_t ctas() const { return m_tiles * n_tiles * splits; }
};
// An operand pair's (cm x cn, splits 1) tile counts are rounded up to even.
constexpr Grid grid(int64_t m, int64_t n, int bm, int bn, int splits, int cm = 1, int cn = 1) {
  return {ceil_div(ceil_div(m, bm), cm) * cm, ceil_div(ceil_div(n, bn), cn) * cn, splits};
}
struct Cta {
  int64_t tile_m = 0, tile_n = 0;
  int split = 0;
};
// cn: the cluster's extent along N (a compile-time constant in the kernel).
constexpr Cta cta_of(int64_t block, const Grid& g, int cn = 1) {
  if (cn == 2) {
    const int64_t pair = block / 2;
    return {pair % g.m_tiles, pair / g.m_tiles * 2 + block % 2, 0};
  }
  return {(block / g.splits) % g.m_tiles, block / g.splits / g.m_tiles, static_cast<int>(block % g.splits)};
}

// Split s of `splits` over k_tiles K tiles: [begin, end), the ranges tile K in order and differ
// in length by at most one (a split with an empty range adds zeros).
struct KRange {
  int64_t begin = 0, end = 0;
};
constexpr KRange k_range(int64_t k_tiles, int splits, int s) {
  return {k_tiles * s / splits, k_tiles * (s + 1) / splits};
}
constexpr int64_t k_tiles(int64_t k) { return ceil_div(k, kTileK); }

// splits = 0 (auto): the most splits whose CTAs still fit on the SMs at one per SM, keeping at
// least 4 K tiles per split (shorter ranges cannot fill the pipeline). Measured on the H100
// (decode shapes, 64 tiles): 2 splits (128 CTAs) beat 4 and 8 by 1.2-3x; clusters of 4 and 8 CTAs
// that each fill an SM's shared memory are slow to place.
constexpr int auto_splits(int64_t tiles, int64_t k_tiles, int sms) {
  int s = 1;
  while (s < kMaxSplits && tiles * s * 2 <= sms && k_tiles >= int64_t{8} * s) s *= 2;
  return s;
}
constexpr int resolve_splits(int requested, int64_t tiles, int64_t k_tiles, int sms, bool pair = false) {
  return requested > 0 ? requested : pair ? 1 : auto_splits(tiles, k_tiles, sms);
}

// TMA addresses rows of 16-byte multiples: A's rows are K long, B's K ("tn") or N ("nn").
constexpr bool tma_rows_ok(int64_t n, int64_t k, bool tn) { return k % 8 == 0 && (tn || n % 8 == 0); }

}  // namespace
}  // namespace cudal2_swapab_plan
#endif
