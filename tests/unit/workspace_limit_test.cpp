// The workspace limit (src/judge/workspace_limit.hpp) holds every honest split-K request of our
// families, at the most splits they allow and the largest tiles, and nothing the size of many
// outputs beyond that.
#include <gtest/gtest.h>

#include <cstdint>

#include "judge/workspace_limit.hpp"
#include "kernels/mma_plan.h"
#include "kernels/wgmma_plan.h"

namespace {

constexpr int64_t kShapes[][3] = {{1, 1, 1},        {64, 64, 64},      {200, 136, 520},  {1024, 1024, 1024},
                                  {4096, 64, 4096}, {64, 4096, 16384}, {8192, 8192, 64}, {16384, 16384, 16384},
                                  {33, 17, 100000}, {12288, 96, 12288}};

TEST(WorkspaceLimit, HonestSplitKOfTheMmaFamilyFits) {
  namespace plan = cudal2_plan;
  for (const auto& s : kShapes)
    for (int bm : {16, 32, 64, 128, 256})
      for (int bn : {16, 32, 64, 128, 256})
        for (int splits : {2, 8, 64}) {
          const auto g = plan::grid(s[0], s[1], s[2], bm, bn, 32, splits);
          if (!plan::grid_fits(g)) continue;
          // Beyond the absolute cap (e.g. 64 splits of a 16384^2 output: 68 GB) nothing fits, as before.
          if (plan::workspace_bytes(g, bm, bn) > cudal2::kWorkspaceCap) continue;
          EXPECT_LE(plan::workspace_bytes(g, bm, bn), cudal2::max_workspace(s[0], s[1]))
              << s[0] << "x" << s[1] << "x" << s[2] << " tile " << bm << "x" << bn << " splits " << splits;
        }
}

TEST(WorkspaceLimit, HonestSplitKOfTheWgmmaFamilyFits) {
  namespace plan = cudal2_wgmma_plan;
  for (const auto& s : kShapes)
    for (int bm : {64, 128, 256})
      for (int bn : {64, 128, 192, 256})
        for (int splits : {2, 8, plan::kMaxSplits}) {
          const auto t = plan::tiles(s[0], s[1], bm, bn);
          // The family splits only what one wave of the H100's 132 SMs holds (it refuses more).
          if (!plan::splits_fit_wave(t.count(), splits, 132)) continue;
          if (plan::workspace_bytes(t, bm, bn, splits) > cudal2::kWorkspaceCap) continue;
          EXPECT_LE(plan::workspace_bytes(t, bm, bn, splits), cudal2::max_workspace(s[0], s[1]))
              << s[0] << "x" << s[1] << " tile " << bm << "x" << bn << " splits " << splits;
        }
}

TEST(WorkspaceLimit, IsAFloorForSmallProblemsAndCappedForLargeOnes) {
  EXPECT_EQ(cudal2::max_workspace(64, 64), cudal2::kWorkspaceFloor);
  EXPECT_EQ(cudal2::max_workspace(16384, 16384), cudal2::kWorkspaceCap);
  // 1024 x 1024: 64 splits of fp32 partials, 256 MiB + 1 MiB; far less than the 2 GiB of before.
  EXPECT_EQ(cudal2::max_workspace(1024, 1024), (size_t{257}) << 20);
  EXPECT_GT(cudal2::max_workspace(1024, 1024), size_t{64} * 4 * 1024 * 1024);
}

}  // namespace
