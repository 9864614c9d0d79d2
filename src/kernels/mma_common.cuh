// Device helpers shared by the `mma` and `tiny` families: PTX wrappers (cp.async, ldmatrix,
// movmatrix, mma.sync m16n8k16), bounds-checked global loads, one accumulator tile, the C store.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

// Internal linkage for everything (see sm90_cutlass_gemm.cuh: several artifacts share a process).
namespace cudal2_mma_common {
namespace {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy through L2 only (.cg: tiles are reused from shared memory, not
// L1); a false `valid` copies no bytes and writes zeros, which is how edge tiles get padded.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Four 8x8 fp16 matrices from shared memory; lane i gives the row address of matrix i/8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
// Transposed: turns a row-major (k x n) B tile into the column-major fragments mma wants.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
// Transposes an 8x8 fp16 matrix held one 32-bit word per lane (register-only, no shared memory).
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x) {
  uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// One m16n8 accumulator tile. Lane (g = lane/4, t = lane%4) holds rows g and g+8, columns 2t
// and 2t+1: as fp32 {c0,c1,c2,c3} or as two fp16 pairs.
template <bool kF16>
struct Acc;
template <>
struct Acc<false> {
  float v[4] = {0.f, 0.f, 0.f, 0.f};
  __device__ __forceinline__ void mma(const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(v[0]), "+f"(v[1]), "+f"(v[2]), "+f"(v[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ float4 get() const { return make_float4(v[0], v[1], v[2], v[3]); }
};
template <>
struct Acc<true> {
  uint32_t v[2] = {0u, 0u};
  __device__ __forceinline__ void mma(const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
                 : "+r"(v[0]), "+r"(v[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ float4 get() const {
    const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&v[0]));
    const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&v[1]));
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
};

__device__ __forceinline__ float4 operator+(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

__device__ __forceinline__ unsigned short ld_u16(const __half* p) {
  return __ldg(reinterpret_cast<const unsigned short*>(p));
}

// Eight consecutive fp16 of row r, columns c..c+7, of a row-major rows x cols matrix (pitch =
// cols); zeros outside it. kAligned (cols % 8 == 0, c % 8 == 0, 16-byte aligned base): the eight
// are all in or all out, one 16-byte load. Otherwise one checked load per element.
template <bool kAligned>
__device__ __forceinline__ uint4 load8(const __half* p, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  if constexpr (kAligned) {
    if (r < rows && c < cols) return __ldg(reinterpret_cast<const uint4*>(p + r * cols + c));
    return make_uint4(0, 0, 0, 0);
  } else {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t c0 = c + 2 * j;
      const uint32_t lo = (r < rows && c0 < cols) ? ld_u16(p + r * cols + c0) : 0u;
      const uint32_t hi = (r < rows && c0 + 1 < cols) ? ld_u16(p + r * cols + c0 + 1) : 0u;
      w[j] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}
// Two consecutive fp16 (c even); the same rules with a 4-byte load.
template <bool kAligned>
__device__ __forceinline__ uint32_t load2(const __half* p, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  if constexpr (kAligned) {
    if (r < rows && c < cols) return __ldg(reinterpret_cast<const unsigned int*>(p + r * cols + c));
    return 0u;
  } else {
    const uint32_t lo = (r < rows && c < cols) ? ld_u16(p + r * cols + c) : 0u;
    const uint32_t hi = (r < rows && c + 1 < cols) ? ld_u16(p + r * cols + c + 1) : 0u;
    return lo | (hi << 16);
  }
}

// Writes one accumulator tile's values of this lane (rows r and r+8, columns c and c+1) to the
// row-major m x n fp16 C, skipping what falls outside. vec2: a 4-byte store per row pair.
__device__ __forceinline__ void store_c(__half* C, int64_t m, int64_t n, int64_t r, int64_t c, float4 v, bool vec2) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = r + 8 * h;
    if (row >= m) continue;
    const float x = h ? v.z : v.x, y = h ? v.w : v.y;
    __half* dst = C + row * n + c;
    if (vec2 && c + 1 < n) {
      *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
    } else {
      if (c < n) dst[0] = __float2half_rn(x);
      if (c + 1 < n) dst[1] = __float2half_rn(y);
    }
  }
}

// Stores entry e of a CTA's partial tile kept in fragment order: [warp][mi * NI + ni][lane], one
// float4 (an m16n8 accumulator tile's values of one lane) each, warps WN to a row of warp tiles of
// WTM x WTN, the CTA tile's corner at (row0, col0) of C. The layout lat and lat_staged reduce in.
template <int MI, int NI, int WN, int WTM, int WTN>
__device__ __forceinline__ void store_fragment_entry(__half* C, int64_t m, int64_t n, int64_t row0, int64_t col0, int e,
                                                     float4 v, bool vec2) {
  const int el = e & 31, j = (e >> 5) % (MI * NI), ew = e / (32 * MI * NI);
  const int64_t r = row0 + (ew / WN) * WTM + (j / NI) * 16 + (el >> 2);
  const int64_t c = col0 + (ew % WN) * WTN + (j % NI) * 8 + (el & 3) * 2;
  store_c(C, m, n, r, c, v, vec2);
}

}  // namespace
}  // namespace cudal2_mma_common
