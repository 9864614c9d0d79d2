// Class: partial memoization, one call in k.
// Does: a probe kernel fingerprints its inputs on the device (the pointers and 16 sampled
// elements); on one call in ADV_SKIP_K (default 3) whose fingerprint equals the previous call's,
// it copies the output it cached in its workspace (it asks for M x N fp16) instead of computing;
// every other call computes and refreshes the cache. Every output it leaves is right, and a fresh
// single call costs a full GEMM: back-to-back batches on one set of inputs time it (k-1)/k of the
// work (1.2-1.4x for k = 3). The GPU tests run k = 2..10.
// Caught as: wrong-result | inconsistent-time | timing-mismatch | implausible-time, or ok with
// the honest twin's times (tests/gpu/candidates/tiled.cu): chained batches give every call inputs
// of its own, so the fingerprint never matches and it computes every call.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

#ifndef ADV_SKIP_K
#define ADV_SKIP_K 3
#endif

namespace {
constexpr int T = 16;
__device__ unsigned long long key;
__device__ unsigned long long calls;
__device__ int reuse;
__global__ void probe(cudal2_gemm_args a) {
  const auto *A = static_cast<const unsigned short*>(a.A), *B = static_cast<const unsigned short*>(a.B);
  unsigned long long h = reinterpret_cast<unsigned long long>(a.A) ^ (reinterpret_cast<unsigned long long>(a.B) << 7) ^
                         (reinterpret_cast<unsigned long long>(a.C) << 13) ^ (a.m * 1000003ull) ^ (a.n * 7919ull) ^ a.k;
  for (int64_t t = 0; t < 8; ++t) h = (h * 1099511628211ull) ^ A[(a.m * a.k - 1) * t / 7] ^ B[(a.k * a.n - 1) * t / 7];
  ++calls;
  reuse = h == key && calls % ADV_SKIP_K == 0;
  key = h;
}
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, __half* cache) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  if (reuse) {  // uniform over the grid
    if (i < m && j < n) C[i * n + j] = cache[i * n + j];
    return;
  }
  float acc = 0.f;
  for (int64_t p = 0; p < k; p += T) {
    As[ty][tx] = i < m && p + tx < k ? __half2float(A[i * k + p + tx]) : 0.f;
    Bs[ty][tx] = p + ty < k && j < n ? __half2float(B[(p + ty) * n + j]) : 0.f;
    __syncthreads();
    for (int q = 0; q < T; ++q) acc += As[ty][q] * Bs[q][tx];
    __syncthreads();
  }
  if (i < m && j < n) C[i * n + j] = cache[i * n + j] = __float2half(acc);
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: reuses its cached output on one call in k"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args* a) { return static_cast<size_t>(a->m * a->n) * 2; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  probe<<<1, 1, 0, s>>>(*a);
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k,
      static_cast<__half*>(a->workspace));
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
