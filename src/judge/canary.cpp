#include "judge/canary.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "measure/device.hpp"

namespace cudal2 {

namespace {

// Entries in {-1, 0, 1}: every product and every fp32 partial sum is an exact integer of at most
// n <= 2048 in magnitude, so the fp16 output is exact and compared bit for bit with the host's sums.
int a_at(int i, int k) { return (i * 3 + k * 5) % 3 - 1; }
int b_at(int k, int j) { return (k * 7 + j * 2 + 1) % 3 - 1; }

// GEMMs per batch: one CUDA graph runs them back to back, each between two events, so the GPU is
// kept busy by this context and a time slice given to another context lands inside a timed launch.
constexpr int kBatch = 16;

struct Resources {
  __half *A = nullptr, *B = nullptr, *C = nullptr, *host = nullptr;
  void* workspace = nullptr;
  cudaStream_t stream = nullptr;
  std::array<cudaEvent_t, kBatch> e0{}, e1{};
  cublasHandle_t handle = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Resources() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (handle) cublasDestroy(handle);
    for (auto e : e0)
      if (e) cudaEventDestroy(e);
    for (auto e : e1)
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(workspace);
    if (host) cudaFreeHost(host);
  }
};

std::string cuda_failed(const char* what, cudaError_t e) {
  return fmt::format("{}: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

}  // namespace

protocol::CanaryAnswer run_canary(const protocol::CanaryJob& job) {
  protocol::CanaryAnswer ans;
  std::string why;
  if (!gpu_available(&why)) {
    ans.reason = "no usable GPU: " + why;
    return ans;
  }
  ans.gpu = query_gpu(0).name;
  const int n = job.n;
  const size_t elems = size_t(n) * n;
  Resources r;
  auto fail = [&](const std::string& reason) {
    ans.healthy = false;
    ans.reason = reason;
    return ans;
  };
#define CANARY_CUDA(call)                                       \
  do {                                                          \
    const cudaError_t e_ = (call);                              \
    if (e_ != cudaSuccess) return fail(cuda_failed(#call, e_)); \
  } while (0)
  CANARY_CUDA(cudaMalloc(&r.A, elems * sizeof(__half)));
  CANARY_CUDA(cudaMalloc(&r.B, elems * sizeof(__half)));
  CANARY_CUDA(cudaMalloc(&r.C, kBatch * elems * sizeof(__half)));
  CANARY_CUDA(cudaMallocHost(&r.host, elems * sizeof(__half)));
  CANARY_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  for (int k = 0; k < kBatch; ++k) {
    CANARY_CUDA(cudaEventCreate(&r.e0[k]));
    CANARY_CUDA(cudaEventCreate(&r.e1[k]));
  }
  // A and B row-major.
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) r.host[size_t(i) * n + k] = __float2half(float(a_at(i, k)));
  CANARY_CUDA(cudaMemcpy(r.A, r.host, elems * sizeof(__half), cudaMemcpyHostToDevice));
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) r.host[size_t(k) * n + j] = __float2half(float(b_at(k, j)));
  CANARY_CUDA(cudaMemcpy(r.B, r.host, elems * sizeof(__half), cudaMemcpyHostToDevice));
  constexpr size_t kWorkspace = size_t(32) << 20;
  CANARY_CUDA(cudaMalloc(&r.workspace, kWorkspace));
  if (cublasCreate(&r.handle) != CUBLAS_STATUS_SUCCESS) return fail("cublasCreate failed");
  cublasSetStream(r.handle, r.stream);
  cublasSetWorkspace(r.handle, r.workspace, kWorkspace);  // nothing allocated inside the capture
  // Each output is checked on one whole row and one whole column, exactly (the host's sums).
  const int row = n / 3, col = n / 5;
  std::vector<float> want_row(n), want_col(n);
  for (int x = 0; x < n; ++x) {
    int sr = 0, sc = 0;
    for (int k = 0; k < n; ++k) sr += a_at(row, k) * b_at(k, x), sc += a_at(x, k) * b_at(k, col);
    want_row[x] = float(sr), want_col[x] = float(sc);
  }
  __half* got = r.host;  // per launch k: n of its row, then n of its column
  // One batch: every output poisoned (NaN), so a launch that never ran cannot pass; then each GEMM
  // between its two events, followed by the copies of its row and column. Row-major C = A*B is
  // column-major C^T = B^T * A^T.
  const float alpha = 1.0f, beta = 0.0f;
  auto enqueue = [&](unsigned event_flags) -> std::string {
    cudaError_t e = cudaMemsetAsync(r.C, 0xFF, kBatch * elems * sizeof(__half), r.stream);
    for (int k = 0; k < kBatch && e == cudaSuccess; ++k) {
      __half* C = r.C + size_t(k) * elems;
      e = cudaEventRecordWithFlags(r.e0[k], r.stream, event_flags);
      if (e != cudaSuccess) break;
      const cublasStatus_t st =
          cublasGemmEx(r.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, r.B, CUDA_R_16F, n, r.A, CUDA_R_16F, n,
                       &beta, C, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      if (st != CUBLAS_STATUS_SUCCESS) return fmt::format("cublasGemmEx failed: {}", cublasGetStatusString(st));
      e = cudaEventRecordWithFlags(r.e1[k], r.stream, event_flags);
      if (e == cudaSuccess)
        e = cudaMemcpyAsync(got + size_t(2 * k) * n, C + size_t(row) * n, n * sizeof(__half), cudaMemcpyDeviceToHost,
                            r.stream);
      if (e == cudaSuccess)
        e = cudaMemcpy2DAsync(got + size_t(2 * k + 1) * n, sizeof(__half), C + col, n * sizeof(__half), sizeof(__half),
                              n, cudaMemcpyDeviceToHost, r.stream);
    }
    return e == cudaSuccess ? "" : cuda_failed("enqueueing the canary's batch", e);
  };
  // As one CUDA graph where possible: the GPU runs the batch as one piece, and the events time the
  // GEMMs, not how long this process took to enqueue them (a busy host is not a disturbed GPU).
  bool graphed = false;
  if (cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    const std::string why_not = enqueue(cudaEventRecordExternal);
    cudaGraph_t g = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(r.stream, &g);
    r.graph = g;
    graphed = why_not.empty() && ended == cudaSuccess && g && cudaGraphInstantiate(&r.exec, g, 0) == cudaSuccess;
  }
  cudaGetLastError();  // a capture that failed leaves no error behind: the batches are enqueued directly
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::vector<double> us;
  int launches = 0, batches = 0;
  while (std::chrono::duration<double>(Clock::now() - t0).count() < job.seconds) {
    if (graphed) {
      CANARY_CUDA(cudaGraphLaunch(r.exec, r.stream));
    } else if (const std::string e = enqueue(cudaEventRecordDefault); !e.empty()) {
      return fail(e);
    }
    CANARY_CUDA(cudaStreamSynchronize(r.stream));
    ++batches;
    std::vector<double> times(kBatch);
    bool timed = true;
    for (int k = 0; k < kBatch; ++k) {
      ++launches;
      for (int x = 0; x < n; ++x) {
        const float gr = __half2float(got[size_t(2 * k) * n + x]), gc = __half2float(got[size_t(2 * k + 1) * n + x]);
        if (!(gr == want_row[x]))
          return fail(fmt::format("launch {}: C[{}][{}] = {} instead of {} (a launch lost or corrupted)", launches, row,
                                  x, gr, want_row[x]));
        if (!(gc == want_col[x]))
          return fail(fmt::format("launch {}: C[{}][{}] = {} instead of {} (a launch lost or corrupted)", launches, x,
                                  col, gc, want_col[x]));
      }
      float ms = 0;
      const cudaError_t e = cudaEventElapsedTime(&ms, r.e0[k], r.e1[k]);
      if (e != cudaSuccess && graphed && batches == 1) {
        cudaGetLastError();  // events recorded by a graph that this driver cannot time: enqueue directly
        timed = false;
        break;
      }
      if (e != cudaSuccess) return fail(cuda_failed("cudaEventElapsedTime", e));
      times[k] = 1000.0 * ms;
    }
    if (!timed) {
      graphed = false;
      continue;
    }
    if (batches > 1) us.insert(us.end(), times.begin(), times.end());  // the first batch warms up
  }
#undef CANARY_CUDA
  const double window_us = 1e6 * std::chrono::duration<double>(Clock::now() - t0).count();
  ans.launches = launches;
  if (us.size() < 2 * static_cast<size_t>(kBatch))
    return fail(fmt::format("only {} launches in {:.0f} ms", launches, window_us / 1000));
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  ans.median_us = sorted[sorted.size() / 2];
  ans.max_us = sorted.back();
  // Faster than a 2 PFLOP/s GPU could do it: launches that did not run.
  const double floor_us = 2.0 * double(n) * n * n / 2e15 * 1e6;
  if (ans.median_us < floor_us)
    return fail(fmt::format("median launch {:.3f} us, below the {:.3f} us any GPU needs", ans.median_us, floor_us));
  // Time the launches were held up beyond 4x the median: another context had the GPU.
  double held = 0;
  for (double t : us) held += std::max(0.0, t - 4 * ans.median_us);
  if (held > 0.05 * window_us)
    return fail(
        fmt::format("launches held up {:.1f} ms of a {:.0f} ms window (median {:.1f} us, max {:.0f} us{}): "
                    "another context is using the GPU",
                    held / 1000, window_us / 1000, ans.median_us, ans.max_us, graphed ? "" : ", not graphed"));
  ans.healthy = true;
  return ans;
}

}  // namespace cudal2
