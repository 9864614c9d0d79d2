// The judge's GPU reference (src/measure/reference_gemm.hpp) against an fp64 product of the same
// fp16 inputs, on skinny shapes with a long K, where cuBLAS splits K: every element within the
// fp32 tolerance the judge holds candidates to. Printed beside, for the record: cuBLAS asked for
// an fp16 output, as the judge's reference was before, with its default workspace and with none
// (the judge lent it the job's workspace; without room for fp32 partial sums cuBLAS adds its K
// splits in the output: on an H200 the judge's references of 5x4101x4104 sat on a 1/32 grid, up to
// 0.09 off, and charged honest candidates with wrong-result).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/problem.hpp"
#include "judge/judge.hpp"
#include "judge/shape_buffers.hpp"
#include "measure/device.hpp"
#include "measure/half.hpp"
#include "measure/method.hpp"
#include "measure/reference_gemm.hpp"
#include "measure/verify.hpp"

namespace cudal2 {
namespace {

struct Dev {
  void* p = nullptr;
  explicit Dev(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

std::vector<uint16_t> to_host(const void* p, size_t n) {
  std::vector<uint16_t> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// The fp64 product of A (m x k) and B (k x n, row-major), every element: the judge's own CPU
// reference (measure/verify.hpp) with every row sampled.
std::vector<double> fp64_product(const Shape& s, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B) {
  return compute_reference(s, A, B, plan_sampling(s, std::numeric_limits<double>::infinity())).row_vals;
}

// Elements of C (fp16 bits) beyond tol of the fp64 product `exact`.
int64_t beyond(const std::vector<uint16_t>& C, const std::vector<double>& exact, const ElementTolerance& tol) {
  int64_t bad = 0;
  for (size_t i = 0; i < C.size(); ++i) {
    const double got = half_to_float(C[i]);
    if (!(std::fabs(got - exact[i]) <= tol.rel * std::fabs(exact[i]) + tol.abs)) ++bad;
  }
  return bad;
}

TEST(ReferenceGpu, SkinnyLongKReferencesMatchFp64) {
  const Shape shapes[] = {{5, 4101, 4104}, {3, 5003, 4099}, {1, 4096, 16384}, {16, 1024, 12288}};
  ReferenceGemm ref;
  cublasHandle_t h = nullptr, h0 = nullptr;  // cuBLAS's default workspace; none
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasCreate(&h0), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetWorkspace(h0, nullptr, 0), CUBLAS_STATUS_SUCCESS);
  for (const Shape& s : shapes) {
    const int64_t m = s.m, n = s.n, k = s.k;
    Dev A(size_t(m * k) * 2), B(size_t(k * n) * 2), R(size_t(m * n) * 2), R16(size_t(m * n) * 2),
        R16none(size_t(m * n) * 2);
    for (int trial = 0; trial < 3; ++trial) {
      fill_normal_f16(A.p, size_t(m * k), 11 + trial, nullptr);
      fill_normal_f16(B.p, size_t(k * n), 97 + trial, nullptr);
      ref.run(m, n, k, A.p, 0, B.p, 0, R.p, 0, 1, nullptr);
      // cuBLAS with an fp16 output, as the reference was before: default workspace, then none.
      auto fp16_out = [&](cublasHandle_t hh, void* C) {
        const float one = 1.0f, zero = 0.0f;
        ASSERT_EQ(
            cublasGemmEx(hh, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &one, B.p, CUDA_R_16F, int(n), A.p,
                         CUDA_R_16F, int(k), &zero, C, CUDA_R_16F, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      };
      fp16_out(h, R16.p);
      fp16_out(h0, R16none.p);
      const auto a = to_host(A.p, size_t(m * k)), b = to_host(B.p, size_t(k * n));
      const std::vector<double> exact = fp64_product(s, a, b);
      const ElementTolerance tol = element_tolerance(Accum::F32, k, std::sqrt(double(k)));
      const int64_t bad = beyond(to_host(R.p, size_t(m * n)), exact, tol);
      const int64_t bad16 = beyond(to_host(R16.p, size_t(m * n)), exact, tol);
      const int64_t bad16none = beyond(to_host(R16none.p, size_t(m * n)), exact, tol);
      std::printf(
          "reference %lldx%lldx%lld trial %d: %lld element(s) beyond the fp32 tolerance (cuBLAS, fp16 output: "
          "%lld; without a workspace: %lld)\n",
          (long long)m, (long long)n, (long long)k, trial, (long long)bad, (long long)bad16, (long long)bad16none);
      EXPECT_EQ(bad, 0) << m << "x" << n << "x" << k;
    }
  }
  cublasDestroy(h);
  cublasDestroy(h0);
}

// What the judge itself does: fresh "normal" inputs, its reference, then its check of an output.
// The output here is the fp64 product of those inputs rounded to fp16 (the best answer there is):
// the judge must pass it on every trial.
class WritesNothing final : public Method {
 public:
  std::string name() const override { return "exact"; }
  Layout layout() const override { return Layout::TN; }
  Accum accum() const override { return Accum::F32; }
  void prepare(const Shape&, const Operands&, cudaStream_t) override {}
  void run(cudaStream_t) override {}
};

// The exact product of fresh inputs must pass the judge's check: on clean buffers and after a
// candidate left anything at all in the job's workspace (which the judge lends every method; a
// reference that read it would be the candidate's to steer).
void exact_product_passes(bool dirty_workspace) {
  const Shape shapes[] = {{5, 4101, 4104}, {3, 5003, 4099}, {16, 1024, 12288}};
  const InputDistribution* normal = nullptr;
  for (const auto& d : verification_distributions())
    if (std::string(d.name) == "normal") normal = &d;
  ASSERT_NE(normal, nullptr);
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
  for (const Shape& s : shapes) {
    ShapeBuffers buf(s, false);
    const JobSecrets sec;
    Judge judge(buf, sec, st);
    WritesNothing exact;
    for (int trial = 0; trial < 8; ++trial) {
      if (dirty_workspace) fill_normal_f16(buf.W.data(), buf.W.bytes() / 2, 77 + trial, st, 0.f, 100.f);
      judge.fresh_inputs(*normal, 1000 + trial);
      ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
      const int64_t m = s.m, n = s.n, k = s.k;
      const auto a = to_host(buf.A.data(), size_t(m * k)), b = to_host(buf.Bn.data(), size_t(k * n));
      const std::vector<double> c = fp64_product(s, a, b);
      std::vector<uint16_t> c16(c.size());
      for (size_t i = 0; i < c.size(); ++i) c16[i] = float_to_half(static_cast<float>(c[i]));
      ASSERT_EQ(cudaMemcpy(buf.C.data(), c16.data(), c16.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
      const CandidateFault f = judge.check(exact);
      EXPECT_FALSE(f) << s.m << "x" << s.n << "x" << s.k << " trial " << trial << ": " << f.what();
    }
  }
  cudaStreamDestroy(st);
}

TEST(ReferenceGpu, TheExactProductPassesTheJudgesCheck) { exact_product_passes(false); }
TEST(ReferenceGpu, TheReferenceIgnoresWhatACandidateLeftInTheWorkspace) { exact_product_passes(true); }

}  // namespace
}  // namespace cudal2
