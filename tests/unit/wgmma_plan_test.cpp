// The wgmma family's host-side planning (src/kernels/wgmma_plan.h) and its spec text, validity and
// enumeration (src/codegen/family_wgmma.cpp).
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "kernels/wgmma_plan.h"

namespace cudal2 {
namespace {
namespace plan = cudal2_wgmma_plan;

TEST(WgmmaPlan, TileOrderIsABijectionForEveryRasterAndSwizzle) {
  for (auto [tm, tn] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 9}, {9, 1}, {7, 5}, {32, 16}, {33, 17}})
    for (int raster : {0, 1, 2})
      for (int sw : {1, 2, 4, 8}) {
        const plan::Tiles t{tm, tn};
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t id = 0; id < t.count(); ++id) {
          const auto c = plan::tile_coord(id, t, raster, sw);
          ASSERT_GE(c.m, 0);
          ASSERT_LT(c.m, tm);
          ASSERT_GE(c.n, 0);
          ASSERT_LT(c.n, tn);
          seen.insert({c.m, c.n});
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), t.count()) << tm << "x" << tn << " r" << raster << " s" << sw;
      }
}

TEST(WgmmaPlan, RasterAndSwizzleOrder) {
  const plan::Tiles t{4, 6};
  // along M, swizzle 1: ids walk down a column of M tiles.
  EXPECT_EQ(plan::tile_coord(1, t, 1, 1).m, 1);
  EXPECT_EQ(plan::tile_coord(1, t, 1, 1).n, 0);
  EXPECT_EQ(plan::tile_coord(4, t, 1, 1).n, 1);
  // along N, swizzle 1: along a row of N tiles.
  EXPECT_EQ(plan::tile_coord(1, t, 2, 1).n, 1);
  EXPECT_EQ(plan::tile_coord(6, t, 2, 1).m, 1);
  // along M, swizzle 2: zigzag across two N tiles, then down.
  EXPECT_EQ(plan::tile_coord(1, t, 1, 2).m, 0);
  EXPECT_EQ(plan::tile_coord(1, t, 1, 2).n, 1);
  EXPECT_EQ(plan::tile_coord(2, t, 1, 2).m, 1);
  EXPECT_EQ(plan::tile_coord(2, t, 1, 2).n, 0);
  // heuristic: along M when there are at least as many N tiles as M tiles.
  EXPECT_EQ(plan::resolve_raster(0, t), 1);
  EXPECT_EQ(plan::resolve_raster(0, plan::Tiles{6, 4}), 2);
}

TEST(WgmmaPlan, PersistentGridAndTiles) {
  EXPECT_EQ(plan::tiles(4096, 4096, 128, 256).m, 32);
  EXPECT_EQ(plan::tiles(4096, 4096, 128, 256).n, 16);
  EXPECT_EQ(plan::tiles(1, 4097, 64, 192).n, 22);
  EXPECT_EQ(plan::k_tiles(8), 1);
  EXPECT_EQ(plan::k_tiles(4097), 65);
  EXPECT_EQ(plan::persistent_ctas(plan::tiles(4096, 4096, 128, 256), 132, 1), 132);
  EXPECT_EQ(plan::persistent_ctas(plan::tiles(100, 100, 128, 128), 132, 1), 1);
  EXPECT_EQ(plan::persistent_ctas(plan::Tiles{3, 1}, 132, 2), 4);
  EXPECT_EQ(plan::persistent_ctas(plan::Tiles{200, 1}, 133, 2), 132);
  EXPECT_EQ(plan::cluster_units(plan::Tiles{33, 16}, 2, 1).m, 17);
  EXPECT_EQ(plan::cluster_units(plan::Tiles{33, 17}, 1, 2).n, 9);
}

TEST(WgmmaPlan, SharedMemoryAndAlignmentRules) {
  EXPECT_EQ(plan::stage_bytes(128, 256), 48 * 1024);
  EXPECT_EQ(plan::max_stages(128, 256), 4);
  EXPECT_EQ(plan::max_stages(128, 128), 6);
  EXPECT_EQ(plan::max_stages(128, 192), 4);
  EXPECT_EQ(plan::max_stages(64, 256), 5);
  EXPECT_LE(plan::smem_bytes(128, 256, 4), plan::kSmemBudget);
  EXPECT_GT(plan::smem_bytes(128, 192, 5), plan::kSmemBudget);
  EXPECT_EQ(plan::threads(128), 384);
  EXPECT_EQ(plan::threads(64), 256);
  EXPECT_TRUE(plan::tma_rows_ok(7, 64, true));
  EXPECT_FALSE(plan::tma_rows_ok(7, 64, false));
  EXPECT_FALSE(plan::tma_rows_ok(64, 7, true));
  EXPECT_TRUE(plan::tma_rows_ok(1000, 1000, false));
}

TEST(WgmmaSpec, TextRoundTripsAndValidity) {
  const auto s = parse_spec("wgmma tn f32 tile=128x192x64 stages=4 | raster=along_n swizzle=4");
  EXPECT_EQ(s.text(), "wgmma tn f32 tile=128x192x64 cluster=1x1 stages=4 | raster=along_n swizzle=4");
  EXPECT_EQ(parse_spec(s.text()), s);
  EXPECT_EQ(parse_spec("wgmma nn f16").text(),
            "wgmma nn f16 tile=128x256x64 cluster=1x1 stages=4 | raster=heuristic swizzle=1");
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=128x256x64 stages=5"), InputError);  // 240 KB
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=256x128x64"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=128x128x32"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 cluster=2x2"), InputError);
  EXPECT_EQ(parse_spec("wgmma tn f32 tile=64x128x64 cluster=1x2 stages=8").cluster_n, 2);
  EXPECT_THROW(parse_spec("wgmma nn f32 warps=2x2"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 | splits=2"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 | swizzle=3"), InputError);
  EXPECT_NE(shape_refusal(parse_spec("wgmma nn f32"), {64, 7, 64}), "");
  EXPECT_EQ(shape_refusal(parse_spec("wgmma tn f32"), {64, 7, 64}), "");
  EXPECT_NE(shape_refusal(parse_spec("wgmma tn f32"), {64, 64, 7}), "");
  bool known = false;
  for (const auto& f : known_families()) known |= f == "wgmma";
  EXPECT_TRUE(known);
}

TEST(WgmmaSpec, EnumerationIsValidAndDistinct) {
  for (auto layout : {Layout::NN, Layout::TN}) {
    const auto compile = enumerate_specs("wgmma", layout, Accum::F32, false);
    const auto all = enumerate_specs("wgmma", layout, Accum::F32, true);
    EXPECT_EQ(all.size(), compile.size() * 12);
    std::set<std::string> texts;
    for (const auto& s : all) {
      EXPECT_EQ(invalid_reason(s), "") << s.text();
      EXPECT_EQ(parse_spec(s.text()), s);
      texts.insert(s.text());
    }
    EXPECT_EQ(texts.size(), all.size());
    // 8 tiles x 3 clusters x stages 3..6 where they fit (128x256, 128x192: 3..4; 64x256: 3..5): 27.
    EXPECT_EQ(compile.size(), 3u * 27);
  }
  const auto src = generate_source(parse_spec("wgmma tn f16 tile=64x128x64 stages=6"));
  EXPECT_NE(src.find("#define CUDAL2_BN 128"), std::string::npos);
  EXPECT_NE(src.find("#define CUDAL2_LAYOUT_TN 1"), std::string::npos);
  EXPECT_NE(src.find("#define CUDAL2_ACCUM_F16 1"), std::string::npos);
  EXPECT_NE(src.find("#include \"wgmma_gemm.cuh\""), std::string::npos);
}

}  // namespace
}  // namespace cudal2
