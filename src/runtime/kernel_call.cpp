// Planning and launching one table kernel (runtime/kernel_call.hpp).
#include "runtime/kernel_call.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "mma_plan.h"
#include "runtime/last_error.hpp"
#include "stream_plan.h"
#include "wgmma_plan.h"

namespace cudal2::rt {

namespace {

// Per-kernel locks for kernels that keep host state (KernelInfo::stateless false): one per kernel
// of every table, shared by all handles (the state is the kernel's, not the handle's).
std::mutex& kernel_lock(const Table* t, int kernel) {
  static const std::vector<std::unique_ptr<std::mutex[]>> locks = [] {
    std::vector<std::unique_ptr<std::mutex[]>> v;
    for (int i = 0; i < kNumTables; ++i)
      v.emplace_back(new std::mutex[kTables[i].num_kernels > 0 ? kTables[i].num_kernels : 1]);
    return v;
  }();
  return locks[static_cast<size_t>(t - kTables)][kernel];
}

cudal2_gemm_args make_args(int64_t m, int64_t n, int64_t k, const KernelCall& c) {
  cudal2_gemm_args a{};
  a.m = m, a.n = n, a.k = k;
  a.raster = c.raster, a.swizzle = c.swizzle, a.decomposition = c.decomposition, a.splits = c.splits;
  return a;
}

// A `cublaslt` kernel on (m, n, k): descriptors, the configuration with the call's split count
// (cudal2_lt::configure, as the tuner's artifact does), and cublasLtMatmulAlgoCheck for the shape,
// whose workspaceSize is what the call needs. false (with the reason) if cuBLASLt refuses.
bool plan_lt_kernel(cublasLtHandle_t lt, KernelCall& c, int64_t m, int64_t n, int64_t k, char* why, size_t whylen) {
  const KernelInfo& ki = c.table->kernels[c.kernel];
  const bool f16 = ki.accum == CUDAL2_ACCUM_F16;
  auto p = std::make_shared<LtPlan>();
  if (!cudal2_lt::make_problem(m, n, k, ki.layout == CUDAL2_LAYOUT_TN, f16, p->pr)) {
    std::snprintf(why, whylen, "%s: %s", p->pr.failed, cublasLtGetStatusString(p->pr.status));
    return false;
  }
  cudal2_lt::Config cfg;
  cfg.algo = ki.lt.algo, cfg.tile = ki.lt.tile, cfg.stages = ki.lt.stages, cfg.splits = c.splits < 1 ? 1 : c.splits;
  cfg.reduction = ki.lt.reduction, cfg.swizzle = ki.lt.swizzle, cfg.custom = ki.lt.custom, cfg.inner = ki.lt.inner;
  cfg.cluster = ki.lt.cluster;
  const char* failed = "";
  cublasLtMatmulHeuristicResult_t r{};
  const cublasStatus_t st = cudal2_lt::configure_checked(lt, f16, cfg, p->pr, &p->algo, &r, &failed);
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::snprintf(why, whylen, "%s: %s", failed, cublasLtGetStatusString(st));
    return false;
  }
  p->ws = r.workspaceSize;
  // The call path guarantees 16-byte aligned A, B and C, nothing more.
  const auto al = cudal2_lt::min_alignment(p->algo);
  if (std::max({al.a, al.b, al.c, al.d}) > 16) {
    std::snprintf(why, whylen, "the algorithm needs operands aligned to more than 16 bytes");
    return false;
  }
  c.offset = kZone, c.need_total = p->ws ? kZone + p->ws : 0;
  c.lt = std::move(p);
  c.ok = true;
  return true;
}

}  // namespace

bool plan_kernel(cublasLtHandle_t lt, KernelCall& c, int64_t m, int64_t n, int64_t k, char* why, size_t whylen) {
  const KernelInfo& ki = c.table->kernels[c.kernel];
  if (ki.cublaslt) return plan_lt_kernel(lt, c, m, n, k, why, whylen);
  auto a = make_args(m, n, k, c);
  // Alignment is part of can_implement for some families: plan with aligned dummy pointers (the
  // call path requires 16-byte aligned operands).
  a.A = a.B = reinterpret_cast<const void*>(uintptr_t(256));  // NOLINT(performance-no-int-to-ptr): never dereferenced
  a.C = reinterpret_cast<void*>(uintptr_t(256));              // NOLINT(performance-no-int-to-ptr)
  std::unique_lock<std::mutex> lock;
  if (!ki.stateless) lock = std::unique_lock<std::mutex>(kernel_lock(c.table, c.kernel));
  if (ki.can_implement(&a, why, whylen) != 0) return false;
  const size_t need = ki.workspace_size(&a);
  if (need == 0) {
    c.offset = kZone, c.need_total = 0;
  } else if (std::string_view(ki.family) == "stream") {
    // stream's split-K counters the same way (one per output tile), its partials after them.
    const size_t cb =
        cudal2_stream_plan::counters_bytes(cudal2_stream_plan::grid(m, n, ki.tile_n, ki.tile_m, c.splits));
    if (cb > kZone) {
      std::snprintf(why, whylen, "split-K counters (%zu bytes) exceed the zero area", cb);
      return false;
    }
    c.offset = kZone - cb, c.need_total = kZone - cb + need;
  } else if (const std::string_view fam = ki.family; fam == "mma" || fam == "wgmma" || fam == "lat") {
    // Split-K: the per-tile arrival counters must read zero at launch (the kernel re-arms them
    // after each launch, nothing else zeroes them). They go at the end of the zero area, where no
    // one else writes; the partials follow. A counter in the shared part of the workspace would
    // start from whatever the last cuBLASLt call left there, and the tile would never be written
    // (found on the H100: wgmma 128x128 splits=auto after cuBLASLt split-K entries).
    // lat's grouped splits keep the same layout: counters, then partials.
    const size_t cb =
        fam == "mma"
            ? cudal2_plan::counters_bytes(cudal2_plan::grid(m, n, k, ki.tile_m, ki.tile_n, ki.tile_k, c.splits))
        : fam == "lat"
            ? cudal2_plan::lat_counters_bytes(cudal2_plan::ceil_div(m, ki.tile_m) * cudal2_plan::ceil_div(n, ki.tile_n))
            : cudal2_wgmma_plan::counters_bytes(cudal2_wgmma_plan::tiles(m, n, ki.tile_m, ki.tile_n));
    if (cb > kZone) {
      std::snprintf(why, whylen, "split-K counters (%zu bytes) exceed the zero area", cb);
      return false;
    }
    c.offset = kZone - cb, c.need_total = kZone - cb + need;
  } else {
    c.offset = kZone, c.need_total = kZone + need;
  }
  c.ok = true;
  return true;
}

cudal2_status_t run_kernel(const KernelCall& c, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                           void* ws, size_t ws_bytes, cudaStream_t stream) {
  if (c.need_total > ws_bytes)
    return fail(CUDAL2_STATUS_INSUFFICIENT_WORKSPACE, "%lldx%lldx%lld needs %zu bytes of workspace, got %zu",
                (long long)m, (long long)n, (long long)k, c.need_total, ws_bytes);
  const KernelInfo& ki = c.table->kernels[c.kernel];
  auto a = make_args(m, n, k, c);
  a.A = A, a.B = B, a.C = C;
  if (ws && ws_bytes > c.offset) {
    a.workspace = static_cast<char*>(ws) + c.offset;
    a.workspace_bytes = ws_bytes - c.offset;
  }
  char err[256] = "";
  int rc;
  if (ki.stateless) {
    rc = ki.run(&a, stream, err, sizeof err);
  } else {
    std::lock_guard<std::mutex> lock(kernel_lock(c.table, c.kernel));
    rc = ki.run(&a, stream, err, sizeof err);
  }
  if (rc != 0) return fail(CUDAL2_STATUS_KERNEL_ERROR, "kernel '%s': %s", ki.spec, err);
  return CUDAL2_STATUS_SUCCESS;
}

cudal2_status_t run_lt(cublasLtHandle_t lt, const LtPlan& p, int accum, const void* A, const void* B, void* C, void* ws,
                       size_t ws_bytes, cudaStream_t stream) {
  if (p.ws && ws_bytes < kZone + p.ws)
    return fail(CUDAL2_STATUS_INSUFFICIENT_WORKSPACE, "cuBLASLt needs %zu bytes of workspace, got %zu", kZone + p.ws,
                ws_bytes);
  void* w = p.ws ? static_cast<char*>(ws) + kZone : nullptr;
  const size_t wb = p.ws ? ws_bytes - kZone : 0;
  const cublasStatus_t st = cudal2_lt::matmul(lt, p.pr, accum == CUDAL2_ACCUM_F16, &p.algo, A, B, C, w, wb, stream);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail(CUDAL2_STATUS_CUBLAS_ERROR, "cublasLtMatmul: %s", cublasLtGetStatusString(st));
  return CUDAL2_STATUS_SUCCESS;
}

}  // namespace cudal2::rt
