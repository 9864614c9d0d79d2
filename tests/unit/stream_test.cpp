// The `stream` family without a GPU: its K ranges and workspace (kernels/stream_plan.h), the
// runtime's rule for bandwidth-bound shapes (runtime/stream_rule.hpp) and its specs
// (codegen/family_stream.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "core/problem.hpp"
#include "kernels/stream_plan.h"
#include "runtime/stream_rule.hpp"
#include "runtime/weight_recency.hpp"

namespace {

namespace plan = cudal2_stream_plan;
using cudal2::Accum;
using cudal2::Layout;
using cudal2::rt::pick_stream;
using cudal2::rt::StreamKernel;

TEST(StreamPlan, SplitsCoverEveryStageOnceInOrder) {
  for (int64_t k : {1, 63, 64, 65, 4096, 14336, 100000})
    for (int splits : {1, 2, 3, 7, 16, 64}) {
      int64_t next = 0, stages = (k + plan::kStageK - 1) / plan::kStageK;
      for (int s = 0; s < splits; ++s) {
        const auto r = plan::split_stages(k, splits, s);
        EXPECT_EQ(r.begin, next) << k << " " << splits << " " << s;
        EXPECT_GE(r.end, r.begin);
        EXPECT_LE(r.end - r.begin, stages / splits + 1) << "balanced";
        next = r.end;
      }
      EXPECT_EQ(next, stages) << k << " " << splits;
    }
}

TEST(StreamPlan, WorkspaceHoldsCountersThenEverySplitsPartial) {
  const auto g = plan::grid(5, 4096, 64, 8, 8);
  EXPECT_EQ(g.x, 1);
  EXPECT_EQ(g.y, 64);
  EXPECT_EQ(g.z, 8);
  EXPECT_EQ(plan::counters_bytes(g), 256u);
  EXPECT_EQ(plan::workspace_bytes(g, 64, 8), 256u + 64u * 8 * 64 * 8 * 4);
  EXPECT_EQ(plan::workspace_bytes(plan::grid(5, 4096, 64, 8, 1), 64, 8), 0u) << "no split, no workspace";
  EXPECT_FALSE(plan::grid_fits(plan::grid(1, 4096, 64, 8, plan::kMaxSplits + 1)));
  EXPECT_FALSE(plan::grid_fits(plan::grid(1, 64 * 65536, 64, 8, 1))) << "B-row tiles over the grid's y";
}

const std::vector<StreamKernel> kPortfolio = {
    {1, 0, 8, 64, 4, 2}, {1, 1, 8, 64, 4, 2}, {1, 0, 16, 32, 4, 4}, {1, 1, 16, 32, 4, 4}};

constexpr int64_t kL2 = int64_t(60) << 20;  // an H200's

// Every spec a family enumerates for TN, fp32 (runtime knobs included) is valid, its text parses
// back to itself, and no two share a text.
void expect_space_round_trips(const std::string& family) {
  const auto all = cudal2::enumerate_specs(family, Layout::TN, Accum::F32, true);
  ASSERT_FALSE(all.empty()) << family;
  std::set<std::string> texts;
  for (const auto& s : all) {
    EXPECT_EQ(cudal2::invalid_reason(s), "") << s.text();
    EXPECT_EQ(cudal2::parse_spec(s.text()).text(), s.text());
    texts.insert(s.text());
  }
  EXPECT_EQ(texts.size(), all.size()) << family;
}

TEST(StreamRule, ClassIsFewTokensAgainstWeightsBeyondTheL2) {
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 1, 14336, 4096, kL2));  // 117 MB
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 8, 14336, 4096, kL2));
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 9, 14336, 4096, kL2))
      << "9-16 tokens: below the heuristic back to back, only on request";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 17, 14336, 4096, kL2)) << "more tokens measured below auto-tuning";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 1, 4096, 4096, kL2)) << "32 MB stays in a 60 MB L2 between calls";
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 1, 4096, 4096, int64_t(16) << 20)) << "but not in a 16 MB one";
  EXPECT_FALSE(cudal2::rt::in_stream_class(0, 1, 14336, 4096, kL2)) << "NN measured below auto-tuning";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 0, 14336, 4096, kL2));
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 1, 1024, 1024, 0)) << "2 MB: below the floor whatever the L2";
}

TEST(StreamRule, OutputRowsOffSixteenBytesTakeTheRuleWhateverTheWeights) {
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 5, 4101, 4104, kL2)) << "34 MB, in the L2, but N % 8 != 0";
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 16, 4101, 4104, kL2)) << "up to the 16-token tile";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 17, 4101, 4104, kL2)) << "no kernel holds 17 tokens";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 1, 4101, 4104, kL2)) << "one token: cuBLASLt was as fast";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 3, 4101, 4104, kL2)) << "below 4 tokens: not measured";
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 1, 11007, 4096, kL2)) << "one token beyond the L2: the class above";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 5, 5003, 4099, kL2)) << "K % 8 != 0: unaligned weight rows";
  EXPECT_FALSE(cudal2::rt::in_stream_class(0, 5, 4101, 4104, kL2)) << "TN only";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 8, 3001, 1536, kL2)) << "9 MB: below the measured 32 MiB";
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 5, 4096, 4104, kL2)) << "aligned rows in the L2: cuBLASLt";
  const auto p = pick_stream(kPortfolio, 1, 0, 5, 4101, 4104, 132, kL2);
  ASSERT_GE(p.kernel, 0);
  EXPECT_EQ(p.splits, 4) << "the 8-token kernel: 65 tiles of 64 rows on 132 x 2 resident CTAs";
}

TEST(StreamRule, PicksTheFirstListedKernelThatHoldsTheTokens) {
  cudal2::rt::StreamBounds to16;
  to16.max_m = 16;
  auto toks = [&](int accum, int64_t m) {
    const auto p = pick_stream(kPortfolio, 1, accum, m, 16384, 8192, 132, kL2, to16);
    return p.kernel < 0 ? -1 : kPortfolio[static_cast<size_t>(p.kernel)].toks;
  };
  EXPECT_EQ(toks(0, 1), 8);
  EXPECT_EQ(toks(0, 8), 8);
  EXPECT_EQ(toks(0, 9), 16);
  EXPECT_EQ(toks(0, 16), 16);
  EXPECT_EQ(toks(0, 17), -1) << "out of class";
  EXPECT_EQ(toks(1, 4), 8) << "f16 accumulation: its own kernel";
  EXPECT_EQ(kPortfolio[static_cast<size_t>(pick_stream(kPortfolio, 1, 1, 4, 16384, 8192, 132, kL2).kernel)].accum, 1);
  EXPECT_EQ(pick_stream({}, 1, 0, 1, 16384, 8192, 132, kL2).kernel, -1) << "no portfolio (not sm_90)";
}

TEST(StreamRule, SplitsKeepTheLaunchWithinOneWave) {
  // 4096 rows / 64 = 64 tiles on 132 x 2 slots: 4 splits, 256 CTAs.
  EXPECT_EQ(pick_stream(kPortfolio, 1, 0, 1, 4096, 16384, 132, kL2).splits, 4);
  // 14336 / 64 = 224 tiles: one wave already.
  EXPECT_EQ(pick_stream(kPortfolio, 1, 0, 1, 14336, 4096, 132, kL2).splits, 1);
  // A short K caps the splits: every split keeps each k-warp one 64-element stage at least.
  EXPECT_EQ(pick_stream(kPortfolio, 1, 0, 1, 512, 65536, 132, 0).splits, 33);
  EXPECT_EQ(cudal2::rt::stream_splits(64, 264, 2), 2) << "capped";
  EXPECT_EQ(cudal2::rt::stream_splits(1000, 264, 64), 1) << "many waves already: no split";
  // 20480 / 64 = 320 tiles on 264 slots: a second, partial wave; out of the class.
  EXPECT_EQ(pick_stream(kPortfolio, 1, 0, 1, 20480, 7168, 132, kL2).kernel, -1);
  // The runtime's order: 16 tokens x 32 rows at four CTAs an SM first, then 8 x 64 at three.
  const std::vector<StreamKernel> runtime = {{1, 0, 16, 32, 4, 4}, {1, 0, 8, 64, 2, 3}};
  EXPECT_EQ(pick_stream(runtime, 1, 0, 1, 14336, 4096, 132, kL2).kernel, 0) << "448 tiles on 528 slots";
  const auto wide = pick_stream(runtime, 1, 0, 1, 20480, 7168, 132, kL2);
  EXPECT_EQ(wide.kernel, 1) << "640 tiles on 528 slots for the first; 320 on 396 for the second";
  EXPECT_EQ(wide.splits, 1);
  cudal2::rt::StreamBounds sixteen;
  sixteen.max_m = 16;
  EXPECT_EQ(pick_stream(runtime, 1, 0, 9, 20480, 7168, 132, kL2, sixteen).kernel, -1)
      << "9 tokens: only the first holds them, in two waves";
  EXPECT_EQ(pick_stream(runtime, 1, 0, 1, 28672, 4096, 132, kL2).kernel, -1) << "448 tiles on 396 slots: out";
  // 16 tokens: 14336 / 32 = 448 tiles on 132 x 4 slots, one wave without a split.
  cudal2::rt::StreamBounds to16;
  to16.max_m = 16;
  const auto p16 = pick_stream(kPortfolio, 1, 0, 16, 14336, 4096, 132, kL2, to16);
  ASSERT_GE(p16.kernel, 0);
  EXPECT_EQ(kPortfolio[static_cast<size_t>(p16.kernel)].toks, 16);
  EXPECT_EQ(p16.splits, 1);
}

TEST(StreamRule, ColdBandIsWeightsUnderTheClassFloorFromEightMiB) {
  using cudal2::rt::in_cold_band;
  EXPECT_TRUE(in_cold_band(1, 0, 1, 4096, 4096, kL2)) << "32 MiB: fits the L2, so only when cold";
  EXPECT_TRUE(in_cold_band(1, 0, 8, 1024, 4096, kL2)) << "8 MiB, a k or v projection";
  EXPECT_FALSE(in_cold_band(1, 0, 8, 1024, 4095, kL2)) << "just under 8 MiB";
  EXPECT_FALSE(in_cold_band(1, 0, 1, 14336, 4096, kL2)) << "beyond the L2: the class itself, warm or cold";
  EXPECT_TRUE(in_cold_band(1, 0, 16, 4096, 4096, kL2));
  EXPECT_FALSE(in_cold_band(1, 0, 17, 4096, 4096, kL2)) << "up to 16 tokens";
  EXPECT_FALSE(in_cold_band(1, 0, 16, 14336, 4096, kL2)) << "beyond the L2 the band does not reach";
  EXPECT_TRUE(in_cold_band(0, 0, 1, 4096, 4096, kL2)) << "NN: 32 MiB";
  EXPECT_FALSE(in_cold_band(0, 0, 1, 2048, 4096, kL2)) << "NN: 16 MiB, under NN's 24 MiB floor";
  EXPECT_FALSE(in_cold_band(0, 0, 9, 4096, 4096, kL2)) << "NN: up to 8 tokens";
  EXPECT_FALSE(in_cold_band(0, 1, 1, 4096, 4096, kL2)) << "NN: fp32 accumulation only";
  EXPECT_FALSE(in_cold_band(1, 0, 5, 4101, 4104, kL2)) << "odd output rows are in the class";
  cudal2::rt::StreamBounds off;
  off.cold_min_weight_bytes = kL2;
  EXPECT_FALSE(in_cold_band(1, 0, 1, 4096, 4096, kL2, off)) << "a floor at the class's turns the band off";
  cudal2::rt::StreamBounds none;
  none.cold_max_m = 0;
  EXPECT_FALSE(in_cold_band(1, 0, 1, 4096, 4096, kL2, none)) << "so do no tokens";
  cudal2::rt::StreamBounds wide;
  wide.min_weight_bytes = 0;
  EXPECT_FALSE(in_cold_band(1, 0, 1, 4096, 4096, kL2, wide)) << "a class that takes every weight leaves no band";

  const auto cold = pick_stream(kPortfolio, 1, 0, 1, 4096, 4096, 132, kL2, {}, /*cold=*/true);
  EXPECT_EQ(cold.kernel, 0) << "the same kernel choice as the class";
  EXPECT_GE(cold.splits, 1);
  EXPECT_LT(pick_stream(kPortfolio, 1, 0, 1, 4096, 4096, 132, kL2).kernel, 0) << "not without cold";
  EXPECT_LT(pick_stream(kPortfolio, 1, 0, 1, 14336, 4096, 132, kL2, {}, true).kernel, 0) << "the class is not the band";
}

TEST(StreamRule, SweepBandIsFewTokensAgainstWeightsTheL2Holds) {
  using cudal2::rt::in_sweep_band;
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 3072, 3072, kL2)) << "18 MiB: stays in a 60 MiB L2";
  EXPECT_TRUE(in_sweep_band(1, 0, 8, 512, 1024, kL2)) << "1 MiB: the floor";
  EXPECT_TRUE(in_sweep_band(1, 0, 5, 2051, 4104, kL2)) << "odd output rows too";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 4096, 4096, kL2)) << "32 MiB, warm: up to the L2 at 1-4 tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 4, 4096, 4096, kL2));
  EXPECT_FALSE(in_sweep_band(1, 0, 5, 4096, 4096, kL2)) << "5-8 tokens warm: 40% of the L2";
  EXPECT_TRUE(in_sweep_band(1, 0, 5, 4096, 4096, kL2, {}, true)) << "cold: up to the L2";
  EXPECT_TRUE(in_sweep_band(1, 0, 8, 3072, 3072, kL2)) << "18 MiB: under 40%";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 4096, 4096, kL2, {}, /*cold=*/true)) << "and cold";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 3072, 3072, int64_t(40) << 20)) << "18 MiB of a 40 MiB L2";
  EXPECT_FALSE(in_sweep_band(1, 0, 1, 4096, 6144, int64_t(40) << 20)) << "48 MiB of a 40 MiB L2: the class";
  EXPECT_FALSE(in_sweep_band(1, 0, 8, 256, 1024, kL2)) << "512 KiB: under the floor";
  EXPECT_FALSE(in_sweep_band(1, 0, 8, 1024, 1020, kL2)) << "K % 8 != 0";
  EXPECT_FALSE(in_sweep_band(1, 0, 9, 3072, 3072, kL2)) << "18 MiB at 9 tokens: over the 16 MiB of 9-16 tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 9, 2048, 4096, kL2)) << "16 MiB at 9-16 tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 16, 2048, 4096, kL2, {}, true)) << "cold too";
  EXPECT_FALSE(in_sweep_band(1, 0, 17, 2048, 4096, kL2)) << "aligned rows at 17+ tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 24, 4101, 4104, kL2)) << "odd rows of 32 MiB at 17-64 tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 64, 4101, 4104, kL2));
  EXPECT_FALSE(in_sweep_band(1, 0, 65, 4101, 4104, kL2)) << "65 tokens";
  EXPECT_TRUE(in_sweep_band(1, 0, 24, 2051, 4104, kL2)) << "odd rows from 16 MiB";
  EXPECT_TRUE(in_sweep_band(1, 0, 12, 2051, 4104, kL2)) << "at 9-16 tokens under 32 MiB too";
  EXPECT_FALSE(in_sweep_band(1, 0, 24, 2041, 4104, kL2)) << "odd rows under 16 MiB at 17+ tokens";
  EXPECT_FALSE(in_sweep_band(1, 0, 12, 4101, 4104, kL2)) << "odd rows of 32 MiB at 9-16 tokens: the class's";
  EXPECT_FALSE(in_sweep_band(1, 0, 24, 16383, 4104, kL2)) << "odd rows beyond the L2";
  EXPECT_FALSE(in_sweep_band(1, 0, 0, 3072, 3072, kL2));
  EXPECT_FALSE(in_sweep_band(1, 1, 1, 3072, 3072, kL2)) << "fp32 accumulation only";
  EXPECT_FALSE(in_sweep_band(0, 0, 1, 3072, 3072, kL2)) << "TN only";
  EXPECT_FALSE(in_sweep_band(1, 0, 1, 14336, 4096, kL2, {}, true)) << "beyond the L2: the class";
  cudal2::rt::StreamBounds off;
  off.sweep_max_m = 0;
  EXPECT_FALSE(in_sweep_band(1, 0, 1, 3072, 3072, kL2, off, true)) << "no tokens: off";
  cudal2::rt::StreamBounds part;
  part.sweep_warm_pct = 40;
  EXPECT_FALSE(in_sweep_band(1, 0, 1, 4096, 4096, kL2, part)) << "32 MiB warm: over 40% of the L2";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 4096, 4096, kL2, part, true)) << "but cold up to the L2";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 3072, 3072, kL2, part)) << "18 MiB warm: under 40%";
  cudal2::rt::StreamBounds cold_only;
  cold_only.sweep_warm_pct = 0;
  EXPECT_FALSE(in_sweep_band(1, 0, 1, 3072, 3072, kL2, cold_only)) << "no warm share: cold only";
  EXPECT_TRUE(in_sweep_band(1, 0, 1, 3072, 3072, kL2, cold_only, true));

  auto with_sweep = kPortfolio;
  with_sweep.push_back({1, 0, 8, 16, 8, 3, true});
  const int sweep = static_cast<int>(with_sweep.size()) - 1;
  const auto p = pick_stream(with_sweep, 1, 0, 1, 3072, 3072, 132, kL2);
  EXPECT_EQ(p.kernel, sweep);
  EXPECT_EQ(p.splits, 1) << "the kernel spreads K itself";
  EXPECT_EQ(pick_stream(with_sweep, 1, 0, 1, 3072, 3072, 132, kL2, {}, /*cold=*/true).kernel, sweep) << "cold or warm";
  EXPECT_EQ(pick_stream(with_sweep, 1, 0, 1, 4096, 4096, 132, kL2).kernel, sweep) << "32 MiB warm";
  EXPECT_EQ(pick_stream(with_sweep, 1, 0, 1, 4096, 4096, 132, kL2, {}, true).kernel, sweep) << "32 MiB cold";
  EXPECT_EQ(pick_stream(with_sweep, 1, 0, 7, 6144, 2560, 132, kL2, {}, true).kernel, sweep) << "384 tiles, 396 slots";
  EXPECT_NE(pick_stream(with_sweep, 1, 0, 7, 6912, 2560, 132, kL2, {}, true).kernel, sweep)
      << "432 row tiles on 396 slots: a second wave";
  const auto odd = pick_stream(with_sweep, 1, 0, 5, 4101, 4104, 132, kL2);
  EXPECT_GE(odd.kernel, 0);
  EXPECT_NE(odd.kernel, sweep) << "odd output rows of 32 MiB at 5 tokens, warm: the class's stream kernel";
  EXPECT_EQ(pick_stream(with_sweep, 1, 0, 3, 4101, 4104, 132, kL2).kernel, sweep) << "at 3 tokens the band";
  const auto cls = pick_stream(with_sweep, 1, 0, 1, 14336, 4096, 132, kL2);
  ASSERT_GE(cls.kernel, 0);
  EXPECT_NE(cls.kernel, sweep) << "the class keeps the stream kernels";
  EXPECT_LT(pick_stream(with_sweep, 1, 0, 12, 3072, 3072, 132, kL2).kernel, 0) << "12 tokens warm: cuBLASLt";
  EXPECT_LT(pick_stream(with_sweep, 1, 0, 12, 2048, 4096, 132, kL2).kernel, 0) << "no 16-token sweep kernel";
  // Above 8 tokens: the first sweep kernel that holds M, never an 8-token one for its balance.
  auto wide = with_sweep;
  wide.push_back({1, 0, 8, 16, 4, 6, true});
  wide.push_back({1, 0, 16, 32, 4, 3, true});
  wide.push_back({1, 0, 32, 32, 4, 2, true});
  wide.push_back({1, 0, 64, 32, 4, 2, true});
  const int w16 = static_cast<int>(wide.size()) - 3, w32 = w16 + 1, w64 = w16 + 2;
  EXPECT_EQ(pick_stream(wide, 1, 0, 12, 2048, 4096, 132, kL2).kernel, w16);
  EXPECT_EQ(pick_stream(wide, 1, 0, 16, 1024, 4096, 132, kL2, {}, true).kernel, w16);
  EXPECT_EQ(pick_stream(wide, 1, 0, 24, 4101, 4104, 132, kL2).kernel, w32);
  EXPECT_EQ(pick_stream(wide, 1, 0, 40, 4101, 4104, 132, kL2, {}, true).kernel, w64);
  EXPECT_NE(pick_stream(wide, 1, 0, 12, 4101, 4104, 132, kL2).kernel, w16) << "the class's odd rows";
  EXPECT_EQ(pick_stream(wide, 1, 0, 1, 3072, 3072, 132, kL2).kernel, sweep) << "1 token: the 8-token kernel";
  EXPECT_LT(pick_stream(wide, 1, 0, 24, 9001, 4104, 132, kL2).kernel, 0)
      << "282 row tiles of 32 on 264 slots: no second wave (and the class holds no more than 16 tokens)";
  EXPECT_LT(pick_stream(kPortfolio, 1, 0, 1, 3072, 3072, 132, kL2).kernel, 0) << "no sweep kernel: as before";
}

// stream_sweep_plan.h and the rule's choice between sweep kernels: the first (8 warps, 3 CTAs an SM)
// unless the second (4 warps, 6 an SM) leaves the busiest SM a tenth less to stream; never the
// second where the first cannot hold the row tiles in one wave.
TEST(StreamRule, SweepKernelsAreChosenByTheBusiestSmsBytes) {
  using cudal2_sweep_plan::busiest_sm_tiles;
  using cudal2_sweep_plan::cluster;
  EXPECT_EQ(cluster(192, 396, 8, 3072), 2) << "384 CTAs in 396 slots: half the slots' rule stops at 2";
  EXPECT_EQ(cluster(288, 396, 8, 3584), 1);
  EXPECT_EQ(cluster(288, 792, 4, 3584), 2);
  EXPECT_EQ(cluster(8, 396, 8, 256), 1) << "8 steps of K: one a warp of one CTA";
  EXPECT_EQ(cluster(8, 396, 4, 4096), 8) << "at most 8";
  EXPECT_DOUBLE_EQ(busiest_sm_tiles(288, 1, 132), 3.0) << "288 CTAs: 3 on some SMs";
  EXPECT_DOUBLE_EQ(busiest_sm_tiles(288, 2, 132), 2.5) << "576 CTAs of half a tile: 5 on some SMs";
  EXPECT_DOUBLE_EQ(busiest_sm_tiles(192, 2, 132), 1.5);

  auto two = kPortfolio;
  two.push_back({1, 0, 8, 16, 8, 3, true});
  two.push_back({1, 0, 8, 16, 4, 6, true});
  const int first = static_cast<int>(two.size()) - 2, second = first + 1;
  EXPECT_EQ(pick_stream(two, 1, 0, 1, 3072, 3072, 132, kL2).kernel, first) << "both 1.5 tiles: the first";
  EXPECT_EQ(pick_stream(two, 1, 0, 4, 4608, 3584, 132, kL2, {}, true).kernel, second) << "2.5 tiles against 3";
  EXPECT_EQ(pick_stream(two, 1, 0, 4, 4096, 4096, 132, kL2, {}, true).kernel, first) << "256 tiles: 2 against 2";
  const int wide = pick_stream(two, 1, 0, 7, 6912, 2560, 132, kL2, {}, true).kernel;
  EXPECT_GE(wide, 0) << "432 tiles, cold: the cold band's stream kernel";
  EXPECT_LT(wide, first) << "not the 6-CTA sweep kernel, though one wave of it holds them";
  EXPECT_EQ(pick_stream(two, 1, 0, 1, 4608, 3584, 132, kL2).kernel, second) << "31.5 MiB warm too";
}

TEST(StreamRule, WarmWeightsTheL2HoldsTakeTheKeepVariant) {
  auto p = kPortfolio;
  p.push_back({1, 0, 8, 16, 8, 3, true});
  const int base = static_cast<int>(p.size()) - 1;
  EXPECT_EQ(pick_stream(p, 1, 0, 1, 4096, 4096, 132, kL2).kernel, base) << "no keep variant: the kernel itself";
  StreamKernel keep = p.back();
  keep.keep = 1, keep.variant_of = base;
  p.push_back(keep);
  const int variant = base + 1;
  EXPECT_EQ(cudal2::rt::keep_variant(p, base, 1), variant);
  EXPECT_EQ(cudal2::rt::keep_variant(p, base, 0), base);
  EXPECT_EQ(cudal2::rt::keep_variant(p, 0, 1), 0) << "a kernel with no variant";
  EXPECT_EQ(pick_stream(p, 1, 0, 1, 4096, 4096, 132, kL2).kernel, variant) << "32 MiB warm: kept in the L2";
  EXPECT_EQ(pick_stream(p, 1, 0, 4, 2048, 4096, 132, kL2).kernel, variant) << "16 MiB";
  EXPECT_EQ(pick_stream(p, 1, 0, 1, 4096, 4096, 132, kL2, {}, /*cold=*/true).kernel, base) << "cold: read once";
  EXPECT_EQ(pick_stream(p, 1, 0, 1, 5120, 4096, 132, kL2).kernel, base) << "40 MiB: over 60% of the L2";
  cudal2::rt::StreamBounds off;
  off.keep = 0;
  EXPECT_EQ(pick_stream(p, 1, 0, 1, 4096, 4096, 132, kL2, off).kernel, base) << "CUDAL2_STREAM_KEEP=0";
  for (int64_t n : {1024, 4096, 14336})
    EXPECT_NE(pick_stream(p, 1, 0, 1, n, 4096, 132, kL2, {}, /*cold=*/true).kernel, variant)
        << "cold picks never take the keep variant";
}

TEST(StreamRule, NNBandsAreSmallWeightsAndWeightsBeyondTheL2) {
  using cudal2::rt::nn_band;
  using cudal2::rt::NNBand;
  EXPECT_EQ(nn_band(0, 0, 1, 1024, 4096, kL2), NNBand::kSmall) << "8 MiB";
  EXPECT_EQ(nn_band(0, 0, 8, 512, 1024, kL2), NNBand::kSmall) << "1 MiB: the floor";
  EXPECT_EQ(nn_band(0, 0, 8, 256, 1024, kL2), NNBand::kNone) << "512 KiB";
  EXPECT_EQ(nn_band(0, 0, 1, 768, 768, kL2), NNBand::kSmall) << "K == N";
  EXPECT_EQ(nn_band(0, 0, 1, 3072, 768, kL2), NNBand::kNone) << "K < N: cuBLASLt needs no split of K";
  EXPECT_EQ(nn_band(0, 0, 1, 4096, 4096, kL2), NNBand::kNone) << "32 MiB: cuBLASLt";
  EXPECT_EQ(nn_band(0, 0, 1, 14336, 4096, kL2), NNBand::kBeyondL2);
  EXPECT_EQ(nn_band(0, 0, 8, 4096, 14336, kL2), NNBand::kBeyondL2);
  EXPECT_EQ(nn_band(0, 0, 9, 14336, 4096, kL2), NNBand::kNone) << "9 tokens";
  EXPECT_EQ(nn_band(0, 1, 1, 14336, 4096, kL2), NNBand::kNone) << "fp16 accumulation";
  EXPECT_EQ(nn_band(1, 0, 1, 14336, 4096, kL2), NNBand::kNone) << "TN: the class and the sweep band";
  EXPECT_EQ(nn_band(0, 0, 1, 14340, 4096, kL2), NNBand::kNone) << "N % 8 != 0: B's rows off 16 bytes";
  EXPECT_EQ(nn_band(0, 0, 1, 1024, 4092, kL2), NNBand::kNone) << "K % 8 != 0";
  cudal2::rt::StreamBounds off;
  off.sweep_max_m = 0, off.max_m = 0;
  EXPECT_EQ(nn_band(0, 0, 1, 1024, 4096, kL2, off), NNBand::kNone) << "CUDAL2_STREAM_SWEEP_MAX_M=0";
  EXPECT_EQ(nn_band(0, 0, 1, 14336, 4096, kL2, off), NNBand::kNone) << "CUDAL2_STREAM_MAX_M=0";
  EXPECT_TRUE(cudal2::rt::in_stream_rule(0, 0, 1, 14336, 4096, kL2));
  EXPECT_FALSE(cudal2::rt::in_stream_rule(0, 0, 1, 4096, 4096, kL2));

  // The portfolio's NN kernels: 32 and 64 columns a warp (listed in that order or not).
  auto with_nn = kPortfolio;
  with_nn.push_back({0, 0, 8, 64, 4, 3, true});
  with_nn.push_back({0, 0, 8, 32, 4, 4, true});
  const int wide = static_cast<int>(with_nn.size()) - 2, narrow = wide + 1;
  EXPECT_EQ(pick_stream(with_nn, 0, 0, 1, 1024, 4096, 132, kL2).kernel, narrow) << "small weights: narrow tiles";
  const auto big = pick_stream(with_nn, 0, 0, 8, 14336, 4096, 132, kL2);
  EXPECT_EQ(big.kernel, wide) << "beyond the L2: wide tiles";
  EXPECT_EQ(big.splits, 1) << "the kernel picks its cluster";
  EXPECT_EQ(pick_stream(with_nn, 0, 0, 1, 14336, 4096, 132, kL2, {}, /*cold=*/true).kernel, -1)
      << "beyond the L2 is not the cold band";
  EXPECT_EQ(pick_stream(with_nn, 0, 0, 1, 4096, 4096, 132, kL2).kernel, -1) << "between the bands, warm";
  EXPECT_EQ(pick_stream(with_nn, 0, 0, 1, 4096, 4096, 132, kL2, {}, /*cold=*/true).kernel, wide) << "and cold";
  EXPECT_EQ(nn_band(0, 0, 1, 4096, 4096, kL2, {}, true), NNBand::kCold);
  EXPECT_EQ(pick_stream(with_nn, 0, 0, 1, 28672, 8192, 132, kL2).kernel, -1)
      << "448 tiles of 64 columns: more than one wave of 3 CTAs an SM";
  EXPECT_EQ(pick_stream(kPortfolio, 0, 0, 1, 14336, 4096, 132, kL2).kernel, -1) << "no NN kernel";
}

TEST(WeightRecency, RepeatedWeightsAreWarmUntilTheWindowPassesBetween) {
  cudal2::rt::WeightRecency r;
  r.set_window(30 << 20);
  int w[3] = {};  // only their addresses count
  const int64_t mb = 1 << 20;
  EXPECT_FALSE(r.note(&w[0], 32 * mb, 32 * mb)) << "first read: cold";
  EXPECT_TRUE(r.note(&w[0], 32 * mb, 32 * mb)) << "back to back: warm";
  EXPECT_FALSE(r.note(&w[1], 20 * mb, 20 * mb));
  EXPECT_TRUE(r.note(&w[0], 32 * mb, 32 * mb)) << "20 MiB in between: within the window";
  EXPECT_FALSE(r.note(&w[1], 20 * mb, 20 * mb)) << "32 MiB in between: past it";
  EXPECT_FALSE(r.note(&w[2], 16 * mb, 16 * mb));
  EXPECT_FALSE(r.note(&w[2], 24 * mb, 24 * mb)) << "the same pointer with other bytes is other weights";
}

TEST(WeightRecency, ADecodeStepsLayersAreColdAndTheOldestAreForgotten) {
  cudal2::rt::WeightRecency r;
  r.set_window(30 << 20);
  const int64_t mb = 1 << 20;
  std::vector<int> layers(100);
  for (int step = 0; step < 2; ++step)
    for (int& l : layers) EXPECT_FALSE(r.note(&l, 8 * mb, 8 * mb)) << "each layer comes back after 800 MiB";
  std::vector<int> small(3);
  for (int step = 0; step < 3; ++step)
    for (size_t i = 0; i < small.size(); ++i)
      EXPECT_EQ(r.note(&small[i], 8 * mb, 8 * mb), step > 0) << "a 24 MiB model stays in the window";
}

TEST(StreamFamily, SpecsRoundTripAndGenerateTheConfig) {
  expect_space_round_trips("stream");
  const auto s = cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 | splits=8");
  EXPECT_EQ(s.splits, 8);
  const std::string src = cudal2::generate_source(s);
  EXPECT_NE(src.find("cudal2_stream::Config<true, false, 1, 2, 2, 4, 2, 1, 0, 1, 0, 0>"), std::string::npos) << src;
  EXPECT_NE(src.find("stream_gemm.cuh"), std::string::npos);
}

// ctas: the CTAs an SM must hold, a compile-time bound on the registers; written only when not 1,
// so that the texts of kernels measured before the field existed stay the same.
TEST(StreamFamily, CtasIsWrittenOnlyWhenNotOneAndReachesTheConfig) {
  const auto one = cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 | splits=8");
  EXPECT_EQ(one.min_ctas, 1);
  EXPECT_EQ(one.text(), "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 | splits=8");
  const auto four = cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=4 | splits=2");
  EXPECT_EQ(four.min_ctas, 4);
  EXPECT_EQ(four.text(), "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=4 | splits=2");
  EXPECT_NE(four.compile_hash(),
            cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1").compile_hash());
  EXPECT_NE(cudal2::generate_source(four).find("cudal2_stream::Config<true, false, 1, 2, 2, 4, 1, 4, 0, 1, 0, 0>"),
            std::string::npos);
  const auto ahead = cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=4 ahead=3");
  EXPECT_EQ(ahead.prefetch_ahead, 3);
  EXPECT_EQ(ahead.text(), "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=4 ahead=3 | splits=1");
  EXPECT_NE(cudal2::generate_source(ahead).find("cudal2_stream::Config<true, false, 1, 2, 2, 4, 1, 4, 3, 1, 0, 0>"),
            std::string::npos);
  const auto late = cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 pdl=2 | splits=2");
  EXPECT_EQ(late.pdl_mode, 2);
  EXPECT_EQ(late.text(), "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 pdl=2 | splits=2");
  EXPECT_NE(cudal2::generate_source(late).find("cudal2_stream::Config<true, false, 1, 2, 2, 4, 2, 1, 0, 2, 0, 0>"),
            std::string::npos);
  // order: how splits share K, written only when not 0 (contiguous ranges).
  const auto order =
      cudal2::parse_spec("stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 order=1 | splits=4");
  EXPECT_EQ(order.split_order, 1);
  EXPECT_EQ(order.text(), "stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 order=1 | splits=4");
  EXPECT_NE(order.compile_hash(),
            cudal2::parse_spec("stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4").compile_hash());
  EXPECT_NE(cudal2::generate_source(order).find("cudal2_stream::Config<true, false, 2, 1, 2, 4, 1, 4, 0, 1, 0, 1>"),
            std::string::npos);
  for (const char* bad : {"stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 order=2",
                          "stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=5 order=1"}) {  // bulk: no order
    try {
      (void)cudal2::parse_spec(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("order"), std::string::npos) << e.what();
    }
  }
  try {
    (void)cudal2::parse_spec("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 pdl=3");
    ADD_FAILURE() << "pdl=3 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("pdl 3"), std::string::npos) << e.what();
  }
  bool some = false;
  for (const auto& s : cudal2::enumerate_specs("stream", Layout::TN, Accum::F32, false)) some = some || s.min_ctas > 1;
  EXPECT_TRUE(some) << "the search space holds configurations compiled for several CTAs an SM";
}

TEST(StreamFamily, ValidityRulesNameWhatIsWrong) {
  // parse_spec refuses an invalid spec with the reason; "" when it is valid.
  auto why = [](const char* text) -> std::string {
    try {
      return cudal2::invalid_reason(cudal2::parse_spec(text));
    } catch (const std::exception& e) {
      return e.what();
    }
  };
  EXPECT_EQ(why("stream nn f32 tile=64x64x64 warps=1x2 kwarps=2 stages=1 | splits=4"), "");
  EXPECT_NE(why("stream tn f32 tile=8x64x32 warps=1x2 kwarps=4 stages=2 | splits=1").find("tile K"), std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=12x64x64 warps=1x2 kwarps=4 stages=2 | splits=1").find("tile M"),
            std::string::npos);
  EXPECT_NE(why("stream nn f32 tile=8x32x64 warps=1x2 kwarps=4 stages=2 | splits=1").find("nn"), std::string::npos)
      << "16 rows a warp: nn needs 32 or 64";
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=16 stages=2 | splits=1").find("16 warps"),
            std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=64x256x64 warps=1x4 kwarps=1 stages=4 | splits=1").find("registers"),
            std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=7 | splits=1").find("stages"), std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 | splits=65").find("splits"),
            std::string::npos);
  // 256 threads: at most 8 CTAs an SM; at 4 CTAs 64 registers a thread, which one stage of 32 rows fits
  // and two do not.
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=9 | splits=1").find("ctas 9"),
            std::string::npos);
  EXPECT_EQ(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=1 ctas=4 | splits=1"), "");
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 ctas=4 | splits=1").find("registers"),
            std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=6 ctas=2 | splits=1").find("ctas"),
            std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 ahead=9 | splits=1").find("ahead 9"),
            std::string::npos);
}

// The bulk pipeline: a tile K over 64 (src/kernels/stream_bulk_gemm.cuh).
TEST(StreamFamily, BulkSpecsGenerateTheBulkConfig) {
  const auto s = cudal2::parse_spec("stream tn f16 tile=16x64x256 warps=1x1 kwarps=4 stages=5");
  EXPECT_EQ(cudal2::invalid_reason(s), "");
  const std::string src = cudal2::generate_source(s);
  EXPECT_NE(src.find("cudal2_stream_bulk::Config<true, 2, 4, 5, 4>"), std::string::npos) << src;
  EXPECT_NE(src.find("stream_bulk_gemm.cuh"), std::string::npos);
  int bulk = 0;
  for (const auto& e : cudal2::enumerate_specs("stream", Layout::TN, Accum::F32, true))
    if (e.tile_k > 64) {
      ++bulk;
      EXPECT_TRUE(e.splits >= 1 && e.splits <= 3) << "CTAs per SM: " << e.text();
    }
  EXPECT_GT(bulk, 10) << "the search sees the bulk pipeline";
  for (const auto& e : cudal2::enumerate_specs("stream", Layout::NN, Accum::F32, true))
    EXPECT_EQ(e.tile_k, 64) << "bulk is tn only: " << e.text();
}

TEST(StreamFamily, BulkValidityRulesNameWhatIsWrong) {
  auto why = [](const char* text) -> std::string {
    try {
      return cudal2::invalid_reason(cudal2::parse_spec(text));
    } catch (const std::exception& e) {
      return e.what();
    }
  };
  EXPECT_EQ(why("stream tn f32 tile=8x64x128 warps=1x1 kwarps=2 stages=11"), "");
  EXPECT_NE(why("stream nn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=5").find("tn only"), std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x256 warps=1x1 kwarps=2 stages=5").find("kwarps"), std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x128x256 warps=1x2 kwarps=4 stages=5").find("tile N 16, 32 or 64"),
            std::string::npos);
  EXPECT_EQ(why("stream tn f32 tile=8x16x512 warps=1x1 kwarps=8 stages=8"), "") << "16 rows, 1 KB runs of each";
  EXPECT_NE(why("stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=7").find("shared memory"), std::string::npos)
      << "7 x 72 rows x 528 bytes is over 227 KB";
  EXPECT_NE(why("stream tn f32 tile=64x64x256 warps=1x1 kwarps=4 stages=2").find("tile M"), std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=5 | splits=5").find("splits"),
            std::string::npos);
  EXPECT_NE(why("stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=5 | splits=2").find("CTAs per SM"),
            std::string::npos)
      << "two rings of 187 KB do not fit one SM";
  EXPECT_EQ(why("stream tn f32 tile=8x64x128 warps=1x1 kwarps=2 stages=3 | splits=3"), "");
  EXPECT_NE(why("stream tn f32 tile=8x64x1024 warps=1x1 kwarps=16 stages=2").find("tile K"), std::string::npos);
}

TEST(StreamRule, BoundsFromTheEnvironmentWidenTheClass) {
  cudal2::rt::StreamBounds wide;
  wide.max_m = 32;
  EXPECT_FALSE(cudal2::rt::in_stream_class(1, 24, 4096, 16384, kL2)) << "the default bound is 8 tokens";
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 24, 4096, 16384, kL2, wide));
  EXPECT_EQ(pick_stream(kPortfolio, 1, 0, 24, 4096, 16384, 132, kL2, wide).kernel, -1)
      << "in the class, but no kernel of the portfolio holds 24 tokens";
  cudal2::rt::StreamBounds small;
  small.min_weight_bytes = 0;
  EXPECT_TRUE(cudal2::rt::in_stream_class(1, 1, 1024, 1024, kL2, small)) << "the weight bound overridden";
  EXPECT_GE(pick_stream(kPortfolio, 1, 0, 1, 1024, 1024, 132, kL2, small).kernel, 0);
}

TEST(StreamRule, EnvironmentIsCheckedNotGuessed) {
  EXPECT_EQ(cudal2::rt::stream_enabled(nullptr), cudal2::rt::kStreamDefaultOn);
  EXPECT_EQ(cudal2::rt::stream_enabled(""), cudal2::rt::kStreamDefaultOn);
  EXPECT_TRUE(cudal2::rt::stream_enabled("1"));
  EXPECT_FALSE(cudal2::rt::stream_enabled("0"));
  EXPECT_TRUE(cudal2::rt::stream_env_valid("0"));
  EXPECT_FALSE(cudal2::rt::stream_env_valid("yes"));
  EXPECT_EQ(cudal2::rt::parse_stream_bound("32", 1, 256), 32);
  EXPECT_FALSE(cudal2::rt::parse_stream_bound("0", 1, 256)) << "below the range";
  EXPECT_FALSE(cudal2::rt::parse_stream_bound("32x", 1, 256)) << "trailing text";
  EXPECT_FALSE(cudal2::rt::parse_stream_bound("", 1, 256));
  EXPECT_FALSE(cudal2::rt::parse_stream_bound("99999999999999999999", 1, 256)) << "overflow";
}

}  // namespace

// Family stream_sweep (codegen/family_stream_sweep.cpp): TN and NN, fp32 only, every enumerated spec
// round-trips, the runtime's kernel (runtime/stream_kernels.cu) is the default and generates the
// Config it compiles, and the refusals name what is wrong.
TEST(StreamSweepFamily, SpecsRoundTripAndGenerateTheConfig) {
  expect_space_round_trips("stream_sweep");
  EXPECT_TRUE(cudal2::enumerate_specs("stream_sweep", Layout::NN, Accum::F16, true).empty());
  EXPECT_TRUE(cudal2::enumerate_specs("stream_sweep", Layout::TN, Accum::F16, true).empty());
  for (const auto& spec : cudal2::enumerate_specs("stream_sweep", Layout::NN, Accum::F32, true)) {
    EXPECT_EQ(spec.layout, Layout::NN);
    EXPECT_LE(spec.tile_m, 16) << spec.text();
    EXPECT_NE(spec.tile_n, 48) << spec.text();
  }
  EXPECT_FALSE(cudal2::enumerate_specs("stream_sweep", Layout::NN, Accum::F32, false).empty());
  // NN: the 9th Config argument, and B's rows must be 16-byte aligned (N % 8 == 0).
  const auto nn = cudal2::parse_spec("stream_sweep nn f32 tile=8x64x32 kwarps=4 stages=1 ctas=3 pipe=1 | splits=2");
  EXPECT_NE(cudal2::generate_source(nn).find("cudal2_stream_sweep::Config<4, 1, 4, 1, 3, 0, 1, 0, 1>"),
            std::string::npos)
      << cudal2::generate_source(nn);
  EXPECT_EQ(cudal2::shape_refusal(nn, {8, 4096, 4096}), "");
  EXPECT_NE(cudal2::shape_refusal(nn, {8, 4100, 4096}).find("N 4100"), std::string::npos);
  // keep=1 (B's lines stay in the L2): the 10th argument, written only when set.
  const std::string kept = "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1 keep=1";
  EXPECT_EQ(cudal2::parse_spec(kept).compile_text(), kept);
  EXPECT_NE(cudal2::generate_source(cudal2::parse_spec(kept)).find("Config<1, 1, 8, 2, 3, 0, 1, 0, 0, 1>"),
            std::string::npos);
  try {
    cudal2::parse_spec("stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1 keep=2");
    ADD_FAILURE() << "keep=2 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("keep 2"), std::string::npos) << e.what();
  }

  const std::string runtime_kernel = "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1";
  const auto s = cudal2::parse_spec(runtime_kernel);
  EXPECT_EQ(s.compile_text(), runtime_kernel);
  EXPECT_EQ(s.text(), runtime_kernel + " | splits=1");
  EXPECT_EQ(s.text(), cudal2::default_spec("stream_sweep").text());
  const std::string src = cudal2::generate_source(s);
  EXPECT_NE(src.find("cudal2_stream_sweep::Config<1, 1, 8, 2, 3, 0, 1, 0>"), std::string::npos) << src;
  EXPECT_NE(src.find("stream_sweep_gemm.cuh"), std::string::npos);
  const auto sixteen =
      cudal2::parse_spec("stream_sweep tn f32 tile=16x32x32 kwarps=4 stages=2 ctas=4 pipe=0 pdl=1 | splits=8");
  EXPECT_EQ(sixteen.splits, 8);
  EXPECT_NE(cudal2::generate_source(sixteen).find("cudal2_stream_sweep::Config<2, 2, 4, 2, 4, 1, 0, 0>"),
            std::string::npos);
  // Warps over rows: 4 warps of one 16-row tile each, 64 tokens; the tile's N is the CTA's rows.
  const std::string rows_text = "stream_sweep tn f32 tile=64x64x32 warps=1x4 kwarps=1 stages=1 ctas=3 pipe=1";
  const auto rows = cudal2::parse_spec(rows_text);
  EXPECT_EQ(rows.compile_text(), rows_text);
  EXPECT_NE(cudal2::generate_source(rows).find("cudal2_stream_sweep::Config<1, 8, 4, 1, 3, 0, 1, 1>"),
            std::string::npos)
      << cudal2::generate_source(rows);
  EXPECT_EQ(cudal2::shape_refusal(rows, {64, 4096, 4096}), "");
  EXPECT_NE(cudal2::shape_refusal(rows, {65, 4096, 4096}).find("tokens"), std::string::npos);

  EXPECT_EQ(cudal2::shape_refusal(s, {8, 4096, 4096}), "");
  EXPECT_NE(cudal2::shape_refusal(s, {9, 4096, 4096}).find("tokens"), std::string::npos);
  EXPECT_NE(cudal2::shape_refusal(s, {1, 4096, 4100}).find("multiple of 8"), std::string::npos);
  const std::pair<const char*, const char*> bad[] = {
      {"stream_sweep nn f32 tile=8x48x32 kwarps=4 stages=1 ctas=3", "columns a warp"},
      {"stream_sweep nn f32 tile=8x32x32 kwarps=8 stages=1 ctas=3 pipe=1", "registers"},  // spilled under ptxas
      {"stream_sweep tn f16 tile=8x16x32 kwarps=8 stages=4 ctas=3", "fp32"},
      {"stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=4 ctas=4", "registers"},         // spilled under ptxas
      {"stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=4 ctas=3 pipe=1", "registers"},  // two batches of 4
      {"stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=2", "pipe"},
      {"stream_sweep tn f32 tile=8x16x64 kwarps=8 stages=4 ctas=3", "tile K"},
      {"stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 | splits=3", "splits"},
      {"stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=4 ctas=3 order=1", "unknown field"},
      {"stream_sweep tn f32 tile=16x64x32 warps=1x4 kwarps=2 stages=2 ctas=2", "not both"},
      {"stream_sweep tn f32 tile=16x48x32 warps=1x4 kwarps=1 stages=2 ctas=2", "rows a warp"},
      {"stream_sweep tn f32 tile=24x16x32 kwarps=8 stages=2 ctas=3", "tokens"},
      {"stream_sweep tn f32 tile=64x128x32 warps=1x8 kwarps=1 stages=2 ctas=2 pipe=1", "registers"},
      {"stream_sweep tn f32 tile=64x512x32 warps=1x8 kwarps=1 stages=1 ctas=1 pipe=0", "shared memory"},
  };
  for (const auto& [text, why] : bad) {
    try {
      (void)cudal2::parse_spec(text);
      ADD_FAILURE() << text << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  }
}
