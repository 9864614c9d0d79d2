#pragma once
// How the runtime runs one table kernel on one problem (runtime/runtime.cpp dispatches): the
// kernel's knobs and where its workspace goes, planned once per shape (plan_kernel), then launched
// (run_kernel: the kernel C ABI; run_lt: a `cublaslt` table kernel's cuBLASLt configuration, or the
// heuristic's top-1).
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudal2/cudal2.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cublaslt_plan.h"
#include "runtime/table.hpp"

namespace cudal2::rt {

constexpr size_t kZone = CUDAL2_WORKSPACE_ZERO_BYTES;

// cuBLASLt descriptors of one problem and the algorithm to run it with (the heuristic's top-1,
// or a `cublaslt` table kernel's configuration); ws: the workspace the algorithm needs.
// Immutable once made, so any number of threads may call cublasLtMatmul with it at once.
struct LtPlan {
  cudal2_lt::Problem pr;
  cublasLtMatmulAlgo_t algo{};
  size_t ws = 0;
  bool tn = false, f16 = false;  // the problem's layout and accumulator
  int64_t ldc = 0;               // C's row stride when padded (runtime/padded_rows.hpp), else 0: n
  std::string spec;              // algo's configuration as a `cublaslt` spec text (cudal2_query reports it)
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() { cudal2_lt::destroy(pr); }
};

// How one kernel runs one problem: knobs, and where its workspace goes. The first
// CUDAL2_WORKSPACE_ZERO_BYTES of every workspace stay zero: mma and wgmma split-K counters (which
// the kernel re-zeroes after each launch) are placed so they end exactly at that boundary, and
// their partials start there; every other user of workspace (cuBLASLt included) gets the part after it.
struct KernelCall {
  const Table* table = nullptr;  // whose kernel
  int kernel = -1;
  int raster = 0, swizzle = 1, decomposition = 0, splits = 1;
  size_t offset = kZone;  // where the kernel's workspace pointer points
  size_t need_total = 0;  // bytes the caller's workspace must have (0: none)
  bool ok = false;
  std::shared_ptr<const LtPlan> lt;  // a `cublaslt` kernel: its plan for this shape (else null)
};

// Fills offset/need_total/ok for kernel c.kernel on (m, n, k); false (with the reason) if it
// cannot run the problem. Host only (no device work); takes the kernel's lock when needed.
bool plan_kernel(cublasLtHandle_t lt, KernelCall& c, int64_t m, int64_t n, int64_t k, char* why, size_t whylen);

// Launches a planned kernel (not a `cublaslt` one) on the caller's operands and workspace.
cudal2_status_t run_kernel(const KernelCall& c, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                           void* ws, size_t ws_bytes, cudaStream_t stream);

// One cublasLtMatmul of a plan on the caller's operands (its workspace after the zero area).
cudal2_status_t run_lt(cublasLtHandle_t lt, const LtPlan& p, int accum, const void* A, const void* B, void* C, void* ws,
                       size_t ws_bytes, cudaStream_t stream);

}  // namespace cudal2::rt
