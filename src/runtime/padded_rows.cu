// The copy of runtime/padded_rows.hpp: C's m x n fp16 values, rows packed (C is 16-byte aligned,
// its rows are not), from a buffer of m rows of ldc elements. Each thread writes 8 consecutive
// values of C with one 16-byte store, gathering them from src (just written, so from L2).
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

// (Declared for the host side in runtime/padded_rows.hpp; device code does not include src/.)

namespace {

__global__ void copy_rows_kernel(const __half* __restrict__ src, int64_t ldc, __half* __restrict__ C, int64_t m,
                                 int64_t n) {
  const int64_t total = m * n;
  for (int64_t i0 = 8 * (blockIdx.x * int64_t(blockDim.x) + threadIdx.x); i0 < total;
       i0 += 8 * int64_t(gridDim.x) * blockDim.x) {
    int64_t row = i0 / n, col = i0 - row * n;
    if (i0 + 8 <= total) {
      alignas(16) __half v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        v[j] = src[row * ldc + col];
        if (++col == n) col = 0, ++row;
      }
      *reinterpret_cast<uint4*>(C + i0) = *reinterpret_cast<const uint4*>(v);
    } else {
      for (int64_t i = i0; i < total; ++i) {
        C[i] = src[row * ldc + col];
        if (++col == n) col = 0, ++row;
      }
    }
  }
}

}  // namespace

namespace cudal2::rt {

cudaError_t copy_padded_rows(const void* src, int64_t ldc, void* C, int64_t m, int64_t n, cudaStream_t s) {
  const int64_t chunks = (m * n + 7) / 8;
  if (chunks == 0) return cudaSuccess;
  const int64_t blocks = (chunks + 255) / 256;
  copy_rows_kernel<<<static_cast<unsigned>(blocks < 8192 ? blocks : 8192), 256, 0, s>>>(
      static_cast<const __half*>(src), ldc, static_cast<__half*>(C), m, n);
  return cudaGetLastError();
}

}  // namespace cudal2::rt
