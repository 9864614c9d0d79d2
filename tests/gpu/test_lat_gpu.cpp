// Families lat (src/kernels/lat_gemm.cuh) and lat_staged (lat_staged_gemm.cuh: the same
// cluster split-K over a shared-memory mainloop), compiled by the JIT on this machine: every candidate
// passes the full verification on odd shapes (partial tiles on every edge, K below one k-block,
// unaligned rows, K split over kwarps, clusters of 1..16 CTAs and groups of clusters), both
// layouts and accumulators;
// and programmatic dependent launch never races: in a chain where call i+1 reads call i's output
// (C of one call is A of the next), every step matches an fp64 reference of its actual inputs,
// launched eagerly and replayed from a CUDA graph, many times.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codegen/codegen.hpp"
#include "jit/compiler.hpp"
#include "jit_methods.hpp"
#include "judge/bench.hpp"
#include "kernels/cudal2_kernel_abi.h"
#include "runner/artifact.hpp"
#include "test_paths.hpp"

namespace cudal2 {
namespace {

using testing::expect_all_ok;

BenchReport run_odd(const std::vector<std::string>& specs, const std::vector<Shape>& shapes, Accum accum) {
  return testing::bench_specs(specs, shapes, accum, "lat");
}

const std::vector<Shape> kOddShapes{{1, 1, 1},        {7, 7, 7},         {7, 65, 1000},   {4097, 7, 65},
                                    {65, 4097, 7},    {1, 4097, 1000},   {1000, 1, 4097}, {65, 65, 65},
                                    {64, 64, 16384},  {100, 36, 250},    {200, 136, 520}, {64, 64, 64},
                                    {256, 256, 4096}, {512, 512, 16384}, {33, 1000, 8200}};

TEST(LatGpu, OddShapesVerifyFp32) {
  expect_all_ok(run_odd({"lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=1",
                         "lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=8",
                         "lat nn f32 tile=32x32x64 warps=1x1 kwarps=2 | splits=16",
                         "lat nn f32 tile=64x64x32 warps=2x2 kwarps=2 | splits=3",
                         "lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=5",
                         "lat nn f32 tile=16x32x32 warps=1x1 kwarps=1 | splits=2",
                         "lat tn f32 tile=16x16x64 warps=1x1 kwarps=4 stages=4 | splits=3",
                         "lat nn f32 tile=16x16x32 warps=1x1 kwarps=2 stages=8 | splits=1"},
                        kOddShapes, Accum::F32));
}

TEST(LatGpu, OddShapesVerifyFp16Accumulate) {
  expect_all_ok(run_odd({"lat tn f16 tile=32x32x64 warps=1x1 kwarps=4 | splits=8",
                         "lat nn f16 tile=64x32x32 warps=2x1 kwarps=2 | splits=4",
                         "lat nn f16 tile=16x16x64 warps=1x1 kwarps=8 | splits=16",
                         "lat tn f16 tile=32x32x32 warps=1x1 kwarps=4 stages=4 | splits=2"},
                        {{1, 1, 1}, {7, 65, 1000}, {4097, 7, 65}, {65, 4097, 7}, {64, 64, 16384}, {200, 136, 520}},
                        Accum::F16));
}

// Chained batches on shapes whose operands are not whole 16-byte multiples (m * k, k * n or m * n
// not a multiple of 8): the chain check's per-call inputs and references must stay aligned for
// cuBLAS and the checksum (on an H200 honest kernels were charged with misaligned addresses and
// wrong results there before they were). The stream kernel is the runtime's.
TEST(LatGpu, OddShapesVerifyInChainedBatches) {
  TimerSet timers{};
  timers[static_cast<int>(TimerKind::Graph)] = timers[static_cast<int>(TimerKind::Chain)] = true;
  expect_all_ok(
      testing::bench_specs({"lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=8",
                            "stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0 | splits=1",
                            "stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0 | splits=4"},
                           {{3, 5003, 4099}, {7, 1001, 12289}, {7, 7, 7}, {1, 4097, 1000}}, Accum::F32, "odd", timers));
}

// Groups of clusters (splits 24..128): few tiles, long K, ragged edges and K not a multiple of
// the tile's K; the arrival counters must be back at zero after every call, so every shape runs
// the same artifact and workspace many times (the bench's warm-up, verification and timed calls).
TEST(LatGpu, GroupedSplitsVerify) {
  const std::vector<Shape> shapes{{64, 64, 16384},   {33, 1000, 8200}, {77, 45, 9000},
                                  {128, 128, 12288}, {1, 257, 8192},   {130, 7, 8193}};
  expect_all_ok(run_odd({"lat tn f32 tile=32x32x64 warps=1x1 kwarps=8 | splits=32",
                         "lat nn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=64",
                         "lat tn f32 tile=64x64x32 warps=2x2 kwarps=2 | splits=128",
                         "lat nn f32 tile=16x16x64 warps=1x1 kwarps=4 stages=4 | splits=24"},
                        shapes, Accum::F32));
  expect_all_ok(run_odd({"lat tn f16 tile=32x32x64 warps=1x1 kwarps=8 | splits=64",
                         "lat nn f16 tile=64x32x32 warps=2x1 kwarps=2 | splits=32"},
                        shapes, Accum::F16));
}

// lat_staged: unaligned rows (the checked path), K below one k-block and shorter than the split
// count (fewer CTAs than asked), clusters of 1..16 including odd sizes, every tile size class.
TEST(LatStagedGpu, OddShapesVerify) {
  expect_all_ok(run_odd({"lat_staged tn f32 tile=32x32x64 warps=2x2 kwarps=1 stages=8 | splits=16",
                         "lat_staged tn f32 tile=32x32x64 warps=1x1 kwarps=4 stages=8 | splits=16",
                         "lat_staged nn f32 tile=32x32x64 warps=2x2 kwarps=4 stages=8 | splits=1",
                         "lat_staged nn f32 tile=64x64x64 warps=2x2 kwarps=2 stages=4 | splits=5",
                         "lat_staged tn f32 tile=128x128x64 warps=4x2 kwarps=2 stages=4 | splits=8",
                         "lat_staged nn f32 tile=64x128x32 warps=2x4 kwarps=1 stages=8 | splits=3",
                         "lat_staged tn f32 tile=16x64x64 warps=1x4 kwarps=4 stages=16 | splits=12",
                         "lat_staged nn f32 tile=32x32x128 warps=1x1 kwarps=8 stages=6 | splits=16",
                         "lat_staged tn f32 tile=32x64x64 warps=1x2 kwarps=4 stages=12 | splits=7"},
                        kOddShapes, Accum::F32));
  expect_all_ok(run_odd({"lat_staged tn f16 tile=32x32x64 warps=1x1 kwarps=4 stages=8 | splits=16",
                         "lat_staged nn f16 tile=128x64x64 warps=4x2 kwarps=1 stages=4 | splits=2"},
                        {{1, 1, 1}, {7, 65, 1000}, {4097, 7, 65}, {65, 4097, 7}, {64, 64, 16384}, {200, 136, 520}},
                        Accum::F16));
}

// ---- PDL chains: C of call i is A of call i+1 ----

#define CHAIN_CUDA(x) ASSERT_EQ((x), cudaSuccess) << #x

struct Chain {
  int64_t m, kn;  // A_i: m x kn, B: kn x kn, C_i = A_{i+1}: m x kn
  Layout layout;
};

// Runs `links` calls of art on one stream (eagerly, or captured once and replayed), A_0 random,
// every later A the previous call's C, all outputs poisoned with NaN first so that a read before
// the write shows; then checks every link against an fp64 product of the values it actually read.
void run_chain(const Artifact& art, const KernelSpec& spec, const Chain& ch, int links, bool graph, int seed) {
  const int64_t m = ch.m, kn = ch.kn;
  const size_t a_elems = static_cast<size_t>(m * kn), b_elems = static_cast<size_t>(kn * kn);
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<__half> hA(a_elems), hB(b_elems);
  for (auto& x : hA) x = __float2half(nd(rng));
  // B ~ N(0, 1/kn): every link keeps the scale of its input, so a long chain stays in fp16 range.
  const float sb = 1.f / std::sqrt(static_cast<float>(kn));
  for (auto& x : hB) x = __float2half(nd(rng) * sb);

  __half *dA = nullptr, *dB = nullptr;
  CHAIN_CUDA(cudaMalloc(&dA, a_elems * sizeof(__half) * (links + 1)));
  CHAIN_CUDA(cudaMalloc(&dB, b_elems * sizeof(__half)));
  CHAIN_CUDA(cudaMemset(dA, 0xFF, a_elems * sizeof(__half) * (links + 1)));  // NaN everywhere
  CHAIN_CUDA(cudaMemcpy(dA, hA.data(), a_elems * sizeof(__half), cudaMemcpyHostToDevice));
  CHAIN_CUDA(cudaMemcpy(dB, hB.data(), b_elems * sizeof(__half), cudaMemcpyHostToDevice));
  cudaStream_t s = nullptr;
  CHAIN_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Grouped splits keep arrival counters in the workspace: zeroed once, as the ABI says, and left
  // at zero by every call.
  cudal2_gemm_args probe{};
  probe.m = m, probe.n = kn, probe.k = kn, probe.splits = spec.splits;
  const size_t ws_bytes = art.workspace_size(probe);
  void* ws = nullptr;
  if (ws_bytes > 0) {
    CHAIN_CUDA(cudaMalloc(&ws, ws_bytes));
    CHAIN_CUDA(cudaMemset(ws, 0, ws_bytes));
  }

  // Every repeat poisons the outputs again first: a link that reads early reads NaN, not the
  // identical value an earlier repeat left.
  auto enqueue = [&] {
    if (cudaMemsetAsync(dA + a_elems, 0xFF, a_elems * sizeof(__half) * links, s) != cudaSuccess) return;
    for (int i = 0; i < links; ++i) {
      cudal2_gemm_args a{};
      a.m = m, a.n = kn, a.k = kn;
      a.A = dA + a_elems * i, a.B = dB, a.C = dA + a_elems * (i + 1);
      a.raster = 0, a.swizzle = 1, a.decomposition = 0, a.splits = spec.splits;
      a.workspace = ws, a.workspace_bytes = ws_bytes;
      art.run(a, s);
    }
  };
  if (graph) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    CHAIN_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CHAIN_CUDA(cudaStreamEndCapture(s, &g));
    CHAIN_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 5; ++r) CHAIN_CUDA(cudaGraphLaunch(ge, s));
    CHAIN_CUDA(cudaGraphExecDestroy(ge));
    CHAIN_CUDA(cudaGraphDestroy(g));
  } else {
    for (int r = 0; r < 3; ++r) enqueue();
  }
  CHAIN_CUDA(cudaStreamSynchronize(s));
  std::vector<__half> all(a_elems * (links + 1));
  CHAIN_CUDA(cudaMemcpy(all.data(), dA, all.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  CHAIN_CUDA(cudaStreamDestroy(s));
  CHAIN_CUDA(cudaFree(dA));
  CHAIN_CUDA(cudaFree(dB));
  if (ws) {
    CHAIN_CUDA(cudaFree(ws));
  }

  auto b_at = [&](int64_t k, int64_t n) {
    return static_cast<double>(__half2float(ch.layout == Layout::TN ? hB[static_cast<size_t>(n * kn + k)]
                                                                    : hB[static_cast<size_t>(k * kn + n)]));
  };
  // Every link checked, the links in parallel: the host's fp64 products are the test's time.
  std::vector<int64_t> bads(static_cast<size_t>(links));
  std::vector<double> worsts(static_cast<size_t>(links));
  auto check_link = [&](int i) {
    const __half* in = all.data() + a_elems * i;
    const __half* out = all.data() + a_elems * (i + 1);
    int64_t& bad = bads[static_cast<size_t>(i)];
    double& worst = worsts[static_cast<size_t>(i)];
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < kn; ++c) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < kn; ++k) {
          const double x = __half2float(in[r * kn + k]) * b_at(k, c);
          ref += x;
          mag += std::fabs(x);
        }
        const double got = __half2float(out[r * kn + c]);
        const double err = std::fabs(got - ref);
        // fp16 output rounding plus fp32 (or fp16) accumulation of kn terms of this size.
        const double tol = std::fabs(ref) * 2e-3 + mag * (spec.accum == Accum::F16 ? 4e-3 : 1e-4) + 1e-3;
        if (!(err <= tol)) ++bad, worst = std::isnan(err) ? INFINITY : std::max(worst, err / tol);
      }
  };
  {
    const int workers = std::max(1, std::min(links, static_cast<int>(std::thread::hardware_concurrency())));
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w)
      pool.emplace_back([&, w] {
        for (int i = w; i < links; i += workers) check_link(i);
      });
    for (auto& t : pool) t.join();
  }
  int bad_links = 0;
  for (int i = 0; i < links; ++i) {
    const int64_t bad = bads[static_cast<size_t>(i)];
    const double worst = worsts[static_cast<size_t>(i)];
    if (bad) {
      ++bad_links;
      ADD_FAILURE() << spec.text() << " " << m << "x" << kn << "x" << kn << (graph ? " graph" : " eager") << ": link "
                    << i << " has " << bad << " wrong elements (worst error " << worst << " x tolerance)";
    }
  }
  std::printf("  %-55s %5ldx%5ldx%5ld %-5s %d links: %d wrong\n", spec.text().c_str(), static_cast<long>(m),
              static_cast<long>(kn), static_cast<long>(kn), graph ? "graph" : "eager", links, bad_links);
}

// Compiles the specs and runs chains of `links` calls of each on every (m, kn) size, eagerly and
// from a CUDA graph.
void run_chains(const std::vector<std::string>& texts, const std::vector<std::pair<int64_t, int64_t>>& sizes,
                int links) {
  std::vector<KernelSpec> specs;
  std::vector<std::string> sources;
  for (const auto& t : texts) {
    specs.push_back(parse_spec(t));
    sources.push_back(generate_source(specs.back()));
  }
  const auto built = Compiler().compile_all(sources);
  for (size_t i = 0; i < specs.size(); ++i) {
    ASSERT_TRUE(built[i].ok()) << texts[i] << "\n" << built[i].log;
    const Artifact art(built[i].artifact);
    for (const auto& [m, kn] : sizes)
      for (bool graph : {false, true})
        run_chain(art, specs[i], {m, kn, specs[i].layout}, links, graph, static_cast<int>(i * 7 + m));
  }
}

// The chains' length and largest size: the host's fp64 check of every link dominates the time
// (40 links of 64x1024x1024 took most of 241 s on an H200 host, 12 links of 40x1024x1024 54 s). A
// race shows on any link whose predecessor is still being written, so 6 links (5 hand-offs, each
// checked after the last repeat) on rows for a full 16-row tile and a ragged one keep what is
// asserted, with the links checked in parallel; CUDAL2_GPU_LONG=1 (ctest label long) runs the long
// chains.
using cudal2::test::long_run;
int chain_links() { return long_run() ? 40 : 6; }
std::vector<std::pair<int64_t, int64_t>> chain_sizes() {
  if (long_run()) return {{77, 136}, {5, 1000}, {64, 1024}, {33, 72}};
  return {{77, 136}, {5, 1000}, {24, 1024}, {33, 72}};
}

TEST(LatGpu, PdlChainsNeverRace) {
  // Odd sizes: ragged tiles, unaligned rows (the checked path) and aligned ones.
  run_chains({"lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=1",
              "lat tn f32 tile=32x32x64 warps=1x1 kwarps=2 | splits=8",
              "lat nn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=16",
              "lat nn f16 tile=64x32x32 warps=2x1 kwarps=2 | splits=3",
              "lat tn f32 tile=16x16x64 warps=1x1 kwarps=2 stages=4 | splits=2"},
             chain_sizes(), chain_links());
}

TEST(LatStagedGpu, PdlChainsNeverRace) {
  run_chains({"lat_staged tn f32 tile=32x32x64 warps=1x1 kwarps=4 stages=8 | splits=16",
              "lat_staged nn f32 tile=64x64x32 warps=2x2 kwarps=2 stages=8 | splits=4",
              "lat_staged tn f16 tile=128x64x64 warps=4x2 kwarps=1 stages=4 | splits=1"},
             chain_sizes(), chain_links());
}

// The same with groups of clusters: K long enough for 32 and 64 splits, and the arrival counters
// reused by every link (a counter left non-zero by one call leaves the next call's tile unwritten).
TEST(LatGpu, PdlChainsNeverRaceGroupedSplits) {
  run_chains({"lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=32",
              "lat nn f32 tile=16x16x32 warps=1x1 kwarps=2 | splits=64"},
             long_run() ? std::vector<std::pair<int64_t, int64_t>>{{5, 2048}, {17, 2056}}
                        : std::vector<std::pair<int64_t, int64_t>>{{5, 2048}, {9, 2056}},
             long_run() ? 12 : 8);
}

}  // namespace
}  // namespace cudal2
