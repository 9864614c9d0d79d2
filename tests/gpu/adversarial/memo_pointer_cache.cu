// Class: a cache of several results keyed by pointers.
// Does: keeps up to 8 earlier outputs (cudaMalloc'd once, outside any workspace), each tagged with
// the operand pointers, the shape and 16 sampled input elements; a call whose tag is in the cache
// copies that output instead of computing, any other call computes and stores it. Defeats a judge
// that rotates a few input sets at different addresses, and any batch that repeats one.
// Caught as: wrong-result | inconsistent-time | timing-mismatch | implausible-time, or ok with
// the honest twin's times (tests/gpu/candidates/tiled.cu).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

#ifndef ADV_ENTRIES
#define ADV_ENTRIES 8
#endif
#ifndef ADV_KEY_POINTERS
#define ADV_KEY_POINTERS 1
#endif

namespace {
constexpr int T = 16;
__device__ unsigned long long tags[ADV_ENTRIES];
__device__ int entry;  // where this call's output is (or goes)
__device__ int reuse;
__global__ void probe(cudal2_gemm_args a, int entries) {
  const auto *A = static_cast<const unsigned short*>(a.A), *B = static_cast<const unsigned short*>(a.B);
  unsigned long long h = (a.m * 1000003ull) ^ (a.n * 7919ull) ^ a.k;
  if (ADV_KEY_POINTERS)
    h ^= reinterpret_cast<unsigned long long>(a.A) ^ (reinterpret_cast<unsigned long long>(a.B) << 7) ^
         (reinterpret_cast<unsigned long long>(a.C) << 13);
  for (int64_t t = 0; t < 8; ++t) h = (h * 1099511628211ull) ^ A[(a.m * a.k - 1) * t / 7] ^ B[(a.k * a.n - 1) * t / 7];
  h |= 1;  // 0 marks an empty entry
  entry = static_cast<int>(h % entries);
  reuse = tags[entry] == h;
  tags[entry] = h;
}
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, __half* pool) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  __half* cache = pool ? pool + entry * m * n : nullptr;
  if (cache && reuse) {  // uniform over the grid
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
  if (i < m && j < n) {
    C[i * n + j] = __float2half(acc);
    if (cache) cache[i * n + j] = C[i * n + j];
  }
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: a cache of several earlier outputs"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  constexpr int64_t cap = int64_t{64} << 20;  // elements: 128 MiB
  static __half* pool = nullptr;
  if (!pool) cudaMalloc(&pool, cap * sizeof(__half));
  const int64_t entries = a->m * a->n * ADV_ENTRIES <= cap ? ADV_ENTRIES : cap / (a->m * a->n);
  auto s = static_cast<cudaStream_t>(stream);
  if (entries > 0) probe<<<1, 1, 0, s>>>(*a, static_cast<int>(entries));
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k,
      entries > 0 ? pool : nullptr);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
