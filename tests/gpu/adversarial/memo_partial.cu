// Class: uniform partial reuse.
// Does: fingerprints its inputs like memo_skip.cu; on every call whose fingerprint equals the
// previous call's it computes two thirds of the output rows and copies the other third (a
// different third each call) from the output it cached in its workspace, refreshing the cache with
// what it computed. Right outputs, uniform per-call times of 2/3 of a GEMM in back-to-back
// batches, a full GEMM for a fresh single call.
// Caught as: wrong-result | inconsistent-time | timing-mismatch | implausible-time, or ok with
// the honest twin's times (tests/gpu/candidates/tiled.cu): chained batches give every call inputs
// of its own, so the fingerprint never matches and it computes every call.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
__device__ unsigned long long key;
__device__ unsigned long long calls;
__device__ int reuse;  // 1 + the third of the rows copied, or 0
__global__ void probe(cudal2_gemm_args a) {
  const auto *A = static_cast<const unsigned short*>(a.A), *B = static_cast<const unsigned short*>(a.B);
  unsigned long long h = reinterpret_cast<unsigned long long>(a.A) ^ (reinterpret_cast<unsigned long long>(a.B) << 7) ^
                         (reinterpret_cast<unsigned long long>(a.C) << 13) ^ (a.m * 1000003ull) ^ (a.n * 7919ull) ^ a.k;
  for (int64_t t = 0; t < 8; ++t) h = (h * 1099511628211ull) ^ A[(a.m * a.k - 1) * t / 7] ^ B[(a.k * a.n - 1) * t / 7];
  ++calls;
  reuse = h == key ? 1 + static_cast<int>(calls % 3) : 0;
  key = h;
}
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, __half* cache) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  if (reuse && (blockIdx.y * 3 / gridDim.y) == static_cast<unsigned>(reuse - 1)) {  // uniform over a block
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
extern "C" const char* cudal2_describe(void) {
  return "adversarial: copies a third of its output from its cache on every repeated call";
}
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
