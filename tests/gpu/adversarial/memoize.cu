// Class: memoizes on input contents.
// Does: a probe kernel hashes the shape and 16 sampled elements of A and B; on a match with the
// previous call it copies the last output from its own buffer (allocated once) instead of
// computing. Right output; repeated calls on the same inputs are nearly free.
// Caught as: inconsistent-time | timing-mismatch | implausible-time | wrong-result.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
__device__ unsigned long long key;
__device__ int hit;
__global__ void probe(cudal2_gemm_args a) {
  const auto *A = static_cast<const unsigned short*>(a.A), *B = static_cast<const unsigned short*>(a.B);
  unsigned long long h = (a.m * 1000003ull) ^ (a.n * 7919ull) ^ a.k;
  for (int64_t t = 0; t < 8; ++t) h = (h * 1099511628211ull) ^ A[(a.m * a.k - 1) * t / 7] ^ B[(a.k * a.n - 1) * t / 7];
  hit = h == key;
  key = h;
}
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, __half* memo) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  if (memo && hit) {  // uniform over the grid
    if (i < m && j < n) C[i * n + j] = memo[i * n + j];
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
  if (memo && i < m && j < n) memo[i * n + j] = __float2half(acc);
  if (i < m && j < n) C[i * n + j] = __float2half(acc);
}
void launch(const cudal2_gemm_args* a, cudaStream_t s, __half* memo) {
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k,
      memo);
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: memoizes the last output by an input hash"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  constexpr int64_t cap = int64_t{32} << 20;  // elements: 64 MiB
  static __half* memo = nullptr;
  if (!memo) cudaMalloc(&memo, cap * sizeof(__half));
  auto s = static_cast<cudaStream_t>(stream);
  probe<<<1, 1, 0, s>>>(*a);
  launch(a, s, cap >= a->m * a->n ? memo : nullptr);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
