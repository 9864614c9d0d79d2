// Host-side planning shared by the `mma` and `tiny` kernel families (src/kernels/mma_gemm.cuh,
// tiny_gemm.cuh) and their CPU tests: grid, split-K ranges, workspace and shared-memory sizes.
// Plain C++17, no CUDA, everything constexpr.
#ifndef CUDAL2_MMA_PLAN_H
#define CUDAL2_MMA_PLAN_H
#include <cstddef>
#include <cstdint>

// Internal linkage (anonymous namespace), like everything in a kernel artifact but its C ABI:
// several artifacts are loaded into one process.
namespace cudal2_plan {
namespace {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Largest split count the `splits` knob takes.
constexpr int kMaxSplits = 64;
// CUDA's grid limit in y and z (x goes up to 2^31-1).
constexpr int64_t kMaxGridYZ = 65535;

struct Grid {
  int64_t x = 1, y = 1, z = 1;  // x: N tiles, y: M tiles, z: K splits
};

// K tiles of bk elements: the unit splits are made of.
constexpr int64_t k_tiles(int64_t k, int bk) { return ceil_div(k, bk); }

// The split count a launch really uses: every split gets at least one K tile, so at most
// ceil(K/bk) splits; a knob below 1 counts as 1.
constexpr int effective_splits(int64_t k, int bk, int splits) {
  const int64_t t = k_tiles(k, bk);
  const int64_t s = splits < 1 ? 1 : splits;
  return static_cast<int>(s < t ? s : (t < 1 ? 1 : t));
}

// Half-open range of K elements split s (0 <= s < splits, splits already effective) works on.
// Balanced in whole tiles: the first (tiles % splits) splits get one tile more. Ranges are
// contiguous, in split order, and together cover [0, k) exactly once.
struct KRange {
  int64_t begin = 0, end = 0;
};
constexpr KRange split_k_range(int64_t k, int bk, int splits, int s) {
  const int64_t t = k_tiles(k, bk);
  const int64_t base = t / splits, extra = t % splits;
  const int64_t t0 = s * base + (s < extra ? s : extra);
  const int64_t t1 = t0 + base + (s < extra ? 1 : 0);
  const int64_t e = t1 * bk;
  return {t0 * bk, e < k ? e : k};
}

constexpr Grid grid(int64_t m, int64_t n, int64_t k, int bm, int bn, int bk, int splits) {
  return {ceil_div(n, bn), ceil_div(m, bm), effective_splits(k, bk, splits)};
}
constexpr bool grid_fits(const Grid& g) {
  return g.x >= 1 && g.x <= INT32_MAX && g.y >= 1 && g.y <= kMaxGridYZ && g.z >= 1 && g.z <= kMaxGridYZ;
}

// Split-K workspace: one int counter per output tile (256-byte aligned block), then one fp32
// partial tile per (output tile, split). Nothing when the launch does not split.
constexpr size_t counters_bytes(const Grid& g) { return static_cast<size_t>(round_up(g.x * g.y * 4, 256)); }
constexpr size_t partials_offset(const Grid& g) { return counters_bytes(g); }
constexpr size_t workspace_bytes(const Grid& g, int bm, int bn) {
  if (g.z <= 1) return 0;
  return counters_bytes(g) + static_cast<size_t>(g.x * g.y * g.z) * bm * bn * sizeof(float);
}

// `mma` family: shared memory of `stages` stages of A (bm x bk) and B (bk x bn for NN, bn x bk
// for TN) fp16 tiles, each row padded by 8 halves (16 bytes) so ldmatrix reads hit 8 distinct
// bank quads.
constexpr int kPad = 8;
constexpr int mma_a_stage_elems(int bm, int bk) { return bm * (bk + kPad); }
constexpr int mma_b_stage_elems(int bn, int bk, bool tn) { return tn ? bn * (bk + kPad) : bk * (bn + kPad); }
constexpr int mma_smem_bytes(int bm, int bn, int bk, int stages, bool tn) {
  return stages * (mma_a_stage_elems(bm, bk) + mma_b_stage_elems(bn, bk, tn)) * 2;
}
// Accumulator floats one thread holds for a (wtm x wtn) warp tile.
constexpr int acc_floats_per_thread(int wtm, int wtn) { return wtm * wtn / 32; }

// `tiny` family: the (kwarps-1) K-slices beyond the first reduce through static shared memory.
constexpr int tiny_smem_bytes(int bm, int bn, int kwarps) {
  return (kwarps > 1 ? kwarps - 1 : 0) * bm * bn * static_cast<int>(sizeof(float));
}
// `lat` family: the same buffer, which also holds the CTA's partial tile for the cluster's
// reduction through distributed shared memory, so it has at least one slot.
constexpr int lat_smem_bytes(int bm, int bn, int kwarps) {
  return (kwarps > 2 ? kwarps - 1 : 1) * bm * bn * static_cast<int>(sizeof(float));
}
constexpr int kMaxLatSplits = 16;  // CTAs of one cluster (more than 8: non-portable on the H100)
// More splits than one cluster holds: groups of clusters of at most kLatGroupCluster CTAs (8, 4 or
// 2, picked at launch), whose sums meet in the workspace (splits a multiple of 8, up to
// kMaxLatGroupedSplits).
constexpr int kLatGroupCluster = 8;
constexpr int kMaxLatGroupedSplits = 128;
constexpr const char* lat_splits_refusal(int splits) {
  if (splits >= 1 && splits <= kMaxLatSplits) return nullptr;
  if (splits > kMaxLatSplits && splits <= kMaxLatGroupedSplits && splits % kLatGroupCluster == 0) return nullptr;
  return "lat kernels take splits=1..16 (the CTAs of one cluster) or 24..128 in steps of 8 (groups of clusters)";
}
// Grouped splits' workspace: an arrival counter per (output tile, cluster rank), 256-byte
// aligned, then one fp32 partial tile per (output tile, group).
constexpr size_t lat_counters_bytes(int64_t tiles) {
  return static_cast<size_t>(round_up(tiles * kLatGroupCluster * 4, 256));
}
constexpr size_t lat_workspace_bytes(int64_t tiles, int groups, int bm, int bn) {
  return lat_counters_bytes(tiles) + static_cast<size_t>(tiles * groups) * bm * bn * sizeof(float);
}
// `lat_staged` family: mma's stage ring, which after the mainloop holds the k-warps' fp32 partial
// tiles (the CTA's sum for the cluster's reduction), so it is at least that large.
constexpr int lat_staged_smem_bytes(int bm, int bn, int bk, int stages, bool tn, int kwarps) {
  const int ring = mma_smem_bytes(bm, bn, bk, stages, tn), partial = kwarps * bm * bn * static_cast<int>(sizeof(float));
  return ring > partial ? ring : partial;
}
// 32-bit registers of A and B fragments one thread loads per k-block of bk (a 16x32 A block is
// two 16-byte loads, an 8x32 B block one), for a (wtm x wtn) warp tile.
constexpr int tiny_fragment_regs(int wtm, int wtn, int bk) { return (wtm / 16 * 8 + wtn / 8 * 4) * (bk / 32); }

// Budgets the validity rules use.
constexpr int kSmemBudget = 227 * 1024;  // H100 max dynamic shared memory per block
constexpr int kStaticSmemBudget = 48 * 1024;
constexpr int kMaxAccFloats = 64;         // 64x32 warp tile (64x64 spilled: 128 accumulators + fragments)
constexpr int kMaxTinyFragmentRegs = 64;  // per buffer; two buffers are in flight

}  // namespace
}  // namespace cudal2_plan
#endif
