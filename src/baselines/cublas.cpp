// cuBLAS: cublasGemmEx on row-major data. Row-major C = A*B is column-major C^T = B^T * A^T,
// so we call cuBLAS with the operands swapped: (n, m, k, B, A).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include "baselines/baselines.hpp"

namespace cudal2 {

namespace {

void cublas_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) throw MethodUnsupported(fmt::format("{}: {}", what, cublasGetStatusString(st)));
}

class CublasRunner final : public Method {
 public:
  CublasRunner(Layout layout, Accum accum) : layout_(layout), accum_(accum) {
    cublas_check(cublasCreate(&handle_), "cublasCreate");
  }
  ~CublasRunner() override { cublasDestroy(handle_); }

  std::string name() const override { return fmt::format("cublas-{}", to_string(layout_)); }
  Layout layout() const override { return layout_; }
  Accum accum() const override { return accum_; }

  void prepare(const Shape& shape, const Operands& ops, cudaStream_t s) override {
    shape_ = shape;
    ops_ = ops;
    // Our workspace, so cuBLAS never allocates inside a graph capture.
    cublas_check(cublasSetWorkspace(handle_, ops.workspace, ops.workspace_bytes), "cublasSetWorkspace");
    cublas_check(cublasSetStream(handle_, s), "cublasSetStream");
    stream_ = s;
  }

  void run(cudaStream_t s) override {
    if (s != stream_) {
      cublas_check(cublasSetStream(handle_, s), "cublasSetStream");
      stream_ = s;
    }
    const int m = static_cast<int>(shape_.m), n = static_cast<int>(shape_.n), k = static_cast<int>(shape_.k);
    // NN: B row-major KxN is column-major NxK (ld N), no transpose.
    // TN: B column-major KxN (ld K), transposed to give the NxK operand.
    const cublasOperation_t opB = layout_ == Layout::NN ? CUBLAS_OP_N : CUBLAS_OP_T;
    const int ldb = layout_ == Layout::NN ? n : k;
    cublasStatus_t st;
    if (accum_ == Accum::F32) {
      const float alpha = 1.0f, beta = 0.0f;
      st = cublasGemmEx(handle_, opB, CUBLAS_OP_N, n, m, k, &alpha, ops_.B, CUDA_R_16F, ldb, ops_.A, CUDA_R_16F, k,
                        &beta, ops_.C, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    } else {
      const __half alpha = __float2half(1.0f), beta = __float2half(0.0f);
      st = cublasGemmEx(handle_, opB, CUBLAS_OP_N, n, m, k, &alpha, ops_.B, CUDA_R_16F, ldb, ops_.A, CUDA_R_16F, k,
                        &beta, ops_.C, CUDA_R_16F, n, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
    }
    cublas_check(st, "cublasGemmEx");
  }

 private:
  Layout layout_;
  Accum accum_;
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  Shape shape_;
  Operands ops_;
};

}  // namespace

MethodPtr make_cublas(Layout layout, Accum accum) { return std::make_unique<CublasRunner>(layout, accum); }

}  // namespace cudal2
