// The wgmma_swapab family's host-side planning (src/kernels/wgmma_swapab_plan.h) and its spec text,
// validity and shape rules (src/codegen/family_wgmma_swapab.cpp).
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "kernels/wgmma_swapab_plan.h"

namespace cudal2 {
namespace {
namespace plan = cudal2_swapab_plan;

TEST(SwapabPlan, EveryCtaHasOneTileAndSplitAndClustersAreConsecutive) {
  for (auto [m, n, bm, bn, splits] : {std::tuple{1, 1, 8, 64, 1}, std::tuple{7, 4097, 8, 128, 4},
                                      std::tuple{65, 1000, 32, 64, 2}, std::tuple{256, 16384, 64, 128, 8}}) {
    const auto g = plan::grid(m, n, bm, bn, splits);
    EXPECT_EQ(g.m_tiles, (m + bm - 1) / bm);
    EXPECT_EQ(g.n_tiles, (n + bn - 1) / bn);
    std::set<std::tuple<int64_t, int64_t, int>> seen;
    for (int64_t b = 0; b < g.ctas(); ++b) {
      const auto c = plan::cta_of(b, g);
      ASSERT_LT(c.tile_m, g.m_tiles);
      ASSERT_LT(c.tile_n, g.n_tiles);
      // A cluster is `splits` consecutive CTAs: the same tile, ranks 0..splits-1.
      EXPECT_EQ(c.split, b % splits);
      const auto first = plan::cta_of(b - b % splits, g);
      EXPECT_EQ(c.tile_m, first.tile_m);
      EXPECT_EQ(c.tile_n, first.tile_n);
      seen.insert({c.tile_m, c.tile_n, c.split});
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), g.ctas());
  }
}

TEST(SwapabPlan, PairsAreTwoConsecutiveCtasOnNeighbouringTilesOfTheSharedOperand) {
  for (auto [m, n, bm, bn, cm, cn] : {std::tuple{4096, 64, 32, 64, 2, 1}, std::tuple{65, 1000, 16, 64, 2, 1},
                                      std::tuple{64, 4096, 64, 64, 1, 2}, std::tuple{7, 4097, 16, 128, 1, 2}}) {
    const auto g = plan::grid(m, n, bm, bn, 1, cm, cn);
    // Odd tile counts are rounded up: the pair's padding CTA loads its half and stores nothing.
    EXPECT_EQ(g.m_tiles % cm, 0);
    EXPECT_EQ(g.n_tiles % cn, 0);
    EXPECT_GE(g.m_tiles * bm, m);
    EXPECT_LT(g.m_tiles * bm, m + bm * cm);
    EXPECT_GE(g.n_tiles * bn, n);
    EXPECT_LT(g.n_tiles * bn, n + bn * cn);
    std::set<std::tuple<int64_t, int64_t>> seen;
    for (int64_t b = 0; b < g.ctas(); ++b) {
      const auto c = plan::cta_of(b, g, cn);
      ASSERT_LT(c.tile_m, g.m_tiles);
      ASSERT_LT(c.tile_n, g.n_tiles);
      EXPECT_EQ(c.split, 0);
      seen.insert({c.tile_m, c.tile_n});
      if (b % 2 == 0) continue;
      // Cluster rank b % 2: the pair shares B (same N tile, M tiles 2i, 2i+1) or A (the converse).
      const auto first = plan::cta_of(b - 1, g, cn);
      if (cm == 2) {
        EXPECT_EQ(c.tile_n, first.tile_n);
        EXPECT_EQ(c.tile_m, first.tile_m + 1);
        EXPECT_EQ(first.tile_m % 2, 0);
      } else {
        EXPECT_EQ(c.tile_m, first.tile_m);
        EXPECT_EQ(c.tile_n, first.tile_n + 1);
        EXPECT_EQ(first.tile_n % 2, 0);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), g.ctas());
  }
  // A pair runs without split-K: the auto count is 1 there.
  EXPECT_EQ(plan::resolve_splits(0, 64, 64, 132, true), 1);
  EXPECT_EQ(plan::resolve_splits(0, 64, 64, 132, false), 2);
  EXPECT_TRUE(plan::cluster_tile_ok(2, 1, 8));
  EXPECT_FALSE(plan::cluster_tile_ok(1, 2, 8));  // half of 8 rows is no whole swizzle atom
  EXPECT_TRUE(plan::cluster_tile_ok(1, 2, 16));
  EXPECT_FALSE(plan::cluster_tile_ok(2, 2, 32));
}

TEST(SwapabPlan, SplitsCoverKInOrderWithoutOverlap) {
  for (int64_t kt : {1, 2, 3, 7, 64, 256})
    for (int splits : {1, 2, 4, 8}) {
      int64_t next = 0, shortest = kt, longest = 0;
      for (int s = 0; s < splits; ++s) {
        const auto r = plan::k_range(kt, splits, s);
        EXPECT_EQ(r.begin, next) << kt << " tiles, split " << s << " of " << splits;
        EXPECT_GE(r.end, r.begin);
        shortest = std::min(shortest, r.end - r.begin), longest = std::max(longest, r.end - r.begin);
        next = r.end;
      }
      EXPECT_EQ(next, kt);
      EXPECT_LE(longest - shortest, 1);
    }
}

TEST(SwapabPlan, AutoSplitsFitOneCtaPerSmWithEnoughKPerSplit) {
  // Decode 16 x 4096 x 4096 with 64-wide N tiles: 64 tiles, 64 K tiles -> 2 splits (128 CTAs).
  EXPECT_EQ(plan::auto_splits(64, 64, 132), 2);
  EXPECT_EQ(plan::auto_splits(32, 64, 132), 4);   // 128 CTAs
  EXPECT_EQ(plan::auto_splits(16, 64, 132), 8);   // 128 CTAs
  EXPECT_EQ(plan::auto_splits(67, 64, 132), 1);   // 134 CTAs with 2 would not fit
  EXPECT_EQ(plan::auto_splits(200, 64, 132), 1);  // the tiles alone cover the SMs
  EXPECT_EQ(plan::auto_splits(8, 4, 132), 1);     // K too short to split (2 splits would have 2 tiles each)
  EXPECT_EQ(plan::auto_splits(8, 8, 132), 2);     // 2 splits of 4 K tiles, not 4 of 2
  EXPECT_EQ(plan::auto_splits(8, 16, 132), 4);
  EXPECT_EQ(plan::auto_splits(1, 4096, 132), plan::kMaxSplits);
  EXPECT_EQ(plan::resolve_splits(2, 1, 4096, 132), 2);  // explicit counts are kept
}

TEST(SwapabPlan, SharedMemoryOfEveryEnumeratedConfigurationFits) {
  for (auto layout : {Layout::NN, Layout::TN})
    for (const auto& s : enumerate_specs("wgmma_swapab", layout, Accum::F32, false)) {
      EXPECT_LE(plan::smem_bytes(s.tile_m, s.tile_n, s.stages), plan::kSmemBudget) << s.text();
      EXPECT_LE(s.stages, plan::max_stages(s.tile_m, s.tile_n)) << s.text();
    }
  EXPECT_EQ(plan::max_stages(64, 128), 8);
  EXPECT_EQ(plan::max_stages(8, 64), plan::kMaxStages);
  // The reduction tile's rows are 16-byte aligned (float4 reads) for both tile widths.
  EXPECT_EQ(plan::red_pitch(64) * 4 % 16, 0);
  EXPECT_EQ(plan::red_pitch(128) * 4 % 16, 0);
}

TEST(SwapabSpec, TextRoundTripsAndAutoSplits) {
  const auto d = parse_spec("wgmma_swapab tn f32");
  EXPECT_EQ(d.text(), "wgmma_swapab tn f32 tile=16x128x64 stages=8 | splits=auto");
  const auto s = parse_spec("wgmma_swapab nn f16 tile=8x64x64 stages=12 | splits=8");
  EXPECT_EQ(parse_spec(s.text()).text(), s.text());
  EXPECT_EQ(s.splits, 8);
  const auto src = generate_source(s);
  EXPECT_NE(src.find("  static constexpr bool kLayoutTN = false;\n"
                     "  static constexpr bool kAccumF16 = true;\n"
                     "  static constexpr int kTileM = 8;\n"
                     "  static constexpr int kTileN = 64;\n"
                     "  static constexpr int kStages = 12;\n"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("using cudal2_kernel = cudal2_wgmma_swapab::Gemm<cudal2_config>;"), std::string::npos) << src;
  EXPECT_NE(src.find("#include \"wgmma_swapab.cuh\""), std::string::npos);
  // Without a pair the source names no cluster (configurations stored before pairs keep theirs).
  EXPECT_EQ(src.find("kCluster"), std::string::npos) << src;
  const auto pair = parse_spec("wgmma_swapab nn f32 tile=32x64x64 cluster=2x1 stages=16 | splits=1");
  EXPECT_EQ(pair.text(), "wgmma_swapab nn f32 tile=32x64x64 cluster=2x1 stages=16 | splits=1");
  EXPECT_EQ(parse_spec(pair.text()).text(), pair.text());
  EXPECT_NE(generate_source(pair).find("  static constexpr int kClusterM = 2;\n"
                                       "  static constexpr int kClusterN = 1;\n"),
            std::string::npos);
  EXPECT_EQ(parse_spec("wgmma_swapab tn f32 tile=16x64x64 cluster=1x2 stages=8").text(),
            "wgmma_swapab tn f32 tile=16x64x64 cluster=1x2 stages=8 | splits=auto");
  EXPECT_EQ(parse_spec("wgmma_swapab tn f32 tile=16x64x64 cluster=1x1 stages=8").text(),
            "wgmma_swapab tn f32 tile=16x64x64 stages=8 | splits=auto");
}

TEST(SwapabSpec, InvalidSpecsAreRefusedWithTheReason) {
  auto why = [](const char* text) {
    try {
      parse_spec(text);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(why("wgmma_swapab tn f32 tile=128x128x64").find("tile M 128"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 tile=16x256x64").find("tile N 256"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 tile=64x128x64 stages=12").find("stages must be 2..8"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 | splits=3").find("splits must be auto, 1, 2, 4 or 8"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 cluster=2x2").find("cluster 2x2 not one of"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 tile=8x64x64 cluster=1x2").find("tile M >= 16"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 cluster=2x1 | splits=2").find("splits must be auto or 1"), std::string::npos);
  EXPECT_NE(why("wgmma_swapab tn f32 warps=1x1").find("unknown"), std::string::npos);
}

TEST(SwapabSpec, ShapeRulesOfTheSearch) {
  const auto tn = parse_spec("wgmma_swapab tn f32 | splits=8");
  const auto nn = parse_spec("wgmma_swapab nn f32");
  EXPECT_EQ(shape_refusal(tn, Shape{16, 4096, 4096}), "");
  EXPECT_EQ(shape_refusal(tn, Shape{16, 4095, 4096}), "");   // tn: N is free
  EXPECT_NE(shape_refusal(nn, Shape{16, 4095, 4096}), "");   // nn: B's rows are N long
  EXPECT_NE(shape_refusal(tn, Shape{16, 4096, 4095}), "");   // K % 8
  EXPECT_NE(shape_refusal(tn, Shape{512, 4096, 4096}), "");  // M beyond the search's scope
  EXPECT_NE(shape_refusal(tn, Shape{16, 4096, 448}), "");    // 8 splits of 7 K tiles
}

}  // namespace
}  // namespace cudal2
