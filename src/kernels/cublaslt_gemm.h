// The `cublaslt` family's artifact: the kernel C ABI over one cublasLtMatmul call with exactly
// the algorithm configuration of its spec (src/codegen/family_cublaslt.hpp). Host code only; the
// JIT links it with -lcublasLt. One configuration is the type cudal2_cublaslt::Gemm<Config<...>>;
// the generated source includes this file and exports that type through the kernel C ABI
// (cudal2_kernel_shim.h):
//   #include "cublaslt_gemm.h"
//   using cudal2_kernel = cudal2_cublaslt::Gemm<cudal2_cublaslt::Config<true, false, 66, 20, 35, 2, 1, 0, 0, 3>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "cublaslt tn f32 algo=66 tile=20 stages=35 ... cluster=2x1")
//
// The cuBLASLt handle is created once per artifact, and the descriptors and configured algorithm
// once per (M, N, K, split count), on the first call that sees them (can_implement and
// workspace_size come before any run, and the first run before graph capture), and kept in a
// small cache: run() itself then only looks them up and enqueues cublasLtMatmul, allocating
// nothing and synchronizing nothing, so it is capturable.
#pragma once
#include <stdio.h>

#include <mutex>

#include "cublaslt_plan.h"
#include "cudal2_kernel_shim.h"

namespace cudal2_cublaslt {
namespace {

// One configuration (codegen/family_cublaslt.cpp writes it from a spec), in the spec text's order:
// layout, accumulator, then the cublasLtMatmulAlgoConfigAttributes_t values (cluster: the
// cublasLtClusterShape_t id); the split count comes at run time.
template <bool kLayoutTN, bool kAccumF16, int kAlgo, int kTile, int kStages, int kReduction, int kSwizzle, int kCustom,
          int kInner, int kCluster>
struct Config {
  static constexpr bool kTn = kLayoutTN;
  static constexpr bool kF16 = kAccumF16;
  static cudal2_lt::Config lt(int splits) {
    cudal2_lt::Config c;
    c.algo = kAlgo, c.tile = kTile, c.stages = kStages, c.splits = splits;
    c.reduction = kReduction, c.swizzle = kSwizzle, c.custom = kCustom;
    c.inner = kInner, c.cluster = kCluster;
    return c;
  }
};

struct Plan {
  int64_t m = -1, n = -1, k = -1;
  int splits = 0;
  cudal2_lt::Problem problem;
  cublasLtMatmulAlgo_t algo{};
  cublasStatus_t status = CUBLAS_STATUS_NOT_INITIALIZED;
  const char* failed = "not planned";
  size_t workspace = 0;
  cudal2_lt::Alignment align;
};

struct State {
  std::mutex mu;
  cublasLtHandle_t handle = nullptr;
  cublasStatus_t handle_status = CUBLAS_STATUS_NOT_INITIALIZED;
  static constexpr int kPlans = 8;
  Plan plans[kPlans];
  int next = 0;  // round-robin replacement
  ~State() {
    for (auto& p : plans) cudal2_lt::destroy(p.problem);
    if (handle) cublasLtDestroy(handle);
  }
};

// "what: status" in a buffer of this thread's, valid until its next call (the shim copies it out).
const char* status_text(const char* what, cublasStatus_t status) {
  static thread_local char buf[256];
  snprintf(buf, sizeof buf, "%s: %s", what, cublasLtGetStatusName(status));
  return buf;
}

bool aligned(const void* p, uint32_t bytes) { return bytes <= 1 || reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Configuration Cfg's kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  // One cuBLASLt handle and plan cache per artifact.
  static State& state() {
    static State s;
    return s;
  }

  // The plan for these arguments, built on first sight. Caller holds the mutex.
  static const Plan& plan_for(State& s, const cudal2_gemm_args* a) {
    const int splits = a->splits < 1 ? 1 : a->splits;
    for (const auto& p : s.plans)
      if (p.m == a->m && p.n == a->n && p.k == a->k && p.splits == splits) return p;
    Plan& p = s.plans[s.next];
    s.next = (s.next + 1) % State::kPlans;
    cudal2_lt::destroy(p.problem);
    p = Plan{};
    p.m = a->m, p.n = a->n, p.k = a->k, p.splits = splits;
    if (!s.handle && s.handle_status == CUBLAS_STATUS_NOT_INITIALIZED) {
      s.handle_status = cublasLtCreate(&s.handle);
      if (s.handle_status == CUBLAS_STATUS_NOT_INITIALIZED) s.handle_status = CUBLAS_STATUS_INTERNAL_ERROR;
    }
    if (!s.handle) {
      p.status = s.handle_status;
      p.failed = "cublasLtCreate";
      return p;
    }
    if (!cudal2_lt::make_problem(a->m, a->n, a->k, Cfg::kTn, Cfg::kF16, p.problem)) {
      p.status = p.problem.status;
      p.failed = p.problem.failed;
      return p;
    }
    cublasLtMatmulHeuristicResult_t r{};
    p.status = cudal2_lt::configure_checked(s.handle, Cfg::kF16, Cfg::lt(splits), p.problem, &p.algo, &r, &p.failed);
    if (p.status != CUBLAS_STATUS_SUCCESS) return p;
    p.failed = nullptr;
    p.workspace = r.workspaceSize;
    p.align = cudal2_lt::min_alignment(p.algo);
    return p;
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (a.m < 1 || a.n < 1 || a.k < 1 || a.m > INT32_MAX || a.n > INT32_MAX || a.k > INT32_MAX)
      return "cublaslt: M, N and K must be in 1..2^31-1";
    if (a.raster != 0 || a.decomposition != 0 || (a.swizzle != 0 && a.swizzle != 1))
      return "cublaslt: no raster, decomposition or swizzle knobs";
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    const Plan& p = plan_for(s, &a);
    if (p.status != CUBLAS_STATUS_SUCCESS) return status_text(p.failed, p.status);
    // cuBLASLt's A is our B, its B our A, its C and D our C.
    if (!aligned(a.B, p.align.a) || !aligned(a.A, p.align.b) || !aligned(a.C, p.align.c) || !aligned(a.C, p.align.d))
      return "cublaslt: operand pointers below the algorithm's minimum alignment";
    return nullptr;
  }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    const Plan& p = plan_for(s, &a);
    return p.status == CUBLAS_STATUS_SUCCESS ? p.workspace : 0;
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    const Plan& p = plan_for(s, &a);  // found in the cache: can_implement/workspace_size built it
    if (p.status != CUBLAS_STATUS_SUCCESS) return status_text(p.failed, p.status);
    if (a.workspace_bytes < p.workspace) return "cublaslt: workspace smaller than cudal2_workspace_size";
    const cublasStatus_t st = cudal2_lt::matmul(s.handle, p.problem, Cfg::kF16, &p.algo, a.A, a.B, a.C, a.workspace,
                                                a.workspace_bytes, static_cast<cudaStream_t>(stream));
    if (st != CUBLAS_STATUS_SUCCESS) return status_text("cublasLtMatmul", st);
    return nullptr;
  }
};

}  // namespace
}  // namespace cudal2_cublaslt
