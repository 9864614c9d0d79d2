// Host-side planning of the `stream` family (src/kernels/stream_gemm.cuh) shared by the kernel,
// the runtime's rule for shapes no table holds and the CPU tests: grid, K ranges, workspace.
// Plain C++17, no CUDA, everything constexpr.
#ifndef CUDAL2_STREAM_PLAN_H
#define CUDAL2_STREAM_PLAN_H
#include <cstddef>
#include <cstdint>

#include "mma_plan.h"

namespace cudal2_stream_plan {
namespace {

using cudal2_plan::ceil_div;
using cudal2_plan::round_up;

// K elements one warp streams per pipeline stage: 64 fp16 of each weight row (128 bytes, one
// line), the unit K is split in.
constexpr int kStageK = 64;
// Largest split count (CTAs sharing one output tile's K); bounds the workspace.
constexpr int kMaxSplits = 64;
using cudal2_plan::kMaxGridYZ;

// x: token (M) blocks, y: B-row (N) tiles, z: K splits. The token blocks of one B tile are
// adjacent in launch order, so they run together and B's bytes come from DRAM once.
struct Grid {
  int64_t x = 1, y = 1, z = 1;
};

// rows: N rows one CTA covers (warps_r * 16 * row_tiles); toks: M rows one CTA covers (8 * tok_tiles).
constexpr Grid grid(int64_t m, int64_t n, int rows, int toks, int splits) {
  return {ceil_div(m, toks), ceil_div(n, rows), splits < 1 ? 1 : splits};
}
constexpr bool grid_fits(const Grid& g) {
  return g.x >= 1 && g.x <= INT32_MAX && g.y >= 1 && g.y <= kMaxGridYZ && g.z >= 1 && g.z <= kMaxSplits;
}

// Stages [begin, end) of split s: balanced in whole stages, contiguous, in split order.
struct Range {
  int64_t begin = 0, end = 0;
};
constexpr Range split_stages(int64_t k, int splits, int s) {
  const int64_t t = ceil_div(k, kStageK);
  const int64_t base = t / splits, extra = t % splits;
  const int64_t t0 = s * base + (s < extra ? s : extra);
  return {t0, t0 + base + (s < extra ? 1 : 0)};
}

// Split-K workspace: one arrival counter per output tile (x * y of them, in the zero area the
// runtime keeps), then one fp32 partial per (output tile, split): rows x toks values each.
constexpr size_t counters_bytes(const Grid& g) { return static_cast<size_t>(round_up(g.x * g.y * 4, 256)); }
constexpr size_t workspace_bytes(const Grid& g, int rows, int toks) {
  if (g.z <= 1) return 0;
  return counters_bytes(g) + static_cast<size_t>(g.x * g.y * g.z) * rows * toks * sizeof(float);
}

}  // namespace
}  // namespace cudal2_stream_plan
#endif
