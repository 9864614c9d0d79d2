// The wgmma family's host-side planning (src/kernels/wgmma_plan.h) and its spec text, validity and
// enumeration (src/codegen/family_wgmma.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

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
  // Ping-pong: two consumer warpgroups whatever the tile (so two epilogue buffer pairs), each
  // holding a whole tile's accumulators: at most 128x128 or 64x256.
  EXPECT_EQ(plan::consumers(64, true), 2);
  EXPECT_EQ(plan::threads(64, true), 384);
  EXPECT_EQ(plan::epi_bytes(64, true), plan::epi_bytes(128));
  EXPECT_EQ(plan::max_stages(128, 128, true), 6);
  EXPECT_EQ(plan::max_stages(64, 256, true), 4);
  EXPECT_EQ(plan::max_stages(64, 128, true), 8);
  // The 32-wide tile has no TMA-store buffers (C from registers): 12 KB stages of 64x32 up to the
  // barriers' 15, 20 KB stages of 128x32 up to what 227 KB holds.
  EXPECT_FALSE(plan::tma_epilogue(32));
  EXPECT_EQ(plan::own_bytes(128, 32), 0);
  EXPECT_EQ(plan::max_stages(64, 32), plan::kMaxStages);
  EXPECT_EQ(plan::max_stages(128, 32), 11);
  EXPECT_LE(plan::smem_bytes(128, 32, 11), plan::kSmemBudget);
  EXPECT_TRUE(plan::pingpong_fits(128, 128));
  EXPECT_TRUE(plan::pingpong_fits(64, 256));
  EXPECT_FALSE(plan::pingpong_fits(128, 192));
  EXPECT_FALSE(plan::pingpong_fits(128, 256));
  EXPECT_TRUE(plan::tma_rows_ok(7, 64, true));
  EXPECT_FALSE(plan::tma_rows_ok(7, 64, false));
  EXPECT_FALSE(plan::tma_rows_ok(64, 7, true));
  EXPECT_TRUE(plan::tma_rows_ok(1000, 1000, false));
}

TEST(WgmmaPlan, SplitRangesCoverKInOrder) {
  for (int64_t kt : {1, 2, 7, 64, 65, 257})
    for (int sp = 1; sp <= 64 && sp <= kt; ++sp) {
      int64_t next = 0, shortest = kt, longest = 0;
      for (int s = 0; s < sp; ++s) {
        const auto r = plan::split_range(kt, sp, s);
        ASSERT_EQ(r.begin, next) << kt << " / " << sp << " split " << s;
        ASSERT_GT(r.end, r.begin);
        shortest = std::min(shortest, r.end - r.begin), longest = std::max(longest, r.end - r.begin);
        next = r.end;
      }
      EXPECT_EQ(next, kt);
      EXPECT_LE(longest - shortest, 1);  // balanced
    }
  EXPECT_EQ(plan::split_range(10, 4, 0).end, 3);  // 3 3 2 2
  EXPECT_EQ(plan::split_range(10, 4, 2).begin, 6);
  EXPECT_EQ(plan::split_range(10, 4, 3).end, 10);
}

TEST(WgmmaPlan, WorkItemsAreUnitMajorAndCoverEveryUnitSplitOnce) {
  const int64_t units = 5, kt = 9;
  for (int sp : {1, 2, 3, 9}) {
    std::set<std::pair<int64_t, int>> seen;
    int64_t covered = 0;
    for (int64_t w = 0; w < units * sp; ++w) {
      const auto wk = plan::work_of(w, sp, kt);
      ASSERT_EQ(wk.unit, w / sp);  // the splits of a unit are consecutive items
      ASSERT_EQ(wk.split, w % sp);
      ASSERT_LT(wk.unit, units);
      seen.insert({wk.unit, wk.split});
      covered += wk.k.end - wk.k.begin;
      EXPECT_EQ(wk.k.begin, plan::split_range(kt, sp, wk.split).begin);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), units * sp);
    EXPECT_EQ(covered, units * kt);  // every unit's K exactly once
  }
  // splits 1 is the data-parallel walk: item = unit, all of K.
  EXPECT_EQ(plan::work_of(7, 1, 64).unit, 7);
  EXPECT_EQ(plan::work_of(7, 1, 64).k.begin, 0);
  EXPECT_EQ(plan::work_of(7, 1, 64).k.end, 64);
}

TEST(WgmmaPlan, AutoSplitsFillTheSmsWithoutShortRanges) {
  // The reduction costs 4 K-tile steps for 128x128 (64 KB written and read per split against
  // 32 KB loaded per step) and 6 for 128x256, plus the wait.
  const int64_t r128 = plan::reduce_steps(128, 128), r256 = plan::reduce_steps(128, 256);
  EXPECT_EQ(r128, 5);
  EXPECT_EQ(r256, 7);
  // A full wave of tiles (or more): no split.
  EXPECT_EQ(plan::auto_splits(132, 64, 132, r128), 1);
  EXPECT_EQ(plan::auto_splits(512, 64, 132, r128), 1);
  // 4096x128x4096 with 128x128 tiles: 32 tiles of 64 K tiles -> 4 (128 items, one wave).
  EXPECT_EQ(plan::auto_splits(32, 64, 132, r128), 4);
  // 1024x1024x16384 with 128x256 tiles: 32 tiles of 256 K tiles -> 4.
  EXPECT_EQ(plan::auto_splits(32, 256, 132, r256), 4);
  // 256x256x8192 with 128x256 tiles: 2 tiles of 128 K tiles: the reduction is spread over the
  // splits, so they fill the SMs down to 4 K tiles each.
  EXPECT_EQ(plan::auto_splits(2, 128, 132, r256), 32);
  // 256x256x16384 with 128x128 tiles: up to 33 splits; 32 gives the same 8 K tiles each.
  EXPECT_EQ(plan::auto_splits(4, 256, 132, r128), 32);
  // 2x1 clusters: 66 slots.
  EXPECT_EQ(plan::auto_splits(16, 64, 66, r128), 4);
  // Too short to be worth a reduction: 8 K tiles split in 2 cost 4 + 5 > 8.
  EXPECT_EQ(plan::auto_splits(4, 8, 132, r128), 1);
  for (int64_t units : {1, 2, 3, 16, 33, 65, 100, 131})
    for (int64_t kt : {1, 4, 7, 8, 64, 1000}) {
      const int s = plan::auto_splits(units, kt, 132, r128);
      EXPECT_GE(s, 1);
      EXPECT_LE(s, plan::kMaxSplits);
      if (s > 1) {
        EXPECT_GE(kt / s, plan::kMinSplitKTiles) << units << " " << kt;  // no range under 4 K tiles
        EXPECT_LE(units * s, 132) << units << " " << kt;                 // one wave
        EXPECT_TRUE(plan::splits_fit_wave(units, s, 132));
      }
    }
  EXPECT_EQ(plan::auto_splits(10, 7, 132, r128), 1);  // K too short to split
  EXPECT_EQ(plan::resolve_splits(0, 32, 64, 132, r128), 4);
  EXPECT_EQ(plan::resolve_splits(3, 32, 64, 132, r128), 3);
  EXPECT_EQ(plan::resolve_splits(1, 32, 64, 132, r128), 1);
  // Every (unit, split) item must hold a slot of the grid at once.
  EXPECT_TRUE(plan::splits_fit_wave(2, 33, 66));
  EXPECT_FALSE(plan::splits_fit_wave(2, 33, 57));  // 2-CTA clusters on a 114-SM GPU
  EXPECT_FALSE(plan::splits_fit_wave(32, 8, 132));
}

TEST(WgmmaPlan, SplitWorkspace) {
  const plan::Tiles t{32, 1};
  EXPECT_EQ(plan::workspace_bytes(t, 128, 128, 1), 0u);
  EXPECT_EQ(plan::counters_bytes(t), 256u);  // 32 tiles x 4 bytes, padded
  EXPECT_EQ(plan::workspace_bytes(t, 128, 128, 4), 256u + 32u * 4 * 128 * 128 * 4);
  EXPECT_EQ(plan::counters_bytes(plan::Tiles{100, 1}), 512u);
  EXPECT_EQ(plan::counters_bytes(plan::Tiles{64, 2}), 512u);
  EXPECT_TRUE(plan::split_fits(t, 64));
  EXPECT_FALSE(plan::split_fits(plan::Tiles{1 << 20, 1 << 4}, 2));
  EXPECT_EQ(plan::persistent_ctas(int64_t(128), 132, 1), 128);
  EXPECT_EQ(plan::persistent_ctas(int64_t(33 * 4), 66, 1), 66);
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
  // splits: 1 is the default and not printed (the texts from before split-K are unchanged).
  const auto sk = parse_spec("wgmma tn f32 tile=128x128x64 stages=6 | splits=4");
  EXPECT_EQ(sk.text(), "wgmma tn f32 tile=128x128x64 cluster=1x1 stages=6 | raster=heuristic swizzle=1 splits=4");
  EXPECT_EQ(parse_spec(sk.text()), sk);
  EXPECT_EQ(sk.compile_text(), parse_spec("wgmma tn f32 tile=128x128x64 stages=6").compile_text());
  const auto sa = parse_spec("wgmma nn f32 | splits=auto");
  EXPECT_EQ(sa.splits, 0);
  EXPECT_EQ(sa.text(), "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=heuristic swizzle=1 splits=auto");
  EXPECT_EQ(parse_spec(sa.text()), sa);
  EXPECT_EQ(parse_spec("wgmma nn f32 | splits=0"), sa);
  EXPECT_EQ(parse_spec("wgmma nn f32 | splits=1").text(), parse_spec("wgmma nn f32").text());
  EXPECT_THROW(parse_spec("wgmma nn f32 | splits=65"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 | splits=-1"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 | decomposition=splitk"), InputError);
  EXPECT_THROW(parse_spec("mma nn f32 | splits=auto"), InputError);  // auto is wgmma's alone
  EXPECT_THROW(parse_spec("wgmma nn f32 | swizzle=3"), InputError);
  EXPECT_NE(shape_refusal(parse_spec("wgmma nn f32"), {64, 7, 64}), "");
  EXPECT_EQ(shape_refusal(parse_spec("wgmma tn f32"), {64, 7, 64}), "");
  EXPECT_NE(shape_refusal(parse_spec("wgmma tn f32"), {64, 64, 7}), "");
  // Explicit split counts: at most the K tiles, and only where tiles x splits fit in one wave.
  const auto s4 = parse_spec("wgmma tn f32 tile=128x128x64 stages=6 | splits=4");
  EXPECT_EQ(shape_refusal(s4, {4096, 128, 4096}), "");   // 32 tiles x 4 = 128 items
  EXPECT_NE(shape_refusal(s4, {4096, 4096, 4096}), "");  // 1024 tiles
  EXPECT_NE(shape_refusal(parse_spec("wgmma tn f32 tile=128x128x64 stages=6 | splits=8"), {4096, 128, 4096}),
            "");                                      // 256 items: two laps
  EXPECT_NE(shape_refusal(s4, {128, 128, 192}), "");  // 3 K tiles
  EXPECT_EQ(shape_refusal(parse_spec("wgmma tn f32 tile=128x128x64 stages=6 | splits=auto"), {4096, 4096, 4096}), "");
  EXPECT_NE(
      shape_refusal(parse_spec("wgmma tn f32 tile=128x128x64 cluster=2x1 stages=6 | splits=2"), {128 * 68, 128, 4096}),
      "");  // 34 pairs x 2 splits: 68 items for 66 clusters
  EXPECT_EQ(
      shape_refusal(parse_spec("wgmma tn f32 tile=128x128x64 cluster=2x1 stages=6 | splits=2"), {128 * 66, 128, 4096}),
      "");  // 33 pairs x 2 splits
  // Ping-pong: printed only when chosen (the cooperative texts are unchanged), no split-K, tiles
  // whose accumulators one warpgroup holds.
  const auto pp = parse_spec("wgmma nn f32 tile=128x128x64 stages=6 mainloop=pingpong | raster=along_m swizzle=8");
  EXPECT_EQ(pp.text(),
            "wgmma nn f32 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong | raster=along_m swizzle=8");
  EXPECT_EQ(parse_spec(pp.text()), pp);
  EXPECT_NE(pp.compile_text(), parse_spec("wgmma nn f32 tile=128x128x64 stages=6").compile_text());
  EXPECT_EQ(parse_spec("wgmma nn f32 mainloop=cooperative").text(), parse_spec("wgmma nn f32").text());
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=128x256x64 mainloop=pingpong"), InputError);  // 256 accumulators
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=128x128x64 mainloop=pingpong | splits=2"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=128x128x64 mainloop=pingpong | splits=auto"), InputError);
  EXPECT_THROW(parse_spec("wgmma nn f32 tile=64x256x64 stages=5 mainloop=pingpong"), InputError);  // 233 KB
  EXPECT_THROW(parse_spec("wgmma nn f32 mainloop=warpspecialized"), InputError);
  const auto pp_src = generate_source(pp);
  EXPECT_NE(pp_src.find("  static constexpr bool kPingpong = true;\n"), std::string::npos) << pp_src;
  bool known = false;
  for (const auto& f : known_families()) known |= f == "wgmma";
  EXPECT_TRUE(known);
}

TEST(WgmmaSpec, EnumerationIsValidAndDistinct) {
  for (auto layout : {Layout::NN, Layout::TN}) {
    const auto compile = enumerate_specs("wgmma", layout, Accum::F32, false);
    const auto all = enumerate_specs("wgmma", layout, Accum::F32, true);
    size_t ping = 0;
    for (const auto& s : compile) ping += s.mainloop == Mainloop::Pingpong;
    // Cooperative: raster 3 x swizzle 4, then splits auto, 2, 4, 8, 16; ping-pong: no splits.
    EXPECT_EQ(all.size(), (compile.size() - ping) * 17 + ping * 12);
    // Ping-pong tiles 128x{64,128}, 64x{64..256}, x 3 clusters x stages 3..6 where they fit
    // (64x256: 3..4): 22 x 3.
    EXPECT_EQ(ping, 66u);
    std::set<std::string> texts;
    for (const auto& s : all) {
      EXPECT_EQ(invalid_reason(s), "") << s.text();
      EXPECT_EQ(parse_spec(s.text()), s);
      texts.insert(s.text());
    }
    EXPECT_EQ(texts.size(), all.size());
    std::set<int> splits;
    for (const auto& s : all) splits.insert(s.splits);
    EXPECT_EQ(splits, (std::set<int>{0, 1, 2, 4, 8, 16}));
    // 8 tiles x 3 clusters x stages 3..6 where they fit (128x256, 128x192: 3..4; 64x256: 3..5): 27.
    EXPECT_EQ(compile.size() - ping, 3u * 27);
  }
  const auto src = generate_source(parse_spec("wgmma tn f16 tile=64x128x64 stages=6"));
  EXPECT_NE(src.find("#include \"wgmma_gemm.cuh\""), std::string::npos);
  // Layout, accumulator, tile M x N, cluster, stages and mainloop as named constants of the
  // configuration type; no configuration macros.
  EXPECT_NE(src.find("namespace {\nstruct cudal2_config {\n"
                     "  static constexpr bool kLayoutTN = true;\n"
                     "  static constexpr bool kAccumF16 = true;\n"
                     "  static constexpr int kTileM = 64;\n"
                     "  static constexpr int kTileN = 128;\n"
                     "  static constexpr int kClusterM = 1;\n"
                     "  static constexpr int kClusterN = 1;\n"
                     "  static constexpr int kStages = 6;\n"
                     "  static constexpr bool kPingpong = false;\n"
                     "};\n}  // namespace\n"
                     "using cudal2_kernel = cudal2_wgmma::Gemm<cudal2_config>;\n"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, \"wgmma tn f16 tile=64x128x64 cluster=1x1 stages=6\")"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("#define"), std::string::npos) << src;
}

}  // namespace
}  // namespace cudal2
