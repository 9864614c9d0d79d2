#include "measure/reference_gemm.hpp"

#include <fmt/format.h>

#include <cuda_fp16.h>
#include <algorithm>

namespace cudal2 {

namespace {

void cublas_ok(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) throw CudaError(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(st)));
}

// rows x n fp32 (packed, `count` blocks mn apart) to fp16 at dst (blocks dst_stride apart).
__global__ void round_to_half(const float* src, __half* dst, int64_t mn, int64_t dst_stride, int count) {
  const int64_t total = mn * count;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i / mn, e = i % mn;
    dst[c * dst_stride + e] = __float2half_rn(src[i]);
  }
}

void round_blocks(const float* src, void* dst, int64_t mn, int64_t dst_stride, int count, cudaStream_t st) {
  const int64_t total = mn * count;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65536));
  round_to_half<<<blocks, 256, 0, st>>>(src, static_cast<__half*>(dst), mn, dst_stride, count);
  CUDAL2_CUDA(cudaGetLastError());
}

}  // namespace

ReferenceGemm::ReferenceGemm() { cublas_ok(cublasCreate(&handle_), "cublasCreate"); }

ReferenceGemm::~ReferenceGemm() {
  cudaFree(tmp_);
  cublasDestroy(handle_);
}

float* ReferenceGemm::scratch(size_t floats) {
  if (floats > tmp_floats_) {
    cudaFree(tmp_);
    tmp_ = nullptr, tmp_floats_ = 0;
    CUDAL2_CUDA(cudaMalloc(&tmp_, floats * sizeof(float)));
    tmp_floats_ = floats;
  }
  return tmp_;
}

void ReferenceGemm::run(int64_t m, int64_t n, int64_t k, const void* A, int64_t sa, const void* B, int64_t sb, void* R,
                        int64_t sr, int count, cudaStream_t st) {
  if (count < 1 || m < 1 || n < 1) return;
  const int64_t mn = m * n;
  sa = sa > 0 ? sa : m * k, sb = sb > 0 ? sb : k * n, sr = sr > 0 ? sr : mn;
  cublas_ok(cublasSetStream(handle_, st), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  const auto* a = static_cast<const __half*>(A);
  const auto* b = static_cast<const __half*>(B);
  auto* r = static_cast<__half*>(R);
  const size_t cap = kScratchBytes / sizeof(float);
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (n, rows, k, B, A).
  if (static_cast<size_t>(mn) * static_cast<size_t>(count) <= cap) {
    float* t = scratch(static_cast<size_t>(mn) * count);
    cublas_ok(cublasGemmStridedBatchedEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                         static_cast<int>(k), &alpha, b, CUDA_R_16F, static_cast<int>(n), sb, a,
                                         CUDA_R_16F, static_cast<int>(k), sa, &beta, t, CUDA_R_32F, static_cast<int>(n),
                                         mn, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx (reference)");
    round_blocks(t, r, mn, sr, count, st);
    return;
  }
  // One call at a time, in blocks of rows that fit the scratch.
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(cap) / n);
  float* t = scratch(static_cast<size_t>(std::min(rows, m) * n));
  for (int i = 0; i < count; ++i)
    for (int64_t r0 = 0; r0 < m; r0 += rows) {
      const int64_t h = std::min(rows, m - r0);
      cublas_ok(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(h),
                             static_cast<int>(k), &alpha, b + i * sb, CUDA_R_16F, static_cast<int>(n),
                             a + i * sa + r0 * k, CUDA_R_16F, static_cast<int>(k), &beta, t, CUDA_R_32F,
                             static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx (reference)");
      round_blocks(t, r + i * sr + r0 * n, h * n, 0, 1, st);
    }
}

}  // namespace cudal2
