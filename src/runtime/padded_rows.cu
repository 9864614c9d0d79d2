// The two kernels of runtime/padded_rows.hpp. C's rows are not 16-byte aligned; A's, B's and the
// padded C's are (K % 8 == 0, ldc % 8 == 0).
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

// (Declared for the host side in runtime/padded_rows.hpp; device code does not include src/.)

namespace {

constexpr int kMaxTail = 7;  // columns past the last whole 8

// Columns [n0, n0 + tail) of the padded C: one CTA a row of A, 16 bytes of it a thread a step, the
// same 16 bytes of each of B's last rows (read by every CTA: L1 and L2 hits), summed over the CTA
// in a fixed order (the same bits every call). A warp a row left too few warps in flight when M is
// small (512x4101x4096: 25 us for the tail, H200).
constexpr int kTailThreads = 256;
__global__ void __launch_bounds__(kTailThreads)
    tail_kernel(const __half* __restrict__ A, const __half* __restrict__ B, __half* padded, int64_t ldc, int64_t m,
                int64_t n0, int tail, int64_t k) {
  constexpr int kWarps = kTailThreads / 32;
  __shared__ float part[kWarps][kMaxTail];
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  for (int64_t row = blockIdx.x; row < m; row += gridDim.x) {
    float acc[kMaxTail] = {};
    const __half* a = A + row * k;
    for (int64_t kk = 8 * t; kk < k; kk += 8 * kTailThreads) {
      const uint4 av = __ldg(reinterpret_cast<const uint4*>(a + kk));
      const __half2* ah = reinterpret_cast<const __half2*>(&av);
#pragma unroll
      for (int j = 0; j < kMaxTail; ++j) {
        if (j >= tail) break;
        const uint4 bv = __ldg(reinterpret_cast<const uint4*>(B + (n0 + j) * k + kk));
        const __half2* bh = reinterpret_cast<const __half2*>(&bv);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 x = __half22float2(ah[e]), y = __half22float2(bh[e]);
          acc[j] += x.x * y.x + x.y * y.y;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kMaxTail; ++j) {
      if (j >= tail) break;
      float v = acc[j];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) part[warp][j] = v;
    }
    __syncthreads();
    if (t < tail) {
      float v = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) v += part[w][t];
      padded[row * ldc + n0 + t] = __float2half_rn(v);
    }
    __syncthreads();  // part is written again for the next row
  }
}

// Rows [row0, row0 + rows) of C (m x n values, rows packed: C is 16-byte aligned, its rows are
// not) from the padded C's rows 0..rows-1. Each thread writes one aligned group of 8 values of C,
// with one 16-byte store when the group lies wholly in the range (a group at either end is shared
// with the rows around it: those values one by one), gathering them from the padded C (just
// written, so from L2).
__global__ void copy_rows_kernel(const __half* __restrict__ src, int64_t ldc, __half* __restrict__ C, int64_t row0,
                                 int64_t rows, int64_t n) {
  const int64_t e0 = row0 * n, e1 = (row0 + rows) * n;  // C's elements [e0, e1)
  const int64_t g1 = (e1 + 7) / 8;
  for (int64_t g = e0 / 8 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; g < g1;
       g += int64_t(gridDim.x) * blockDim.x) {
    const int64_t lo = 8 * g > e0 ? 8 * g : e0, hi = 8 * g + 8 < e1 ? 8 * g + 8 : e1;
    int64_t row = lo / n, col = lo - row * n;
    row -= row0;
    if (lo == 8 * g && hi == 8 * g + 8) {
      alignas(16) __half v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        v[j] = src[row * ldc + col];
        if (++col == n) col = 0, ++row;
      }
      *reinterpret_cast<uint4*>(C + lo) = *reinterpret_cast<const uint4*>(v);
    } else {
      for (int64_t e = lo; e < hi; ++e) {
        C[e] = src[row * ldc + col];
        if (++col == n) col = 0, ++row;
      }
    }
  }
}

unsigned blocks_for(int64_t threads, int64_t cap) {
  const int64_t b = (threads + 255) / 256;
  return static_cast<unsigned>(b < cap ? b : cap);
}

}  // namespace

namespace cudal2::rt {

cudaError_t finish_padded_c(const void* A, const void* B, void* padded, int64_t ldc, void* C, int64_t row0,
                            int64_t rows, int64_t n, int64_t k, cudaStream_t s) {
  const int64_t n0 = n / 8 * 8;
  auto* p = static_cast<__half*>(padded);
  if (n0 < n && rows > 0)
    tail_kernel<<<static_cast<unsigned>(rows < 65535 ? rows : 65535), kTailThreads, 0, s>>>(
        static_cast<const __half*>(A), static_cast<const __half*>(B), p, ldc, rows, n0, static_cast<int>(n - n0), k);
  if (rows * n > 0)
    copy_rows_kernel<<<blocks_for((rows * n + 15) / 8, 8192), 256, 0, s>>>(p, ldc, static_cast<__half*>(C), row0, rows,
                                                                           n);
  return cudaGetLastError();
}

}  // namespace cudal2::rt
