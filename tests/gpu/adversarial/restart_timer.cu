// Class: a timer restarted after the work (the single call's time below the physical floor).
// Does: computes correctly; while its stream is captured right after the graph's start event, it
// reads that event from the capture's dependency node and records it again after its kernel, so
// the replay's elapsed time starts when the kernel has finished: about 0 us for the one-call graph
// of the single-call sample and for a batch's first call.
// Caught as: timing-mismatch (the runner's graph check: a timing event recorded twice) |
// implausible-time (the single call's median against the physical floor) | inconsistent-time |
// wrong-result.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  float acc = 0.f;
  for (int64_t p = 0; p < k; p += T) {
    As[ty][tx] = i < m && p + tx < k ? __half2float(A[i * k + p + tx]) : 0.f;
    Bs[ty][tx] = p + ty < k && j < n ? __half2float(B[(p + ty) * n + j]) : 0.f;
    __syncthreads();
    for (int q = 0; q < T; ++q) acc += As[ty][q] * Bs[q][tx];
    __syncthreads();
  }
  if (i < m && j < n) C[i * n + j] = __float2half(acc);
}
void launch(const cudal2_gemm_args* a, cudaStream_t s) {
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) {
  return "adversarial: re-records the graph's start event after its kernel";
}
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  cudaEvent_t start = nullptr;
  if (cudaStreamGetCaptureInfo(s, &st, nullptr, nullptr, &deps, nullptr, &n) == cudaSuccess &&
      st == cudaStreamCaptureStatusActive && n == 1) {
    cudaGraphNodeType type{};
    if (cudaGraphNodeGetType(deps[0], &type) == cudaSuccess && type == cudaGraphNodeTypeEventRecord)
      cudaGraphEventRecordNodeGetEvent(deps[0], &start);
  }
  cudaGetLastError();
  launch(a, s);
  if (start) cudaEventRecordWithFlags(start, s, cudaEventRecordExternal);
  return 0;
}
