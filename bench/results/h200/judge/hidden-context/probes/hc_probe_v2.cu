// Class: work in a CUDA context of its own, which the runner's device synchronisation does not
// reach (the context is created through the driver API and popped again after every use).
// Does: computes correctly on the timed stream; every call also leaves a 2 ms spin kernel running
// in its private context (at most one at a time), so the GPU is still busy when the runner answers.
// Caught as: timing-mismatch (the judge's probe finds the GPU busy after the runner's answers with
// no other process on it) | gpu-disturbed (where NVML cannot tell whose the work is: never
// rewarded) | wrong-result | inconsistent-time | implausible-time.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>

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
__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
CUcontext own = nullptr;
CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;
CUresult (*ctx_create4)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice) = nullptr;
int code = -1;
CUresult (*ctx_push)(CUcontext) = nullptr;
CUresult (*ctx_pop)(CUcontext*) = nullptr;
std::chrono::steady_clock::time_point last{};

void* driver(const char* name, unsigned version = 12000) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) != cudaSuccess) p = nullptr;
  return p;
}
__global__ void put(__half* c, float v) { c[0] = __float2half(v); }
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: leaves work running in a context of its own"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(s, &st);
  if (!own && st == cudaStreamCaptureStatusNone) {
    ctx_push = reinterpret_cast<decltype(ctx_push)>(driver("cuCtxPushCurrent"));
    ctx_pop = reinterpret_cast<decltype(ctx_pop)>(driver("cuCtxPopCurrent"));
    CUcontext c = nullptr;
    if (!c) {
      ctx_create = reinterpret_cast<decltype(ctx_create)>(driver("cuCtxCreate"));
      code = ctx_create ? int(ctx_create(&c, 0, 0)) : 900;
      if (code != 0) c = nullptr;
    }
    if (c && ctx_pop && ctx_push) {
      ctx_pop(&c);  // created current: popped, so that the runner's own calls see its context
      own = c;
    } else if (c) {
      code = 901;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (own && st == cudaStreamCaptureStatusNone && now - last > std::chrono::milliseconds(3)) {
    CUcontext popped = nullptr;
    if (ctx_push(own) == CUDA_SUCCESS) {
      spin<<<1, 1>>>(2000000ull);
      ctx_pop(&popped);
      last = now;
    }
  }
  cudaGetLastError();
  launch(a, s);
  if (!own && code >= 0) put<<<1, 1, 0, s>>>(static_cast<__half*>(a->C), float(code));  // diagnosis: why no context
  return 0;
}
