// A correct, slow free-form candidate (NN, fp32 accumulate): one thread per output element.
// The GPU tests use it as the control beside the broken candidates in this folder.
#include <cuda_fp16.h>
#include "cudal2_kernel_abi.h"

namespace {
__global__ void naive_gemm(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= m || j >= n) return;
  float acc = 0.f;
  for (int64_t p = 0; p < k; ++p) acc += __half2float(A[i * k + p]) * __half2float(B[p * n + j]);
#ifdef CANDIDATE_WRONG
  if (i == m / 2 && j == n / 2) acc += 1.0f;  // one wrong element: the exact check must notice
#endif
  C[i * n + j] = __float2half(acc);
#ifdef CANDIDATE_OOB
  if (i == m - 1 && j == n - 1) C[m * n + 7] = __float2half(1.f);  // 8 elements past the end
#endif
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "naive test candidate"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  const dim3 block(16, 16), grid((a->n + 15) / 16, (a->m + 15) / 16);
  naive_gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
