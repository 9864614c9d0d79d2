// Host-side planning of the mma and tiny kernel families (src/kernels/mma_plan.h): split-K
// ranges, grids, workspace and shared-memory sizes. The kernels launch exactly what these say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/mma_plan.h"

namespace {
namespace plan = cudal2_plan;

TEST(MmaPlan, SplitsCoverEveryKElementExactlyOnce) {
  for (int64_t k : {1, 7, 31, 32, 33, 64, 65, 1000, 4097, 16384})
    for (int bk : {32, 64})
      for (int splits : {1, 2, 3, 4, 8, 16, 32, 64}) {
        const int s_eff = plan::effective_splits(k, bk, splits);
        std::vector<int> hits(static_cast<size_t>(k), 0);
        int64_t prev_end = 0, min_tiles = INT64_MAX, max_tiles = 0;
        for (int s = 0; s < s_eff; ++s) {
          const auto r = plan::split_k_range(k, bk, s_eff, s);
          ASSERT_EQ(r.begin, prev_end) << "splits contiguous and in order: k=" << k << " s=" << s;
          ASSERT_LT(r.begin, r.end) << "every split non-empty: k=" << k << " bk=" << bk << " splits=" << splits;
          EXPECT_EQ(r.begin % bk, 0) << "splits start on a tile";
          for (int64_t i = r.begin; i < r.end; ++i) ++hits[static_cast<size_t>(i)];
          const int64_t tiles = plan::ceil_div(r.end - r.begin, bk);
          min_tiles = std::min(min_tiles, tiles);
          max_tiles = std::max(max_tiles, tiles);
          prev_end = r.end;
        }
        EXPECT_EQ(prev_end, k);
        for (int64_t i = 0; i < k; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)], 1) << "k=" << k << " element " << i;
        EXPECT_LE(max_tiles - min_tiles, 1) << "balanced in whole tiles";
      }
}

TEST(MmaPlan, SplitsAreClampedToKTiles) {
  EXPECT_EQ(plan::effective_splits(64, 32, 16), 2);
  EXPECT_EQ(plan::effective_splits(1, 64, 64), 1);
  EXPECT_EQ(plan::effective_splits(16384, 64, 64), 64);
  EXPECT_EQ(plan::effective_splits(1000, 32, 0), 1);  // a knob below 1 counts as 1
  EXPECT_EQ(plan::effective_splits(1000, 32, 32), 32);
  EXPECT_EQ(plan::effective_splits(1000, 32, 33), 32);  // 1000 = 31 full tiles + 8
  EXPECT_EQ(plan::grid(64, 64, 100, 64, 64, 64, 8).z, 2);
}

TEST(MmaPlan, GridCoversMAndN) {
  for (int64_t m : {1, 15, 16, 17, 4097})
    for (int64_t n : {1, 7, 64, 65, 1000})
      for (int bm : {16, 32, 64, 128})
        for (int bn : {16, 64, 256}) {
          const auto g = plan::grid(m, n, 64, bm, bn, 32, 1);
          EXPECT_GE(g.x * bn, n);
          EXPECT_LT((g.x - 1) * bn, n) << "no empty tile column";
          EXPECT_GE(g.y * bm, m);
          EXPECT_LT((g.y - 1) * bm, m) << "no empty tile row";
          EXPECT_EQ(g.z, 1);
          EXPECT_TRUE(plan::grid_fits(g));
        }
  EXPECT_FALSE(plan::grid_fits(plan::grid(int64_t{65536} * 16 + 1, 64, 64, 16, 64, 32, 1)));  // y > 65535
}

TEST(MmaPlan, WorkspaceHoldsCountersAndOnePartialPerSplit) {
  // No split, no workspace, whatever the knob says when K has one tile.
  EXPECT_EQ(plan::workspace_bytes(plan::grid(4096, 4096, 4096, 128, 128, 32, 1), 128, 128), 0u);
  EXPECT_EQ(plan::workspace_bytes(plan::grid(64, 64, 32, 64, 64, 32, 16), 64, 64), 0u);
  // 100x100 with 64x64 tiles: 2x2 output tiles, 4 splits of K=1000.
  const auto g = plan::grid(100, 100, 1000, 64, 64, 32, 4);
  ASSERT_EQ(g.x * g.y, 4);
  ASSERT_EQ(g.z, 4);
  EXPECT_EQ(plan::counters_bytes(g), 256u);
  EXPECT_EQ(plan::workspace_bytes(g, 64, 64), 256u + 4u * 4u * 64u * 64u * 4u);
  EXPECT_EQ(plan::partials_offset(g) % 16, 0u);  // float4 partials
  // Counters for many tiles stay 256-byte aligned blocks.
  const auto big = plan::grid(1000, 1000, 4097, 16, 16, 32, 2);
  EXPECT_EQ(plan::counters_bytes(big), static_cast<size_t>(plan::round_up(63 * 63 * 4, 256)));
  EXPECT_EQ(plan::workspace_bytes(big, 16, 16), plan::counters_bytes(big) + 63u * 63u * 2u * 16u * 16u * 4u);
}

TEST(MmaPlan, SharedMemoryAndRegisterBudgets) {
  // 64x64x32, 3 stages, NN: A 64 x (32+8), B 32 x (64+8) halves per stage.
  EXPECT_EQ(plan::mma_smem_bytes(64, 64, 32, 3, false), 3 * (64 * 40 + 32 * 72) * 2);
  EXPECT_EQ(plan::mma_smem_bytes(64, 64, 32, 3, true), 3 * (64 * 40 + 64 * 40) * 2);
  EXPECT_LE(plan::mma_smem_bytes(128, 256, 64, 4, true), plan::kSmemBudget);
  EXPECT_GT(plan::mma_smem_bytes(128, 256, 64, 5, true), plan::kSmemBudget);
  EXPECT_EQ(plan::acc_floats_per_thread(64, 64), 128);
  EXPECT_EQ(plan::tiny_fragment_regs(32, 32, 64), 64);  // (2 m16 x 8 + 4 n8 x 4) x 2 k-blocks
  EXPECT_EQ(plan::tiny_smem_bytes(32, 32, 1), 0);
  EXPECT_EQ(plan::tiny_smem_bytes(32, 32, 4), 3 * 32 * 32 * 4);
}

}  // namespace
