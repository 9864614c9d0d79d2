// Class: memoization on a fingerprint of the whole input.
// Does: hashes every element of A and B (a grid-wide reduction, memory-bound); on every call whose
// hash equals the previous call's it copies the output it cached in its workspace. No sampled
// fingerprint can be fooled by a change it does not sample; this one sees every change.
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
__device__ int reuse;
__device__ unsigned long long sum;
__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 31);
}
// Order-independent: a sum of mixed (index, value) pairs over both inputs.
__global__ void hash_all(const unsigned short* A, int64_t na, const unsigned short* B, int64_t nb) {
  unsigned long long acc = 0;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < na + nb; t += int64_t{gridDim.x} * blockDim.x)
    acc += mix((static_cast<unsigned long long>(t) << 16) ^ (t < na ? A[t] : B[t - na]));
  atomicAdd(&sum, acc);
}
__global__ void decide() {
  ++calls;
  reuse = calls > 1 && sum == key;
  key = sum;
  sum = 0;
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
extern "C" const char* cudal2_describe(void) { return "adversarial: memoizes on a hash of every input element"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args* a) { return static_cast<size_t>(a->m * a->n) * 2; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  hash_all<<<264, 256, 0, s>>>(static_cast<const unsigned short*>(a->A), a->m * a->k,
                               static_cast<const unsigned short*>(a->B), a->k * a->n);
  decide<<<1, 1, 0, s>>>();
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k,
      static_cast<__half*>(a->workspace));
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
