// libcudal2_runtime on the GPU (docs/runtime.md): cudal2_gemm against a cuBLAS reference on the table's
// shapes and off-table shapes (M = 1, 7, 100, odd N and K), NN and TN, fp32 and fp16
// accumulation; CUDA-graph capture and replay; calls from many threads at once; error statuses;
// `cublaslt` configuration entries (data, not compiled code); and two measurements printed as
// tables: host time per call (cudal2_gemm vs cublasLtMatmul) and the off-table rule (the
// neighbour kernel vs cuBLASLt, graph-replay time per call).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <cudal2/gemm.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "baselines/baselines.hpp"
#include "test_paths.hpp"

namespace {

#define CK(x) ASSERT_EQ((x), cudaSuccess) << #x

struct Problem {
  cudal2_layout_t layout;
  cudal2_accum_t accum;
  int64_t m, n, k;
};

const char* path_name(cudal2_path_t p) {
  switch (p) {
    case CUDAL2_PATH_TABLE_KERNEL:
      return "table";
    case CUDAL2_PATH_NEIGHBOUR_KERNEL:
      return "neighbour";
    case CUDAL2_PATH_BUCKET_KERNEL:
      return "bucket";
    case CUDAL2_PATH_CUBLASLT:
      return "cublaslt";
    case CUDAL2_PATH_STREAM_KERNEL:
      return "stream";
  }
  return "unknown";
}

// Device operands with random fp16 values in [-1, 1], the output and the reference output.
struct Buffers {
  Problem p;
  __half *A = nullptr, *B = nullptr, *C = nullptr, *R = nullptr;
  explicit Buffers(const Problem& pr, uint32_t seed = 1) : p(pr) {
    std::mt19937 rng(seed + uint32_t(pr.m * 31 + pr.n * 17 + pr.k));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto fill = [&](__half*& d, size_t count) {
      std::vector<__half> h(count);
      for (auto& x : h) x = __float2half(u(rng));
      cudaMalloc(&d, count * sizeof(__half));
      cudaMemcpy(d, h.data(), count * sizeof(__half), cudaMemcpyHostToDevice);
    };
    fill(A, size_t(p.m * p.k));
    fill(B, size_t(p.k * p.n));
    cudaMalloc(&C, size_t(p.m * p.n) * sizeof(__half));
    cudaMalloc(&R, size_t(p.m * p.n) * sizeof(__half));
    cudaMemset(C, 0xff, size_t(p.m * p.n) * sizeof(__half));  // NaN until written
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() { cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R); }
  void clear_c(cudaStream_t s = nullptr) { cudaMemsetAsync(C, 0xff, size_t(p.m * p.n) * sizeof(__half), s); }
};

// Reference with cuBLAS: row-major C = A*B is column-major C^T = B^T A^T.
void reference(cublasHandle_t h, Buffers& b) {
  const auto& p = b.p;
  const float one = 1, zero = 0;
  const __half hone = __float2half(1.f), hzero = __float2half(0.f);
  const bool f32 = p.accum == CUDAL2_ACCUM_F32;
  const cublasOperation_t opB = p.layout == CUDAL2_LAYOUT_NN ? CUBLAS_OP_N : CUBLAS_OP_T;
  const int ldb = p.layout == CUDAL2_LAYOUT_NN ? int(p.n) : int(p.k);
  const auto st =
      cublasGemmEx(h, opB, CUBLAS_OP_N, int(p.n), int(p.m), int(p.k), f32 ? (const void*)&one : &hone, b.B, CUDA_R_16F,
                   ldb, b.A, CUDA_R_16F, int(p.k), f32 ? (const void*)&zero : &hzero, b.R, CUDA_R_16F, int(p.n),
                   f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
  ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Every element within tolerance of the reference (fp16 output; fp16 accumulation looser).
::testing::AssertionResult matches(Buffers& b) {
  const size_t count = size_t(b.p.m * b.p.n);
  std::vector<__half> c(count), r(count);
  cudaMemcpy(c.data(), b.C, count * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(r.data(), b.R, count * 2, cudaMemcpyDeviceToHost);
  const bool f32 = b.p.accum == CUDAL2_ACCUM_F32;
  const double rel = f32 ? 4e-3 : 2e-2, abs_ = (f32 ? 2e-3 : 3e-2) * std::sqrt(double(b.p.k));
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    const double x = __half2float(c[i]), y = __half2float(r[i]);
    const double err = std::fabs(x - y);
    if (!(err <= rel * std::fabs(y) + abs_)) ++bad;
    if (std::isfinite(err))
      worst = std::max(worst, err);
    else
      worst = INFINITY;
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " of " << count << " elements off (worst abs err " << worst << ")";
  return ::testing::AssertionSuccess();
}

class RuntimeGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cublasCreate(&cublas_);
    // The neighbour rule is off by default (measured harmful off the grid); these tests keep it on
    // to exercise it.
    handle_ = new cudal2::Handle(cudal2_options{0, 2.0, 1, 0});
  }
  static void TearDownTestSuite() {
    delete handle_;
    cublasDestroy(cublas_);
  }
  static cublasHandle_t cublas_;
  static cudal2::Handle* handle_;
};
cublasHandle_t RuntimeGpu::cublas_ = nullptr;
cudal2::Handle* RuntimeGpu::handle_ = nullptr;

// The sample grid's shapes that fit comfortably, both layouts: what the seed table covers.
std::vector<Problem> table_problems() {
  const int64_t shapes[][3] = {{64, 64, 64},       {128, 128, 128},    {256, 256, 256},    {512, 512, 512},
                               {1024, 1024, 1024}, {64, 64, 16384},    {256, 256, 8192},   {64, 4096, 4096},
                               {4096, 64, 4096},   {128, 16384, 1024}, {2048, 2048, 2048}, {16384, 4096, 512}};
  std::vector<Problem> out;
  for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (const auto& s : shapes) out.push_back({layout, CUDAL2_ACCUM_F32, s[0], s[1], s[2]});
  return out;
}

std::vector<Problem> off_table_problems() {
  const int64_t shapes[][3] = {{1, 64, 64},    {7, 128, 128}, {100, 256, 256}, {1, 4096, 4096}, {7, 1000, 513},
                               {100, 77, 129}, {64, 63, 65},  {97, 128, 100},  {100, 72, 200},  {33, 4097, 1031}};
  std::vector<Problem> out;
  for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (const auto& s : shapes) out.push_back({layout, CUDAL2_ACCUM_F32, s[0], s[1], s[2]});
  out.push_back({CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F16, 128, 128, 128});
  out.push_back({CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F16, 100, 77, 129});
  return out;
}

void check_problems(cudal2::Handle& h, cublasHandle_t cublas, const std::vector<Problem>& ps, int* table_hits) {
  for (const auto& p : ps) {
    Buffers b(p);
    reference(cublas, b);
    const auto info = cudal2::query(h, p.layout, p.accum, p.m, p.n, p.k);
    if (info.path == CUDAL2_PATH_TABLE_KERNEL && table_hits) ++*table_hits;
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(matches(b)) << (p.layout ? "tn " : "nn ") << p.m << "x" << p.n << "x" << p.k << " via "
                            << path_name(info.path) << " " << info.spec;
    std::printf("  %s %s %6lldx%6lldx%6lld  %-9s %s\n", p.layout ? "tn" : "nn", p.accum ? "f16" : "f32", (long long)p.m,
                (long long)p.n, (long long)p.k, path_name(info.path), info.spec);
  }
}

TEST_F(RuntimeGpu, TableShapesMatchCublas) {
  const auto t = cudal2_get_table_info();
  std::printf("table %s (%s): %d kernels, %d entries\n", t.source, t.gpu, t.kernels, t.entries);
  int hits = 0;
  check_problems(*handle_, cublas_, table_problems(), &hits);
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major == 9 && t.kernels > 0) {
    EXPECT_GT(hits, 0) << "no table shape ran a table kernel";
  }
}

TEST_F(RuntimeGpu, OffTableShapesMatchCublas) { check_problems(*handle_, cublas_, off_table_problems(), nullptr); }

// A handle made with CUDAL2_STREAM set to `value` (read when the handle is made; unset: on).
std::unique_ptr<cudal2::Handle> stream_handle(const char* value) {
  setenv("CUDAL2_STREAM", value, 1);
  auto h = std::make_unique<cudal2::Handle>(cudal2_options{0, 0.0, 1, 0});
  unsetenv("CUDAL2_STREAM");
  return h;
}

// Two calls of p on fresh buffers (the first finds the weights cold, the second recently read: the
// runtime's rules may take another path), each against cuBLAS; C is NaN before each call, so a call
// that writes nothing fails.
void expect_cold_and_warm_match(cudal2::Handle& h, cublasHandle_t cublas, const Problem& p, const std::string& name) {
  Buffers b(p);
  reference(cublas, b);
  for (const char* when : {"cold", "warm"}) {
    CK(cudaMemset(b.C, 0xff, size_t(p.m * p.n) * 2));
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(matches(b)) << when << " " << name;
  }
}

// Each shape (M, N, K) in `layout` with fp32 accumulation runs a stream_sweep kernel whose text starts
// with `prefix` on an sm_90 GPU (and none with fp16 accumulation), and matches cuBLAS cold and warm.
template <size_t kShapes>
void expect_sweep_shapes_match(cudal2::Handle& h, cublasHandle_t cublas, cudal2_layout_t layout,
                               const int64_t (&shapes)[kShapes][3], const std::string& prefix) {
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  for (const auto& s : shapes) {
    const Problem p{layout, CUDAL2_ACCUM_F32, s[0], s[1], s[2]};
    const std::string name = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
    if (major == 9) {
      const auto info = cudal2::query(h, p.layout, p.accum, p.m, p.n, p.k);
      EXPECT_EQ(info.path, CUDAL2_PATH_STREAM_KERNEL) << name;
      EXPECT_EQ(std::string(info.spec).rfind(prefix, 0), 0u) << name << ": " << info.spec;
      const auto f16 = cudal2::query(h, p.layout, CUDAL2_ACCUM_F16, p.m, p.n, p.k);
      EXPECT_NE(std::string(f16.spec).rfind("stream_sweep ", 0), 0u) << name << " f16: " << f16.spec;
    }
    expect_cold_and_warm_match(h, cublas, p, name);
  }
}

// Bandwidth-bound shapes (src/runtime/stream_rule.hpp: TN, up to 8 tokens, weights beyond the
// L2, one wave) take the stream kernels on an sm_90 device, by default, both accumulators.
// (NN: StreamSweepNNMatchesCublas; the family's other configurations are checked by the judge:
// bench/stream/.)
TEST_F(RuntimeGpu, StreamShapesMatchCublas) {
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  // Every shape below is in the class on a 132-SM H100 or H200: B of at least the L2 (50 or 60
  // MB), one wave of 64-row tiles; K and N aligned or not (the checked element-wise path), split
  // and unsplit.
  // The last one: 4 tiles split 64 ways (the largest split).
  // The last two: wider than one wave of 32-row tiles, run by the 64-row kernel.
  const int64_t shapes[][3] = {{1, 14336, 4096}, {8, 4096, 14336}, {5, 12289, 3000}, {3, 16385, 4103}, {1, 2048, 32768},
                               {7, 16000, 2500}, {1, 256, 131072}, {1, 20480, 7168}, {5, 20001, 3000}};
  auto stream = stream_handle("1");
  auto off = stream_handle("0");
  for (auto accum : {CUDAL2_ACCUM_F32, CUDAL2_ACCUM_F16})
    for (const auto& s : shapes) {
      const Problem p{CUDAL2_LAYOUT_TN, accum, s[0], s[1], s[2]};
      const auto info = cudal2::query(*stream, p.layout, p.accum, p.m, p.n, p.k);
      if (major == 9) {
        EXPECT_EQ(info.path, CUDAL2_PATH_STREAM_KERNEL) << p.m << "x" << p.n << "x" << p.k;
        // On by default: the suite's handle (CUDAL2_STREAM unset) takes the same path.
        EXPECT_EQ(cudal2::query(*handle_, p.layout, p.accum, p.m, p.n, p.k).path, CUDAL2_PATH_STREAM_KERNEL);
      }
      EXPECT_NE(cudal2::query(*off, p.layout, p.accum, p.m, p.n, p.k).path, CUDAL2_PATH_STREAM_KERNEL)
          << "CUDAL2_STREAM=0 keeps cuBLASLt (or the table)";
      check_problems(*stream, cublas_, {p}, nullptr);
    }
}

// The sweep band (src/runtime/stream_rule.hpp: 1-8 tokens, fp32 accumulation, K % 8 == 0, weights
// from 1 MiB up to the L2, warm ones at 5-8 tokens up to 40% of it, 20 MiB on an H100) runs the stream_sweep kernel on
// an sm_90 GPU, and its answers match cuBLAS: N not a multiple of the 16-row tile, K with a partial last 32-wide step,
// clusters of 1 to 8 CTAs (few row tiles split K over more CTAs), cold and warm. fp16 accumulation is not the band's.
// (Its cold reach, up to the L2, runs in StreamColdBandMatchesCublasColdAndWarm.)
TEST_F(RuntimeGpu, StreamSweepBandMatchesCublas) {
  const int64_t shapes[][3] = {{1, 3072, 3072}, {8, 512, 1024},  {3, 2053, 4104}, {7, 1001, 8200},
                               {2, 5000, 1000}, {5, 1024, 8200}, {1, 528, 1008},  {6, 3000, 3000}};
  expect_sweep_shapes_match(*stream_handle("1"), cublas_, CUDAL2_LAYOUT_TN, shapes, "stream_sweep ");
}

// NN (B row-major) at 1-8 tokens, fp32 (src/runtime/stream_rule.hpp, nn_band): weights of 1-8 MiB (K >= N) and beyond
// the L2 run the NN stream_sweep kernels on an sm_90 GPU, and their answers match cuBLAS cold and warm: N not a
// multiple of the 32- or 64-column tile, K with a partial last 32-wide step, clusters of 1 to 8 CTAs. fp16 accumulation
// and the weights between the bands are not theirs.
TEST_F(RuntimeGpu, StreamSweepNNMatchesCublas) {
  const int64_t shapes[][3] = {{1, 1024, 4096},  {8, 512, 1024},   {5, 1000, 4096},  {3, 1000, 2056}, {7, 504, 8200},
                               {1, 14336, 4096}, {8, 4096, 14336}, {3, 14344, 4104}, {6, 18944, 3584}};
  auto h = stream_handle("1");
  expect_sweep_shapes_match(*h, cublas_, CUDAL2_LAYOUT_NN, shapes, "stream_sweep nn ");
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major == 9) {
    EXPECT_NE(std::string(cudal2::query(*h, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 1, 4096, 4096).spec).rfind("stream", 0),
              0u)
        << "32 MiB: between the bands";
    EXPECT_NE(std::string(cudal2::query(*h, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 1, 3072, 768).spec).rfind("stream", 0),
              0u)
        << "K < N: cuBLASLt";
  }
}

// The sweep band's second kernel (4 warps a CTA, six an SM: src/runtime/stream_rule.hpp) takes row
// tiles that the first deals unevenly over a 132-SM GPU's SMs (160, 288 and 320 tiles); its answers
// match cuBLAS, cold and warm, a partial last K step included.
TEST_F(RuntimeGpu, StreamSweepSecondKernelMatchesCublas) {
  int major = 0, sms = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int64_t shapes[][3] = {{4, 4608, 3584}, {2, 2560, 6144}, {3, 5120, 4104}};  // warm too: 1-4 tokens
  auto h = stream_handle("1");
  for (const auto& s : shapes) {
    const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, s[0], s[1], s[2]};
    const std::string name = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
    if (major == 9 && sms == 132) {
      const auto info = cudal2::query(*h, p.layout, p.accum, p.m, p.n, p.k);
      EXPECT_EQ(info.path, CUDAL2_PATH_STREAM_KERNEL) << name;
      EXPECT_NE(std::string(info.spec).find("stream_sweep tn f32 tile=8x16x32 kwarps=4 "), std::string::npos)
          << name << ": " << info.spec;
    }
    expect_cold_and_warm_match(*h, cublas_, p, name);
  }
}

// The sweep band above 8 tokens (src/runtime/stream_rule.hpp): 9-16 tokens on up to 16 MiB of
// weights take the 16-token tile, odd output rows from 16 MiB the 16-, 32- or 64-token one; a
// partial last K step, partial row tiles, odd N; cold and warm against cuBLAS.
TEST_F(RuntimeGpu, StreamSweepWideTilesMatchCublas) {
  int major = 0, sms = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const struct {
    int64_t m, n, k;
    const char* tile;
  } shapes[] = {
      {16, 2048, 4096, "tile=16x32x32"}, {9, 1000, 4104, "tile=16x32x32"},  {13, 2051, 2056, "tile=16x32x32"},
      {24, 4101, 4104, "tile=32x32x32"}, {32, 4103, 4096, "tile=32x32x32"}, {17, 5001, 4096, "tile=32x32x32"},
      {12, 2051, 4104, "tile=16x32x32"}, {33, 2051, 4104, "tile=64x32x32"}, {64, 6007, 4104, "tile=64x32x32"}};
  auto h = stream_handle("1");
  for (const auto& s : shapes) {
    const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, s.m, s.n, s.k};
    const std::string name = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
    if (major == 9 && sms == 132) {
      const auto info = cudal2::query(*h, p.layout, p.accum, p.m, p.n, p.k);
      EXPECT_EQ(info.path, CUDAL2_PATH_STREAM_KERNEL) << name;
      EXPECT_NE(std::string(info.spec).find(std::string("stream_sweep tn f32 ") + s.tile), std::string::npos)
          << name << ": " << info.spec;
    }
    expect_cold_and_warm_match(*h, cublas_, p, name);
  }
}

// Output rows off 16 bytes (TN, N % 8 != 0, K % 8 == 0) off the stream rule: cuBLASLt writes the
// first N rounded down to 8 columns of a padded C into the workspace's tail, the runtime the last
// ones, and the call copies its rows into C (runtime/padded_rows.hpp), in chunks of rows when the
// workspace cannot hold them all. Odd N from decode to compute-bound sizes, both accumulators, cold
// and warm; cudal2_query's workspace holds the padded C (or a chunk of it); a caller's workspace
// of 4 MiB chunks the rows, one of 512 KiB (not 64 rows) takes cuBLASLt's unaligned kernels, and
// the answers are the same.
TEST_F(RuntimeGpu, PaddedRowsMatchCublas) {
  // The columns past the last whole 8: 5, 1, 1, 1, 1, 1, 7, 5. The last: 4096 x 4104 halves are
  // more than the handle's own 32 MiB (three chunks of 1984 rows, the last overlapping).
  const int64_t shapes[][3] = {{512, 4101, 4096}, {129, 1001, 520}, {2048, 4097, 1024}, {80, 50257, 1024},
                               {3, 9, 16},        {1, 12289, 4096}, {64, 4103, 1000},   {4096, 4101, 1024}};
  auto h = stream_handle("0");  // every shape on this path, whatever the stream rule would take
  for (auto accum : {CUDAL2_ACCUM_F32, CUDAL2_ACCUM_F16})
    for (const auto& s : shapes) {
      const Problem p{CUDAL2_LAYOUT_TN, accum, s[0], s[1], s[2]};
      const std::string name = std::string(accum ? "f16 " : "f32 ") + std::to_string(p.m) + "x" + std::to_string(p.n) +
                               "x" + std::to_string(p.k);
      const auto info = cudal2::query(*h, p.layout, p.accum, p.m, p.n, p.k);
      EXPECT_EQ(info.path, CUDAL2_PATH_CUBLASLT) << name;
      EXPECT_GE(info.workspace_bytes, size_t(std::min<int64_t>(p.m, 1984) * ((p.n + 7) / 8 * 8)) * 2)
          << name << ": the padded C";
      expect_cold_and_warm_match(*h, cublas_, p, name);
    }
  const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 2048, 4097, 1024};
  Buffers b(p);
  reference(cublas_, b);
  for (const size_t ws_bytes : {size_t(4) << 20, size_t(512) << 10}) {
    void* ws = nullptr;
    ASSERT_EQ(cudaMalloc(&ws, ws_bytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(ws, 0, ws_bytes), cudaSuccess);
    CK(cudaMemset(b.C, 0xff, size_t(p.m * p.n) * 2));
    EXPECT_EQ(cudal2::try_gemm(*h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr, ws, ws_bytes),
              CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(matches(b)) << "2048x4097x1024 in a workspace of " << ws_bytes << " bytes";
    cudaFree(ws);
  }
}

// The cold band (src/runtime/stream_rule.hpp: weights that fit the L2, from 8 MiB): the first
// call of fresh weights streams them (stream kernel), the same call again finds them recently read
// and takes the table's or cuBLASLt's path; both answers match cuBLAS. Aligned and not, a partial
// last K stage, a partial last row tile, 1-16 tokens, both accumulators. NN's cold band (24 MiB up to
// the L2, 1-8 tokens, fp32: the 64-column NN kernel) likewise, a partial last K step and column tile
// included.
TEST_F(RuntimeGpu, StreamColdBandMatchesCublasColdAndWarm) {
  const int64_t shapes[][3] = {{1, 4096, 4096}, {8, 1024, 4096},  {5, 2048, 4104}, {3, 3000, 3000},
                               {7, 4100, 2050}, {12, 3072, 3072}, {16, 2000, 4096}};
  auto h = stream_handle("1");  // a handle of its own: no weights read before
  for (auto accum : {CUDAL2_ACCUM_F32, CUDAL2_ACCUM_F16})
    for (const auto& s : shapes) {
      const Problem p{CUDAL2_LAYOUT_TN, accum, s[0], s[1], s[2]};
      expect_cold_and_warm_match(*h, cublas_, p,
                                 std::string(accum ? "f16 " : "f32 ") + std::to_string(p.m) + "x" +
                                     std::to_string(p.n) + "x" + std::to_string(p.k));
    }
  const int64_t nn[][3] = {{1, 4096, 4096}, {8, 3584, 3584}, {5, 4104, 4104}};
  for (const auto& s : nn) {
    const Problem p{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, s[0], s[1], s[2]};
    expect_cold_and_warm_match(*h, cublas_, p,
                               "nn " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k));
  }
}

// A chain of stream calls (PDL: each may start while the one before it finishes), C of link i
// the A of link i+1 (N == K): every link checked against cuBLAS on the input that link read, so a
// link that read its A before the previous link's C was complete is caught. Eager and graph.
TEST_F(RuntimeGpu, StreamPdlChainsNeverRace) {
  // Making each link's 128 MB of B on the host took most of the test's 80 s on an H200 machine at
  // 24 links; a race shows on any hand-off, so 8 links (7 hand-offs) keep what is asserted, and
  // CUDAL2_GPU_LONG=1 (ctest label long) runs the 24.
  const int kLinks = cudal2::test::long_run() ? 24 : 8;
  for (auto layout : {CUDAL2_LAYOUT_TN})
    for (bool graph : {false, true}) {
      const Problem p{layout, CUDAL2_ACCUM_F32, 8, 8192, 8192};  // 128 MB of B: in the class
      std::vector<std::unique_ptr<Buffers>> links;
      for (int i = 0; i < kLinks; ++i) links.push_back(std::make_unique<Buffers>(p, uint32_t(100 + i)));
      // B scaled by 1/64 keeps values bounded along the chain: |C| ~ sqrt(K)/3/64 per unit input.
      // Up to 24 links of 128 MB each: 3 GB of device memory.
      for (auto& l : links) {
        std::vector<__half> h(size_t(p.k * p.n));
        CK(cudaMemcpy(h.data(), l->B, h.size() * 2, cudaMemcpyDeviceToHost));
        for (auto& x : h) x = __float2half(__half2float(x) / 64.f);
        CK(cudaMemcpy(l->B, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
      }
      cudaStream_t st;
      CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      auto stream = stream_handle("1");
      auto run_chain = [&] {
        for (int i = 0; i < kLinks; ++i)
          ASSERT_EQ(cudal2::try_gemm(*stream, p.layout, p.accum, p.m, p.n, p.k, i ? links[i - 1]->C : links[0]->A,
                                     links[i]->B, links[i]->C, reinterpret_cast<cudal2_stream_t>(st)),
                    CUDAL2_STATUS_SUCCESS)
              << cudal2_last_error();
      };
      if (graph) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        run_chain();
        CK(cudaStreamEndCapture(st, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        for (int r = 0; r < 3; ++r) CK(cudaGraphLaunch(ge, st));
        CK(cudaStreamSynchronize(st));
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
      } else {
        for (int r = 0; r < 3; ++r) run_chain();
        CK(cudaStreamSynchronize(st));
      }
      cudaStreamDestroy(st);
      int wrong = 0;
      for (int i = 0; i < kLinks; ++i) {
        if (i) CK(cudaMemcpy(links[i]->A, links[i - 1]->C, size_t(p.m * p.k) * 2, cudaMemcpyDeviceToDevice));
        reference(cublas_, *links[i]);
        wrong += !matches(*links[i]);
      }
      EXPECT_EQ(wrong, 0) << (layout ? "tn" : "nn") << (graph ? " graph" : " eager") << ": links wrong of " << kLinks;
      std::printf("  stream chain %s %s: %d of %d links wrong\n", layout ? "tn" : "nn", graph ? "graph" : "eager",
                  wrong, kLinks);
    }
}

TEST_F(RuntimeGpu, CallerWorkspaceAndDefaultHandle) {
  const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 100, 72, 200};
  Buffers b(p);
  reference(cublas_, b);
  void* ws = nullptr;
  const size_t bytes = CUDAL2_DEFAULT_WORKSPACE_BYTES;
  CK(cudaMalloc(&ws, bytes));
  CK(cudaMemset(ws, 0, bytes));
  ASSERT_EQ(cudal2::try_gemm(*handle_, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr, ws, bytes),
            CUDAL2_STATUS_SUCCESS);
  CK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(b));
  b.clear_c();
  cudal2::gemm(p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C);  // the process-wide default handle
  CK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(b));
  cudaFree(ws);
}

// Split-K kernels of ours (mma, wgmma) count arrivals per tile in the workspace and must find
// those counters at zero. Only the first CUDAL2_WORKSPACE_ZERO_BYTES are promised zero: the rest
// holds whatever the last cuBLASLt call left. Here the rest is poisoned (0xff) and every split-K
// table entry among the probed shapes must still be right, twice in a row (counters re-armed).
// Regression: on the H100 table, wgmma 128x128 splits=auto on 512x2048x12288 NN wrote nothing
// once cuBLASLt entries had used the handle's workspace (counters were outside the zero area).
// The seed table has no such entry (skip); run with the H100 table's build:
//   LD_LIBRARY_PATH=<dir of that libcudal2_runtime.so.0> cudal2_gpu_tests --gtest_filter='*SplitK*'
TEST_F(RuntimeGpu, SplitKEntriesIgnoreWhatTheSharedWorkspaceHolds) {
  const int64_t shapes[][3] = {{512, 2048, 12288}, {256, 8192, 2048},  {1024, 2048, 1024}, {2048, 1024, 4096},
                               {8192, 256, 12288}, {16384, 128, 2048}, {64, 8192, 8192},   {512, 16384, 64}};
  const size_t bytes = CUDAL2_DEFAULT_WORKSPACE_BYTES + (size_t(64) << 20);
  void* ws = nullptr;
  CK(cudaMalloc(&ws, bytes));
  int probed = 0;
  for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (const auto& sh : shapes) {
      const Problem p{layout, CUDAL2_ACCUM_F32, sh[0], sh[1], sh[2]};
      const auto info = cudal2::query(*handle_, p.layout, p.accum, p.m, p.n, p.k);
      const std::string spec = info.spec ? info.spec : "";
      const bool ours = spec.rfind("mma ", 0) == 0 || spec.rfind("wgmma ", 0) == 0;
      if (info.path != CUDAL2_PATH_TABLE_KERNEL || !ours || spec.find("splits=") == std::string::npos ||
          spec.find("splits=1") != std::string::npos)
        continue;
      ++probed;
      Buffers b(p);
      reference(cublas_, b);
      for (int rep = 0; rep < 2; ++rep) {
        CK(cudaMemset(ws, 0, CUDAL2_WORKSPACE_ZERO_BYTES));
        if (rep == 0)
          CK(cudaMemset(static_cast<char*>(ws) + CUDAL2_WORKSPACE_ZERO_BYTES, 0xff,
                        bytes - CUDAL2_WORKSPACE_ZERO_BYTES));
        b.clear_c();
        ASSERT_EQ(cudal2::try_gemm(*handle_, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr, ws, bytes),
                  CUDAL2_STATUS_SUCCESS)
            << cudal2_last_error();
        CK(cudaDeviceSynchronize());
        EXPECT_TRUE(matches(b)) << spec << " on " << p.m << "x" << p.n << "x" << p.k << ", call " << rep + 1;
      }
      std::printf("  split-K entry %lldx%lldx%lld %s: %s\n", (long long)p.m, (long long)p.n, (long long)p.k,
                  layout == CUDAL2_LAYOUT_NN ? "nn" : "tn", spec.c_str());
    }
  cudaFree(ws);
  if (probed == 0)
    GTEST_SKIP() << "the table " << cudal2_get_table_info().source
                 << " has no split-K entry of ours among the probed shapes (build it with tables/h100-f32.json)";
}

// The table a device uses is the one measured on a device of its name (or none), and an off-table
// M of a tuned (N, K) takes a tuned M's decision (bucket rule, CUDAL2_M_BUCKETS): correct results
// on the bucket path, and with the rule off the same shapes go to cuBLASLt.
TEST_F(RuntimeGpu, DeviceTableAndMBuckets) {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const auto t = cudal2_get_table_info();
  std::printf("device %s: table '%s' (%s) of %d carried\n", prop.name, t.source, t.gpu, cudal2_get_table_count());
  for (int i = 0; i < cudal2_get_table_count(); ++i) {
    const auto ti = cudal2_get_table_info_at(i);
    EXPECT_GT(ti.entries, 0) << ti.source;
    if (std::string(ti.gpu) == prop.name) EXPECT_STREQ(t.source, ti.source);
  }
  // Grid (N, K) of the H100 table (its entries at every grid M), M between grid M.
  std::vector<Problem> ps;
  for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (int64_t m : {48, 100, 384, 3000}) ps.push_back({layout, CUDAL2_ACCUM_F32, m, 4096, 4096});
  ps.push_back({CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 200, 1024, 4096});
  // The rule is off by default (measured slower than cuBLASLt's heuristic on the H100); "up" here.
  setenv("CUDAL2_M_BUCKETS", "up", 1);
  cudal2::Handle up;
  unsetenv("CUDAL2_M_BUCKETS");
  int buckets = 0;
  for (const auto& p : ps)
    buckets += cudal2::query(up, p.layout, p.accum, p.m, p.n, p.k).path == CUDAL2_PATH_BUCKET_KERNEL;
  if (buckets == 0) GTEST_SKIP() << "the table '" << t.source << "' has no grid (N, K) entries here";
  check_problems(up, cublas_, ps, nullptr);
  cudal2::Handle off;  // the default
  for (const auto& p : ps)
    EXPECT_NE(cudal2::query(off, p.layout, p.accum, p.m, p.n, p.k).path, CUDAL2_PATH_BUCKET_KERNEL) << p.m;
  setenv("CUDAL2_M_BUCKETS", "sideways", 1);
  cudal2_handle_t bad = nullptr;
  EXPECT_EQ(cudal2_create(&bad, nullptr), CUDAL2_STATUS_INVALID_VALUE);
  unsetenv("CUDAL2_M_BUCKETS");
  EXPECT_NE(std::string(cudal2_last_error()).find("CUDAL2_M_BUCKETS"), std::string::npos);
  // A table by name that this device is not: none, every call on cuBLASLt.
  setenv("CUDAL2_TABLE", "none", 1);
  cudal2::Handle none;
  unsetenv("CUDAL2_TABLE");
  EXPECT_EQ(cudal2::query(none, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64).path, CUDAL2_PATH_CUBLASLT);
}

TEST_F(RuntimeGpu, ErrorsAreStatusesWithAMessage) {
  Buffers b({CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64});
  EXPECT_EQ(cudal2::try_gemm(*handle_, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 0, 64, 64, b.A, b.B, b.C),
            CUDAL2_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(cudal2_last_error()).find("sizes"), std::string::npos);
  EXPECT_EQ(cudal2::try_gemm(*handle_, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64, b.A + 1, b.B, b.C),
            CUDAL2_STATUS_MISALIGNED);
  EXPECT_EQ(cudal2::try_gemm(*handle_, (cudal2_layout_t)7, CUDAL2_ACCUM_F32, 64, 64, 64, b.A, b.B, b.C),
            CUDAL2_STATUS_INVALID_VALUE);
  EXPECT_THROW(cudal2::gemm(*handle_, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, -1, 64, b.A, b.B, b.C), cudal2::Error);
  EXPECT_STREQ(cudal2_status_string(CUDAL2_STATUS_MISALIGNED), "misaligned pointer");
}

// One graph holding a table-kernel call, an off-table call whose first use happens during capture
// (descriptors created while capturing), and a cuBLASLt f16 call; replayed twice.
TEST_F(RuntimeGpu, CapturesIntoACudaGraph) {
  std::vector<Problem> ps = {{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64},
                             {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 96, 96, 96},
                             {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 7, 1000, 513},
                             {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F16, 200, 136, 72}};
  std::vector<std::unique_ptr<Buffers>> bs;
  for (const auto& p : ps) {
    bs.push_back(std::make_unique<Buffers>(p, 7));
    reference(cublas_, *bs.back());
  }
  cudal2::Handle h;  // fresh: no cached plans yet
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (auto& b : bs)
    ASSERT_EQ(cudal2::try_gemm(h, b->p.layout, b->p.accum, b->p.m, b->p.n, b->p.k, b->A, b->B, b->C, s),
              CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 2; ++rep) {
    for (auto& b : bs) b->clear_c(s);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    for (auto& b : bs) EXPECT_TRUE(matches(*b)) << "replay " << rep << " " << b->p.m << "x" << b->p.n << "x" << b->p.k;
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

// CUDAL2_TUNE_BACKGROUND (the default): the first call of an off-table shape returns without
// waiting for any tuning (its host time is the heuristic's, the tuning runs on the handle's
// thread), results are right before, during (calls and a graph captured while the tuner works)
// and after the swap, and the tuning finishes.
TEST_F(RuntimeGpu, BackgroundTuningNeverBlocksTheCaller) {
  const std::vector<Problem> ps = {{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 101, 4608, 3584},
                                   {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 333, 3584, 1000},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F16, 7, 1000, 520}};
  cudal2::Handle off(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_OFF});
  cudal2::Handle bg(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BACKGROUND});
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  using Clock = std::chrono::steady_clock;
  for (const auto& p : ps) {
    Buffers b(p, 17);
    reference(cublas_, b);
    auto host_us = [&](const cudal2::Handle& h) {
      const auto t0 = Clock::now();
      EXPECT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s), CUDAL2_STATUS_SUCCESS)
          << cudal2_last_error();
      return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    };
    const double first_off = host_us(off);  // the heuristic's first call: descriptors and heuristic
    const double first_bg = host_us(bg);
    CK(cudaStreamSynchronize(s));
    EXPECT_TRUE(matches(b)) << "first call " << p.m << "x" << p.n << "x" << p.k;
    std::printf("  %lldx%lldx%lld first call host: heuristic %.0f us, background tuning %.0f us\n", (long long)p.m,
                (long long)p.n, (long long)p.k, first_off, first_bg);
    EXPECT_LT(first_bg, first_off + 2000.0) << "the first call waited for tuning";
    // While the tuner works: eager calls and a captured graph, each checked.
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    ASSERT_EQ(cudal2::try_gemm(bg, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 3; ++r) {
      b.clear_c(s);
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      EXPECT_TRUE(matches(b)) << "graph captured during tuning " << p.m << "x" << p.n << "x" << p.k;
      b.clear_c(s);
      host_us(bg);
      CK(cudaStreamSynchronize(s));
      EXPECT_TRUE(matches(b)) << "call during tuning " << p.m << "x" << p.n << "x" << p.k;
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    const auto t0 = Clock::now();
    bg.tune_wait();
    std::printf("  tuned %.1f ms after the last call\n",
                std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    b.clear_c(s);
    host_us(bg);
    CK(cudaStreamSynchronize(s));
    EXPECT_TRUE(matches(b)) << "after tuning " << p.m << "x" << p.n << "x" << p.k;
    // The handle reports the configuration its calls now run, as a `cublaslt` spec text.
    const cudal2_dispatch_info q = cudal2::query(bg, p.layout, p.accum, p.m, p.n, p.k);
    ASSERT_EQ(q.path, CUDAL2_PATH_CUBLASLT);
    const std::string want = std::string("cublaslt ") + (p.layout == CUDAL2_LAYOUT_TN ? "tn " : "nn ") +
                             (p.accum == CUDAL2_ACCUM_F16 ? "f16" : "f32") + " algo=";
    EXPECT_EQ(std::string(q.spec).rfind(want, 0), 0u) << q.spec;
    EXPECT_NE(std::string(q.spec).find(" | splits="), std::string::npos) << q.spec;
    std::printf("  runs %s\n", q.spec);
  }
  EXPECT_EQ(bg.tune_wait(), static_cast<long>(ps.size())) << "every shape tuned once";
  cudaStreamDestroy(s);
}

// A table shape whose entry is cuBLASLt's heuristic (the table measured it ahead of the
// configurations its job tried) runs the heuristic and is not tuned again, in the background or
// blocking: results are right, the background handle's tuner takes no shape, and the blocking
// handle runs the same configuration as the background one after its calls.
TEST_F(RuntimeGpu, TableShapesOnTheHeuristicAreNotTunedAgain) {
  if (cudal2_get_table_info().entries == 0) GTEST_SKIP() << "no table for this GPU";
  cudal2::Handle bg(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BACKGROUND});
  const int64_t sizes[] = {64, 128, 256, 512, 1024};
  std::vector<Problem> held;
  for (const auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (const int64_t m : sizes)
      for (const int64_t n : sizes)
        for (const int64_t k : sizes)
          if (held.size() < 3 && cudal2::query(bg, layout, CUDAL2_ACCUM_F32, m, n, k).path == CUDAL2_PATH_CUBLASLT)
            held.push_back({layout, CUDAL2_ACCUM_F32, m, n, k});
  if (held.empty()) GTEST_SKIP() << "the table " << cudal2_get_table_info().source << " runs a kernel on every shape";
  cudal2::Handle blocking(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BLOCKING});
  for (const auto& p : held) {
    Buffers b(p, 23);
    reference(cublas_, b);
    for (const cudal2::Handle* h : {&bg, &blocking})
      for (int call = 0; call < 2; ++call) {
        b.clear_c(nullptr);
        ASSERT_EQ(cudal2::try_gemm(*h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr), CUDAL2_STATUS_SUCCESS)
            << cudal2_last_error();
        CK(cudaDeviceSynchronize());
        EXPECT_TRUE(matches(b)) << p.m << "x" << p.n << "x" << p.k << " call " << call;
      }
    const cudal2_dispatch_info q = cudal2::query(blocking, p.layout, p.accum, p.m, p.n, p.k);
    EXPECT_EQ(q.path, CUDAL2_PATH_CUBLASLT);
    EXPECT_STREQ(q.spec, cudal2::query(bg, p.layout, p.accum, p.m, p.n, p.k).spec) << "the blocking handle tuned it";
    std::printf("  %s %lldx%lldx%lld: %s\n", p.layout == CUDAL2_LAYOUT_TN ? "tn" : "nn", (long long)p.m, (long long)p.n,
                (long long)p.k, q.spec);
  }
  EXPECT_EQ(bg.tune_wait(), 0) << "a table shape was tuned in the background";
}

// A program that synchronizes its whole device while the handle tunes in the background gets no
// error: the tuner captures no graph (CUDA refuses cudaDeviceSynchronize, in every thread, while
// any stream of the context captures), and every result before, during and after is right.
TEST_F(RuntimeGpu, DeviceSynchronizeWhileTuningInTheBackground) {
  const std::vector<Problem> ps = {{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 111, 4608, 3584},
                                   {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 300, 2000, 1000},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 1000, 1000, 1000},
                                   {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F16, 77, 3000, 520}};
  cudal2::Handle bg(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BACKGROUND});
  std::vector<std::unique_ptr<Buffers>> bs;
  for (const auto& p : ps) {
    bs.push_back(std::make_unique<Buffers>(p, 31));
    reference(cublas_, *bs.back());
  }
  int syncs = 0;
  // For a second and a half: the tuning of all four shapes takes a few hundred milliseconds.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  for (int round = 0; std::chrono::steady_clock::now() < until; ++round)
    for (size_t i = 0; i < ps.size(); ++i) {
      const Problem& p = ps[i];
      bs[i]->clear_c(nullptr);
      ASSERT_EQ(cudal2::try_gemm(bg, p.layout, p.accum, p.m, p.n, p.k, bs[i]->A, bs[i]->B, bs[i]->C, nullptr),
                CUDAL2_STATUS_SUCCESS)
          << cudal2_last_error();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "round " << round << ", " << p.m << "x" << p.n << "x" << p.k;
      ++syncs;
      EXPECT_TRUE(matches(*bs[i])) << "round " << round << ", " << p.m << "x" << p.n << "x" << p.k;
    }
  EXPECT_EQ(bg.tune_wait(), static_cast<long>(ps.size())) << "every shape tuned once";
  std::printf("  %d device-wide synchronizations beside the tuner, none refused\n", syncs);
}

// A shape of the cold band (weights between the warm share of the L2 and the L2, a few tokens, TN)
// whose warm calls take cuBLASLt: its first call finds the weights cold and runs the stream kernel,
// and that first call queues the tuning of the warm calls' plan, so cudal2_tune_wait after it covers
// the shape (before, the tuning waited for the first warm call and ran beside the caller's next
// calls). The warm call then runs the tuned configuration, which the query names, and matches cuBLAS.
TEST_F(RuntimeGpu, ColdFirstCallQueuesTheWarmPlansTuning) {
  int major = 0, l2 = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  if (major != 9) GTEST_SKIP() << "the cold band is sm_90's";
  // 60% of the L2 in weights (36 MiB on an H200, 30 MiB on an H100): above the warm share (40%),
  // below the L2. N and K are in no table.
  const int64_t k = 2600, n = int64_t(l2) * 6 / 10 / (2 * k) / 8 * 8;
  const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 7, n, k};
  setenv("CUDAL2_STREAM", "1", 1);
  cudal2::Handle h(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BACKGROUND});
  unsetenv("CUDAL2_STREAM");
  ASSERT_EQ(cudal2::query(h, p.layout, p.accum, p.m, p.n, p.k).path, CUDAL2_PATH_CUBLASLT)
      << "7x" << n << "x" << k << ": warm calls are cuBLASLt's";
  Buffers b(p, 17);
  reference(cublas_, b);
  for (const char* when : {"cold", "warm"}) {
    b.clear_c(nullptr);
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    CK(cudaDeviceSynchronize());
    EXPECT_TRUE(matches(b)) << when << " 7x" << n << "x" << k;
    if (std::string(when) == "cold") {
      EXPECT_EQ(h.tune_wait(), 1) << "the cold first call queued the shape's tuning";
      const auto info = cudal2::query(h, p.layout, p.accum, p.m, p.n, p.k);
      EXPECT_EQ(std::string(info.spec).rfind("cublaslt tn f32 ", 0), 0u)
          << "the query names the tuned configuration: " << info.spec;
    }
  }
  EXPECT_EQ(h.tune_wait(), 1) << "tuned once";
}

// CUDAL2_TUNE_PASSES rankings a tuned shape, each a line of CUDAL2_TUNE_LOG naming the shape, the
// candidates that ran and the one kept; a pass count out of 1..3, or a log that cannot be appended
// to, is refused at creation by name.
TEST_F(RuntimeGpu, TuningPassesAndTheirLog) {
  const Problem p{CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 103, 4608, 3584};
  const std::string log = ::testing::TempDir() + "cudal2_tune_log.txt";
  std::remove(log.c_str());
  setenv("CUDAL2_TUNE_LOG", log.c_str(), 1);
  setenv("CUDAL2_TUNE_PASSES", "3", 1);
  {
    cudal2::Handle h(cudal2_options{0, 0.0, 1, CUDAL2_TUNE_BACKGROUND});
    unsetenv("CUDAL2_TUNE_LOG");
    unsetenv("CUDAL2_TUNE_PASSES");
    Buffers b(p, 5);
    reference(cublas_, b);
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    EXPECT_EQ(h.tune_wait(), 1);
    b.clear_c(nullptr);
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, nullptr), CUDAL2_STATUS_SUCCESS);
    CK(cudaDeviceSynchronize());
    EXPECT_TRUE(matches(b)) << "after three rankings";
  }
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << "one line a ranking";
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("103x4608x3584 tn f32 background: pass " + std::to_string(i + 1) + ": ", 0), 0u)
        << lines[i];
    EXPECT_NE(lines[i].find(" ran; round 1: "), std::string::npos) << lines[i];
    EXPECT_NE(lines[i].find(" kept #"), std::string::npos) << lines[i];
  }
  std::remove(log.c_str());
  setenv("CUDAL2_TUNE_PASSES", "4", 1);
  cudal2_handle_t bad = nullptr;
  EXPECT_EQ(cudal2_create(&bad, nullptr), CUDAL2_STATUS_INVALID_VALUE);
  unsetenv("CUDAL2_TUNE_PASSES");
  EXPECT_NE(std::string(cudal2_last_error()).find("CUDAL2_TUNE_PASSES=4"), std::string::npos) << cudal2_last_error();
  setenv("CUDAL2_TUNE_LOG", "/nonexistent-cudal2-dir/tune.log", 1);
  EXPECT_EQ(cudal2_create(&bad, nullptr), CUDAL2_STATUS_INVALID_VALUE);
  unsetenv("CUDAL2_TUNE_LOG");
  EXPECT_NE(std::string(cudal2_last_error()).find("CUDAL2_TUNE_LOG=/nonexistent-cudal2-dir/tune.log"),
            std::string::npos)
      << cudal2_last_error();
}

// tune_unseen: off-table shapes are auto-tuned once, on their first call outside graph capture;
// a shape first seen inside a capture runs the heuristic's pick and stays unseen. Either way the
// results are right, and a later captured call replays the tuned choice.
TEST_F(RuntimeGpu, TuneUnseenShapesOnFirstUncapturedCall) {
  const std::vector<Problem> ps = {{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 100, 4608, 3584},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 333, 3584, 1000},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F16, 7, 1000, 513}};
  cudal2::Handle h(cudal2_options{0, 0.0, 1, 1});
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const auto& p : ps) {
    Buffers b(p, 13);
    reference(cublas_, b);
    // First seen inside a capture: no tuning there (it would synchronize a capturing stream).
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    b.clear_c(s);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    EXPECT_TRUE(matches(b)) << "captured first call " << p.m << "x" << p.n << "x" << p.k;
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    // The first uncaptured call tunes (and computes C with the pick).
    b.clear_c(s);
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s), CUDAL2_STATUS_SUCCESS)
        << cudal2_last_error();
    CK(cudaStreamSynchronize(s));
    EXPECT_TRUE(matches(b)) << "tuning call " << p.m << "x" << p.n << "x" << p.k;
    EXPECT_EQ(cudal2::query(h, p.layout, p.accum, p.m, p.n, p.k).path, CUDAL2_PATH_CUBLASLT);
    // Then a captured call replays the tuned choice.
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    ASSERT_EQ(cudal2::try_gemm(h, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s), CUDAL2_STATUS_SUCCESS);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    b.clear_c(s);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    EXPECT_TRUE(matches(b)) << "captured tuned call " << p.m << "x" << p.n << "x" << p.k;
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
  }
  cudaStreamDestroy(s);
}

// A `cublaslt` table kernel (tables/seed.json: 64x64x256 NN f32, a cuBLASLt algorithm
// configuration carried as data, no compiled code): exact shape -> TABLE_KERNEL with its spec,
// correct results through the handle's workspace, a caller's and in a graph; off-table shapes may
// take it as their neighbour (planned through cublasLtMatmulAlgoCheck) and must then be correct too.
TEST_F(RuntimeGpu, CublasLtConfigurationEntries) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (major != 9 || minor != 0) GTEST_SKIP() << "the table serves sm_90 only";
  std::vector<Problem> exact;
  for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN})
    for (auto accum : {CUDAL2_ACCUM_F32, CUDAL2_ACCUM_F16}) {
      // Every table shape whose table kernel is a cublaslt configuration (from the table's own
      // description of itself: probe the shapes the seed and the H100 tables hold).
      for (int64_t m : {64, 128, 256, 512, 1024, 2048})
        for (int64_t n : {64, 128, 256, 512, 1024, 2048})
          for (int64_t k : {64, 256, 1024, 4096}) {
            const auto info = cudal2::query(*handle_, layout, accum, m, n, k);
            if (info.path == CUDAL2_PATH_TABLE_KERNEL && std::string(info.spec).rfind("cublaslt ", 0) == 0)
              exact.push_back({layout, accum, m, n, k});
          }
    }
  const auto t = cudal2_get_table_info();
  if (std::string(t.source) == "seed.json") {
    const auto info = cudal2::query(*handle_, CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 256);
    EXPECT_EQ(info.path, CUDAL2_PATH_TABLE_KERNEL) << info.spec;
    EXPECT_STREQ(info.spec,
                 "cublaslt nn f32 algo=66 tile=12 stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=2x1 | "
                 "splits=1");
    EXPECT_EQ(info.table_m, 64);
    EXPECT_EQ(info.table_k, 256);
  }
  if (exact.empty()) GTEST_SKIP() << "the table " << t.source << " has no cublaslt entry among the probed shapes";
  std::printf("cublaslt configurations: %zu table shape(s) probed\n", exact.size());
  if (exact.size() > 24) exact.resize(24);
  check_problems(*handle_, cublas_, exact, nullptr);
  // A caller's workspace, exactly as large as cudal2_query says, and a graph replay.
  const Problem p = exact.front();
  const auto info = cudal2::query(*handle_, p.layout, p.accum, p.m, p.n, p.k);
  Buffers b(p, 5);
  reference(cublas_, b);
  const size_t bytes = std::max(info.workspace_bytes, size_t(CUDAL2_WORKSPACE_ZERO_BYTES));
  void* ws = nullptr;
  CK(cudaMalloc(&ws, bytes));
  CK(cudaMemset(ws, 0, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  ASSERT_EQ(cudal2::try_gemm(*handle_, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s, ws, bytes),
            CUDAL2_STATUS_SUCCESS)
      << cudal2_last_error();
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  EXPECT_TRUE(matches(b)) << "graph, caller workspace of " << bytes << " bytes: " << info.spec;
  if (info.workspace_bytes > CUDAL2_WORKSPACE_ZERO_BYTES) {
    EXPECT_EQ(
        cudal2::try_gemm(*handle_, p.layout, p.accum, p.m, p.n, p.k, b.A, b.B, b.C, s, ws, info.workspace_bytes - 256),
        CUDAL2_STATUS_INSUFFICIENT_WORKSPACE);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  cudaFree(ws);
  // Off-table shapes near the cublaslt entries: whatever path they take, the result is right.
  std::vector<Problem> near;
  for (const auto& e : exact)
    if (near.size() < 6) near.push_back({e.layout, e.accum, e.m + 8, e.n - 8 > 0 ? e.n - 8 : e.n + 8, e.k + 64});
  near.push_back({CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 100, 72, 200});
  int via_lt = 0;
  for (const auto& q : near) {
    const auto qi = cudal2::query(*handle_, q.layout, q.accum, q.m, q.n, q.k);
    via_lt += qi.path == CUDAL2_PATH_NEIGHBOUR_KERNEL && std::string(qi.spec).rfind("cublaslt ", 0) == 0;
  }
  std::printf("  %d of %zu nearby off-table shapes take a cublaslt neighbour\n", via_lt, near.size());
  check_problems(*handle_, cublas_, near, nullptr);
}

// `cudal2 bench --methods runtime-nn,runtime-tn` (src/baselines/runtime.cpp): the runner finds
// the library (here: the copy this test links, by its soname), reports where each shape goes, and
// computes the right C with the handle's own workspace.
TEST_F(RuntimeGpu, BenchMethodRunsTheRuntime) {
  const std::vector<Problem> ps = {{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 256},
                                   {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 100, 72, 200},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F16, 128, 128, 128}};
  // The bench method creates its handle with the default options (no neighbour rule).
  cudal2::Handle defaults;
  for (const auto& p : ps) {
    Buffers b(p, 11);
    reference(cublas_, b);
    const bool nn = p.layout == CUDAL2_LAYOUT_NN;
    const auto acc = p.accum == CUDAL2_ACCUM_F32 ? cudal2::Accum::F32 : cudal2::Accum::F16;
    auto r = cudal2::make_baseline(nn ? "runtime-nn" : "runtime-tn", acc);
    cudal2::Operands ops;
    ops.A = b.A, ops.B = b.B, ops.C = b.C;
    try {
      r->prepare({p.m, p.n, p.k}, ops, nullptr);
    } catch (const cudal2::MethodUnsupported& e) {
      FAIL() << e.what();
    }
    r->run(nullptr);
    CK(cudaDeviceSynchronize());
    EXPECT_TRUE(matches(b)) << r->name() << " " << p.m << "x" << p.n << "x" << p.k;
    const auto d = r->details();
    const auto info = cudal2::query(defaults, p.layout, p.accum, p.m, p.n, p.k);
    EXPECT_EQ(d.at("path").get<std::string>(), path_name(info.path));
    EXPECT_EQ(d.at("spec").get<std::string>(), info.spec);
    std::printf("  %s %s %lldx%lldx%lld: %s\n", r->name().c_str(), p.accum ? "f16" : "f32", (long long)p.m,
                (long long)p.n, (long long)p.k, d.dump().c_str());
  }
}

// 8 threads, one shared handle, each with its own stream and workspace, 3 shapes x 20 calls.
TEST_F(RuntimeGpu, ManyThreadsOneHandle) {
  const std::vector<Problem> ps = {{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 128, 128, 128},
                                   {CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 100, 77, 129},
                                   {CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, 64, 4096, 4096}};
  std::vector<std::unique_ptr<Buffers>> refs;
  for (const auto& p : ps) {
    refs.push_back(std::make_unique<Buffers>(p, 3));
    reference(cublas_, *refs.back());
  }
  cudal2::Handle h;
  constexpr int kThreads = 8;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      void* ws = nullptr;
      const size_t bytes = CUDAL2_DEFAULT_WORKSPACE_BYTES;
      cudaMalloc(&ws, bytes);
      cudaMemset(ws, 0, bytes);
      std::vector<__half*> outs;
      for (const auto& r : refs) {
        __half* c = nullptr;
        cudaMalloc(&c, size_t(r->p.m * r->p.n) * 2);
        outs.push_back(c);
      }
      cudaDeviceSynchronize();
      for (int it = 0; it < 20; ++it)
        for (size_t i = 0; i < refs.size(); ++i) {
          const auto& r = *refs[i];
          if (cudal2::try_gemm(h, r.p.layout, r.p.accum, r.p.m, r.p.n, r.p.k, r.A, r.B, outs[i], s, ws, bytes))
            ++failures[t];
        }
      cudaStreamSynchronize(s);
      for (size_t i = 0; i < refs.size(); ++i) {
        const size_t count = size_t(refs[i]->p.m * refs[i]->p.n);
        std::vector<__half> c(count), r(count);
        cudaMemcpy(c.data(), outs[i], count * 2, cudaMemcpyDeviceToHost);
        cudaMemcpy(r.data(), refs[i]->R, count * 2, cudaMemcpyDeviceToHost);
        for (size_t e = 0; e < count; ++e) {
          const double x = __half2float(c[e]), y = __half2float(r[e]);
          if (!(std::fabs(x - y) <= 4e-3 * std::fabs(y) + 2e-3 * std::sqrt(double(refs[i]->p.k)))) {
            ++failures[t];
            break;
          }
        }
        cudaFree(outs[i]);
      }
      cudaFree(ws);
      cudaStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// Host wall time per call: 10000 back-to-back async calls on a tiny table shape (the queue fills,
// so this is bounded by the GPU as well), and the enqueue time alone (batches of 200 calls timed
// on the host, synchronizing between batches outside the timed region).
TEST_F(RuntimeGpu, HostOverheadPerCall) {
  const Problem p{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 64};
  const Problem q{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 100, 72, 200};
  Buffers b(p), c(q);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudal2::Handle lt_only(cudal2_options{0, 0.0, 0, 0});
  using clk = std::chrono::steady_clock;
  auto per_call = [&](auto&& call, int n) {
    for (int i = 0; i < 100; ++i) call();
    cudaStreamSynchronize(s);
    const auto t0 = clk::now();
    for (int i = 0; i < n; ++i) call();
    const auto t1 = clk::now();
    cudaStreamSynchronize(s);
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
  };
  auto enqueue_only = [&](auto&& call) {
    double total = 0;
    for (int batch = 0; batch < 50; ++batch) {
      cudaStreamSynchronize(s);
      const auto t0 = clk::now();
      for (int i = 0; i < 200; ++i) call();
      total += std::chrono::duration<double, std::micro>(clk::now() - t0).count();
    }
    cudaStreamSynchronize(s);
    return total / (50 * 200);
  };
  // cublasLtMatmul with descriptors and algorithm prepared once (what a caching caller does).
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, 64, 64, 64);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, 64, 64, 64);
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, 64, 64, 64);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  const uint64_t wsb = 32 << 20;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
  cublasLtMatmulHeuristicResult_t r{};
  int got = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &r, &got);
  ASSERT_EQ(got, 1);
  void* ws = nullptr;
  cudaMalloc(&ws, wsb);
  const float one = 1, zero = 0;
  auto lt_call = [&] { cublasLtMatmul(lt, op, &one, b.B, la, b.A, lb, &zero, b.C, lc, b.C, lc, &r.algo, ws, wsb, s); };
  auto cudal2_table = [&] { cudal2_gemm(handle_->get(), p.layout, p.accum, 64, 64, 64, b.A, b.B, b.C, nullptr, 0, s); };
  auto cudal2_lt = [&] { cudal2_gemm(lt_only.get(), p.layout, p.accum, 64, 64, 64, b.A, b.B, b.C, nullptr, 0, s); };
  auto cudal2_off = [&] {
    cudal2_gemm(handle_->get(), q.layout, q.accum, q.m, q.n, q.k, c.A, c.B, c.C, nullptr, 0, s);
  };
  // The seed table's cublaslt configuration entry (64x64x256 NN f32), if this table has it.
  const Problem pl{CUDAL2_LAYOUT_NN, CUDAL2_ACCUM_F32, 64, 64, 256};
  Buffers d(pl);
  auto cudal2_ltcfg = [&] {
    cudal2_gemm(handle_->get(), pl.layout, pl.accum, pl.m, pl.n, pl.k, d.A, d.B, d.C, nullptr, 0, s);
  };
  const auto info_lt = cudal2::query(*handle_, pl.layout, pl.accum, pl.m, pl.n, pl.k);
  const auto info_off = cudal2::query(*handle_, q.layout, q.accum, q.m, q.n, q.k);
  std::printf("\nhost time per call, 64x64x64 nn f32 (us): 10000 async calls | enqueue only\n");
  std::printf("  cublasLtMatmul (prepared descriptors)        %8.3f | %8.3f\n", per_call(lt_call, 10000),
              enqueue_only(lt_call));
  std::printf("  cudal2_gemm, table kernel                    %8.3f | %8.3f\n", per_call(cudal2_table, 10000),
              enqueue_only(cudal2_table));
  std::printf("  cudal2_gemm, use_table=0 (cuBLASLt path)     %8.3f | %8.3f\n", per_call(cudal2_lt, 10000),
              enqueue_only(cudal2_lt));
  std::printf("  cudal2_gemm, off-table 100x72x200 (%-9s) %8.3f | %8.3f  %s\n", path_name(info_off.path),
              per_call(cudal2_off, 10000), enqueue_only(cudal2_off), info_off.spec);
  std::printf("  cudal2_gemm, 64x64x256 (%-9s)            %8.3f | %8.3f  %s\n", path_name(info_lt.path),
              per_call(cudal2_ltcfg, 10000), enqueue_only(cudal2_ltcfg), info_lt.spec);
  cudaFree(ws);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  cudaStreamDestroy(s);
}

// The off-table rule, measured: for off-table shapes that get a neighbour's kernel, its
// graph-replay time per call against cuBLASLt's (a handle with neighbour_factor 0).
TEST_F(RuntimeGpu, NeighbourRuleVersusCublasLt) {
  cudal2::Handle no_neighbours(cudal2_options{0, 0.0, 1, 0});
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto graph_us = [&](cudal2::Handle& h, Buffers& b) {
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < 50; ++i) cudal2::try_gemm(h, b.p.layout, b.p.accum, b.p.m, b.p.n, b.p.k, b.A, b.B, b.C, s);
    cudaStreamEndCapture(s, &g);
    cudaGraphExec_t ge;
    cudaGraphInstantiate(&ge, g, 0);
    cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    std::vector<float> t;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(e0, s);
      cudaGraphLaunch(ge, s);
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms * 1000 / 50);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return double(t[t.size() / 2]);
  };
  std::printf("\noff-table rule: graph-replay us per call, neighbour kernel vs cuBLASLt heuristic\n");
  int neighbours = 0, wins = 0;
  for (const auto& p : off_table_problems()) {
    // Also shapes next to the table's small ones, where the seed's kernels are neighbours.
    const auto info = cudal2::query(*handle_, p.layout, p.accum, p.m, p.n, p.k);
    if (info.path != CUDAL2_PATH_NEIGHBOUR_KERNEL) continue;
    Buffers b(p);
    const double nb = graph_us(*handle_, b), lt = graph_us(no_neighbours, b);
    ++neighbours;
    wins += nb < lt;
    std::printf("  %s %5lldx%5lldx%5lld  from %lldx%lldx%lld  neighbour %7.2f  cublaslt %7.2f  ratio %.3f  %s\n",
                p.layout ? "tn" : "nn", (long long)p.m, (long long)p.n, (long long)p.k, (long long)info.table_m,
                (long long)info.table_n, (long long)info.table_k, nb, lt, lt / nb, info.spec);
  }
  for (int64_t m : {48, 80, 96, 160, 200})
    for (auto layout : {CUDAL2_LAYOUT_NN, CUDAL2_LAYOUT_TN}) {
      const Problem p{layout, CUDAL2_ACCUM_F32, m, m, m};
      const auto info = cudal2::query(*handle_, p.layout, p.accum, p.m, p.n, p.k);
      if (info.path != CUDAL2_PATH_NEIGHBOUR_KERNEL) continue;
      Buffers b(p);
      const double nb = graph_us(*handle_, b), lt = graph_us(no_neighbours, b);
      ++neighbours;
      wins += nb < lt;
      std::printf("  %s %5lldx%5lldx%5lld  from %lldx%lldx%lld  neighbour %7.2f  cublaslt %7.2f  ratio %.3f  %s\n",
                  p.layout ? "tn" : "nn", (long long)p.m, (long long)p.n, (long long)p.k, (long long)info.table_m,
                  (long long)info.table_n, (long long)info.table_k, nb, lt, lt / nb, info.spec);
    }
  std::printf("  neighbour faster than cuBLASLt on %d of %d off-table shapes\n", wins, neighbours);
  cudaStreamDestroy(s);
}

}  // namespace
