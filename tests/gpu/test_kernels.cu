#include <cuda_fp16.h>
#include <fmt/format.h>

#include "measure/device.hpp"
#include "test_kernels.hpp"

namespace cudal2::testing {

namespace {

// One thread per output element, fp32 accumulation.
__global__ void naive_gemm(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, bool b_col,
                           int defect) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n) return;
  if (defect == static_cast<int>(Defect::SkipTile) && i >= m / 2 && i < m / 2 + 16 && j < 16) return;
  float acc = 0.f;
  for (int64_t kk = 0; kk < k; ++kk)
    acc += __half2float(A[i * k + kk]) * __half2float(b_col ? B[j * k + kk] : B[kk * n + j]);
  const bool last = i == m - 1 && j == n - 1;
  if (defect == static_cast<int>(Defect::WrongValue) && last) acc += 1.f;
  if (defect == static_cast<int>(Defect::ProducesNaN) && last) acc = __int_as_float(0x7fc00000);
  C[i * n + j] = __float2half_rn(acc);
  if (defect == static_cast<int>(Defect::OutOfBounds) && last) C[m * n + 7] = __float2half_rn(1.f);
}

class NaiveRunner final : public Method {
 public:
  NaiveRunner(Layout l, Defect d) : layout_(l), defect_(d) {}
  std::string name() const override { return fmt::format("naive-{}-{}", to_string(layout_), defect_name(defect_)); }
  Layout layout() const override { return layout_; }
  Accum accum() const override { return Accum::F32; }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t) override {
    shape_ = s;
    ops_ = ops;
  }
  void run(cudaStream_t s) override {
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((shape_.n + 31) / 32), static_cast<unsigned>((shape_.m + 7) / 8));
    naive_gemm<<<grid, block, 0, s>>>(static_cast<const __half*>(ops_.A), static_cast<const __half*>(ops_.B),
                                      static_cast<__half*>(ops_.C), shape_.m, shape_.n, shape_.k, layout_ == Layout::TN,
                                      static_cast<int>(defect_));
    CUDAL2_CUDA(cudaGetLastError());
    if (defect_ == Defect::Syncs) CUDAL2_CUDA(cudaStreamSynchronize(s));
  }

 private:
  Layout layout_;
  Defect defect_;
  Shape shape_;
  Operands ops_;
};

}  // namespace

const char* defect_name(Defect d) {
  switch (d) {
    case Defect::None:
      return "ok";
    case Defect::OutOfBounds:
      return "oob";
    case Defect::WrongValue:
      return "wrong";
    case Defect::SkipTile:
      return "skiptile";
    case Defect::ProducesNaN:
      return "nan";
    case Defect::Syncs:
      return "syncs";
  }
  return "?";
}

MethodPtr make_naive(Layout layout, Defect defect) { return std::make_unique<NaiveRunner>(layout, defect); }

}  // namespace cudal2::testing
