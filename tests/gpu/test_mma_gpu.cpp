// Our own kernel families (mma, tiny), compiled by the JIT on this machine: every one passes the
// full verification (exact 0/1 check, normal-input error, guard bands, unwritten outputs) on odd
// shapes (any M, N, K >= 1, both layouts, fp32 and fp16 accumulation, split-K in one launch),
// and a timing table against cuBLASLt auto-tuning on aligned small and skinny shapes.
#include <gtest/gtest.h>

#include <cstdio>

#include "baselines/baselines.hpp"
#include "jit_methods.hpp"
#include "judge/bench.hpp"

namespace cudal2 {
namespace {

using testing::expect_all_ok;
// One method per spec, named <family><i>; prints the legend.
std::vector<MethodFactory> compile_methods(const std::vector<std::string>& texts) {
  return testing::compile_specs(texts, "");
}

// Every M, N, K in {1, 7, 65, 1000, 4097}-like mixes: partial tiles on every edge, K below one
// k-step, unaligned rows (the checked path), deep K through split-K.
const std::vector<Shape> kOddShapes{{1, 1, 1},       {7, 7, 7},          {7, 65, 1000},    {4097, 7, 65},
                                    {65, 4097, 7},   {1000, 1000, 4097}, {1, 4097, 1000},  {1000, 1, 4097},
                                    {65, 65, 65},    {64, 64, 16384},    {4096, 64, 4096}, {100, 36, 250},
                                    {200, 136, 520}, {64, 64, 64},       {256, 256, 256}};

TEST(MmaGpu, OddShapesVerifyFp32) {
  BenchOptions o;
  o.methods = compile_methods({
      "mma nn f32 tile=64x64x32 warps=2x2 stages=3",
      "mma tn f32 tile=32x64x64 warps=1x2 stages=4",
      "mma nn f32 tile=64x64x64 warps=2x2 stages=3 | splits=4",
      "mma tn f32 tile=32x32x32 warps=1x1 stages=4 | splits=16",
      "mma nn f32 tile=128x128x32 warps=2x4 stages=4 | splits=2",
      "mma tn f32 tile=16x256x64 warps=1x4 stages=2 | splits=64",
      "tiny nn f32 tile=32x32x64 warps=2x2 kwarps=2",
      "tiny tn f32 tile=16x32x32 warps=1x2 kwarps=4",
      "tiny nn f32 tile=16x16x128 warps=1x1 kwarps=1",
      "mma nn f32 tile=64x64x64 warps=2x2 stages=8 | splits=8",
      "mma tn f32 tile=16x16x64 warps=1x1 stages=6 | splits=32",
  });
  o.shapes = kOddShapes;
  o.reps = 3;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  expect_all_ok(r);
}

TEST(MmaGpu, OddShapesVerifyFp16Accumulate) {
  BenchOptions o;
  o.accum = Accum::F16;
  o.methods = compile_methods({
      "mma nn f16 tile=64x64x32 warps=2x2 stages=3",
      "mma tn f16 tile=64x32x64 warps=2x1 stages=3 | splits=4",
      "tiny nn f16 tile=32x16x32 warps=2x1 kwarps=2",
      "tiny tn f16 tile=16x16x64 warps=1x1 kwarps=8",
  });
  o.shapes = {{1, 1, 1},       {7, 65, 1000},   {4097, 7, 65},  {65, 4097, 7},
              {64, 64, 16384}, {256, 256, 256}, {200, 136, 520}};
  o.reps = 3;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  expect_all_ok(r);
}

// Timing on aligned small and skinny shapes beside cuBLASLt auto-tuning (graph timer): a look at
// where these families stand before any tuning; only correctness is asserted.
TEST(MmaGpu, AlignedShapesBesideCublasLt) {
  BenchOptions o;
  // tiny for the small shapes; mma with pipeline depths 3..8, split counts 4..32 and tile shapes
  // from 16x16 to 128x64 for the skinny and deep-K ones.
  o.methods = compile_methods({
      "tiny tn f32 tile=16x16x64 warps=1x1 kwarps=4",
      "tiny tn f32 tile=32x32x64 warps=2x2 kwarps=2",
      "tiny tn f32 tile=16x16x32 warps=1x1 kwarps=8",
      "tiny nn f32 tile=16x16x32 warps=1x1 kwarps=8",
      "mma tn f32 tile=64x64x64 warps=2x2 stages=3 | splits=4",
      "mma tn f32 tile=64x64x64 warps=2x2 stages=5 | splits=4",
      "mma tn f32 tile=64x64x64 warps=2x2 stages=8 | splits=4",
      "mma nn f32 tile=64x64x64 warps=2x2 stages=6 | splits=4",
      "mma tn f32 tile=32x64x64 warps=1x2 stages=8 | splits=8",
      "mma tn f32 tile=64x32x64 warps=2x1 stages=6 | splits=8",
      "mma tn f32 tile=64x128x64 warps=2x4 stages=5 | splits=4",
      "mma tn f32 tile=128x64x64 warps=4x2 stages=5 | splits=4",
      "mma tn f32 tile=32x128x64 warps=1x4 stages=5 | splits=4",
      "mma tn f32 tile=16x16x64 warps=1x1 stages=6 | splits=32",
      "mma tn f32 tile=32x32x64 warps=1x1 stages=6 | splits=16",
      "mma tn f32 tile=16x64x64 warps=1x1 stages=8 | splits=16",
      "mma tn f32 tile=32x32x32 warps=1x1 stages=8 | splits=32",
      "mma tn f32 tile=64x64x32 warps=2x2 stages=4",
  });
  for (const std::string n : {"cublaslt-autotune-nn", "cublaslt-autotune-tn"})
    o.methods.push_back({n, true, [n] { return make_baseline(n, Accum::F32); }});
  o.shapes = {{64, 64, 64},    {128, 128, 128},  {256, 256, 256},  {512, 512, 512},
              {64, 64, 16384}, {256, 256, 8192}, {64, 4096, 4096}, {4096, 64, 4096}};
  o.reps = 10;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  // Per shape: the fastest of ours against the best baseline (graph timer).
  std::printf("\n%-18s %-10s %10s %10s %7s\n", "shape", "best-ours", "ours-us", "cublasLt", "ratio");
  for (const auto& sr : r.shapes) {
    const MethodResult* best = nullptr;
    for (const auto& mr : sr.methods)
      if (!mr.baseline && mr.timing.count(Mode::Offline) && mr.timing.at(Mode::Offline)[0] &&
          (!best || mr.timing.at(Mode::Offline)[0]->median < best->timing.at(Mode::Offline)[0]->median))
        best = &mr;
    const auto base = sr.best_baseline(Mode::Offline, TimerKind::Graph);
    if (best && base) {
      const double us = best->timing.at(Mode::Offline)[0]->median;
      std::printf("%-18s %-10s %10.2f %10.2f %7.3f\n", sr.shape.str().c_str(), best->method.c_str(), us, *base,
                  *base / us);
    }
  }
  expect_all_ok(r);
}

}  // namespace
}  // namespace cudal2
