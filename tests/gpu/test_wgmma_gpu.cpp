// Family wgmma (src/kernels/wgmma_gemm.cuh), compiled by the JIT on this machine: every variant
// (both layouts, fp32 and fp16 accumulation, tiles 64/128 x 64..256, clusters 1x1 / 2x1 / 1x2,
// the cooperative and the ping-pong mainloop, split-K,
// the TMA-store epilogue and the register-store one for rows TMA cannot store) passes the full
// verification on odd shapes: M and N in {1, 7, 65, 1000, 4097} where TMA can address the rows
// (K % 8 == 0, and N % 8 == 0 for nn), partial tiles on every edge, K below one k-tile, a cluster
// partner past the edge. A timing table beside cuBLASLt auto-tuning follows (nothing asserted).
#include <gtest/gtest.h>

#include "baselines/baselines.hpp"
#include "jit_methods.hpp"
#include "judge/bench.hpp"

namespace cudal2 {
namespace {

using testing::expect_all_ok;
std::vector<MethodFactory> compile_wgmma(const std::vector<std::string>& texts) {
  return testing::compile_specs(texts, "wgmma");
}

// K a multiple of 8 (TMA rows); N any for tn.
const std::vector<Shape> kTnShapes{{1, 1, 8},        {7, 7, 64},         {65, 4097, 1000}, {4097, 65, 8},
                                   {1000, 1, 4104},  {1, 1000, 64},      {4097, 7, 72},    {7, 4097, 1000},
                                   {65, 65, 65 * 8}, {1000, 1000, 1000}, {256, 256, 256}};
// K and N multiples of 8 for nn.
const std::vector<Shape> kNnShapes{{1, 8, 8},        {7, 1000, 64},      {65, 4104, 1000},
                                   {4097, 8, 72},    {1000, 1000, 4104}, {1, 64, 1000},
                                   {4097, 4104, 64}, {65, 72, 520},      {256, 256, 256}};

BenchReport run_odd(const std::vector<std::string>& specs, const std::vector<Shape>& shapes, Accum accum) {
  BenchOptions o;
  o.accum = accum;
  o.methods = compile_wgmma(specs);
  o.shapes = shapes;
  o.reps = 3;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  return r;
}

TEST(WgmmaGpu, OddShapesVerifyTn) {
  expect_all_ok(run_odd({"wgmma tn f32 tile=128x256x64 cluster=1x1 stages=4",
                         "wgmma tn f32 tile=128x192x64 cluster=2x1 stages=4 | raster=along_n swizzle=8",
                         "wgmma tn f32 tile=128x128x64 cluster=1x2 stages=6 | raster=along_m swizzle=2",
                         "wgmma tn f32 tile=64x64x64 cluster=1x1 stages=8",
                         "wgmma tn f32 tile=64x128x64 cluster=2x1 stages=5 | swizzle=4"},
                        kTnShapes, Accum::F32));
}

TEST(WgmmaGpu, OddShapesVerifyNn) {
  expect_all_ok(
      run_odd({"wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=along_n swizzle=8",
               "wgmma nn f32 tile=128x256x64 cluster=2x1 stages=4",
               "wgmma nn f32 tile=128x192x64 cluster=1x2 stages=3 | raster=along_m swizzle=4",
               "wgmma nn f32 tile=64x256x64 cluster=1x1 stages=5", "wgmma nn f32 tile=64x64x64 cluster=1x2 stages=6"},
              kNnShapes, Accum::F32));
}

TEST(WgmmaGpu, OddShapesVerifyFp16Accumulate) {
  expect_all_ok(
      run_odd({"wgmma tn f16 tile=128x256x64 cluster=2x1 stages=4", "wgmma tn f16 tile=64x128x64 cluster=1x1 stages=6"},
              kTnShapes, Accum::F16));
  expect_all_ok(run_odd({"wgmma nn f16 tile=128x128x64 cluster=1x1 stages=6"}, kNnShapes, Accum::F16));
}

// Ping-pong (two consumer warpgroups taking whole tiles in turn): every tile size it takes, both
// layouts, both accumulators, clusters; the shapes with several tiles per CTA exercise the turn
// barriers and the stage ring stepped over by the idle warpgroup (the stress shapes of the
// TMA-store epilogue too).
TEST(WgmmaGpu, OddShapesVerifyPingpong) {
  const std::vector<Shape> stress{{8192, 4104, 64}, {4097, 4104, 16}, {2048, 2048, 1000}};
  auto tn = kTnShapes, nn = kNnShapes;
  tn.insert(tn.end(), stress.begin(), stress.end());
  nn.insert(nn.end(), stress.begin(), stress.end());
  expect_all_ok(
      run_odd({"wgmma tn f32 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong | raster=along_n swizzle=8",
               "wgmma tn f32 tile=64x256x64 cluster=2x1 stages=4 mainloop=pingpong",
               "wgmma tn f32 tile=64x128x64 cluster=1x1 stages=8 mainloop=pingpong | swizzle=2",
               "wgmma tn f32 tile=128x128x64 cluster=1x2 stages=5 mainloop=pingpong | raster=along_m"},
              tn, Accum::F32));
  expect_all_ok(run_odd({"wgmma nn f32 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong",
                         "wgmma nn f32 tile=128x64x64 cluster=2x1 stages=8 mainloop=pingpong | swizzle=8",
                         "wgmma nn f32 tile=64x64x64 cluster=1x1 stages=3 mainloop=pingpong"},
                        nn, Accum::F32));
  expect_all_ok(run_odd({"wgmma tn f16 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong"}, tn, Accum::F16));
}

// Split-K (every split of a tile waits for the others, then reduces its own slice): explicit
// counts from 2 to 16 and auto, with odd edges and K ranges of unequal length, on shapes with
// few tiles (explicit counts are refused where tiles x splits exceed one wave); each shape runs
// twice on one workspace, so the arrival counters must have re-armed themselves.
TEST(WgmmaGpu, OddShapesVerifySplitK) {
  const std::vector<Shape> tn{{65, 65, 4104}, {1, 1000, 8200}, {257, 100, 16384}, {1000, 7, 4096}, {130, 70, 1032}};
  const std::vector<Shape> nn{{65, 72, 4104}, {1, 1000, 8200}, {257, 136, 16384}, {130, 64, 520}};
  expect_all_ok(run_odd({"wgmma tn f32 tile=128x128x64 cluster=1x1 stages=6 | splits=16",
                         "wgmma tn f32 tile=64x128x64 cluster=1x1 stages=8 | splits=2",
                         "wgmma tn f32 tile=128x128x64 cluster=2x1 stages=6 | splits=auto"},
                        tn, Accum::F32));
  expect_all_ok(
      run_odd({"wgmma tn f16 tile=64x64x64 cluster=1x2 stages=8 | splits=8"}, {tn[0], tn[1], tn[2]}, Accum::F16));
  expect_all_ok(run_odd({"wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | splits=auto",
                         "wgmma nn f32 tile=64x128x64 cluster=1x1 stages=8 | splits=4"},
                        nn, Accum::F32));
}

// The 32-wide tile for skinny N: row-major B in one 64-byte-swizzled box (the N-major wgmma
// descriptor's other swizzle), C stored from registers, up to 15 stages; both layouts and
// accumulators, a 1x2 cluster sharing A, ping-pong and split-K (ranges of one K tile too), on the
// odd shapes and on N = 40 / 64 (two tiles, the second partial), where a wrong swizzle or
// descriptor gives wrong columns.
TEST(WgmmaGpu, OddShapesVerifyNarrowTile) {
  auto nn = kNnShapes, tn = kTnShapes;
  const std::vector<Shape> skinny{{4096, 64, 4096}, {1000, 40, 520}, {4097, 64, 1000}};
  nn.insert(nn.end(), skinny.begin(), skinny.end());
  tn.insert(tn.end(), skinny.begin(), skinny.end());
  expect_all_ok(run_odd({"wgmma nn f32 tile=64x32x64 cluster=1x1 stages=8",
                         "wgmma nn f32 tile=64x32x64 cluster=1x2 stages=8 | raster=along_n swizzle=2",
                         "wgmma nn f32 tile=128x32x64 cluster=1x1 stages=8 | splits=auto",
                         "wgmma nn f32 tile=64x32x64 cluster=1x1 stages=6 mainloop=pingpong",
                         "wgmma nn f32 tile=64x32x64 cluster=1x2 stages=15 | splits=auto"},
                        nn, Accum::F32));
  // 264 = 5 K tiles in 4 splits: ranges of one tile.
  const std::vector<Shape> split{{65, 72, 4104}, {130, 40, 1032}, {1000, 64, 8200}, {64, 32, 264}};
  expect_all_ok(run_odd({"wgmma nn f32 tile=64x32x64 cluster=1x1 stages=12 | splits=4"}, split, Accum::F32));
  expect_all_ok(run_odd({"wgmma tn f16 tile=64x32x64 cluster=1x1 stages=12 | splits=3"}, split, Accum::F16));
  expect_all_ok(run_odd({"wgmma tn f32 tile=64x32x64 cluster=1x2 stages=8",
                         "wgmma tn f32 tile=128x32x64 cluster=2x1 stages=8 | splits=auto"},
                        tn, Accum::F32));
  expect_all_ok(run_odd({"wgmma nn f16 tile=64x32x64 cluster=1x2 stages=8"}, nn, Accum::F16));
}

// Large aligned shapes beside cuBLASLt auto-tuning (graph timer); only correctness is asserted.
TEST(WgmmaGpu, LargeShapesBesideCublasLt) {
  BenchOptions o;
  o.methods = compile_wgmma({
      "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=along_n swizzle=8",
      "wgmma tn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=along_m swizzle=8",
      "wgmma nn f32 tile=128x256x64 cluster=2x1 stages=4 | raster=along_n swizzle=8",
      "wgmma nn f32 tile=128x128x64 cluster=1x1 stages=6 | raster=along_n swizzle=8",
      "wgmma nn f32 tile=64x64x64 cluster=1x1 stages=8",
      "wgmma tn f32 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong | raster=along_n swizzle=8",
  });
  for (const std::string n : {"cublaslt-autotune-nn", "cublaslt-autotune-tn"})
    o.methods.push_back({n, true, [n] { return make_baseline(n, Accum::F32); }});
  o.shapes = {{2048, 2048, 2048}, {4096, 4096, 1024}, {4096, 4096, 4096}, {4096, 128, 4096}};
  o.reps = 10;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  expect_all_ok(r);
}

}  // namespace
}  // namespace cudal2
