#pragma once
// The GPU reference every check compares a method's output with: C = A*B, fp16 operands, fp32
// accumulation, rounded to fp16 once, here. cuBLAS computes it into an fp32 output: asked for an
// fp16 output, cuBLAS may split K and add the splits in the output's type, so the reference itself
// carries fp16 rounding of partial sums (measured on an H200, 5x4101x4104: reference elements on a
// 1/32 grid, 0.06-0.09 from the value an fp32 accumulation gives, beyond the fp32 tolerance, and
// honest fp32 candidates charged with wrong-result for it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "measure/device.hpp"

namespace cudal2 {

class ReferenceGemm {
 public:
  ReferenceGemm();
  ~ReferenceGemm();
  ReferenceGemm(const ReferenceGemm&) = delete;
  ReferenceGemm& operator=(const ReferenceGemm&) = delete;

  // For i < count: R_i = A_i * B_i, A_i row-major m x k at A + i*sa elements, B_i row-major k x n
  // at B + i*sb, R_i row-major m x n fp16 at R + i*sr. Strides of 0 mean packed.
  void run(int64_t m, int64_t n, int64_t k, const void* A, int64_t sa, const void* B, int64_t sb, void* R, int64_t sr,
           int count, cudaStream_t st);

  // fp32 scratch the reference is computed in before rounding: larger outputs go in row blocks.
  static constexpr size_t kScratchBytes = size_t(256) << 20;

 private:
  float* scratch(size_t floats);
  cublasHandle_t handle_ = nullptr;
  float* tmp_ = nullptr;
  size_t tmp_floats_ = 0;
};

}  // namespace cudal2
