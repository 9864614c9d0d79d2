// The 16-byte streaming load of the read-bound kernels: read-only (.nc), not kept in L1 (each
// byte is read once), cached in L2 as usual. The read-limit kernel (measure/read_limit.cu) and the
// stream_rows and stream_sweep kernels read with it; stream_gemm.cuh keeps its own variants (L2
// sector and eviction hints, chosen by a template argument).
#pragma once
#include <cstdint>

namespace cudal2_ld {

__device__ __forceinline__ uint4 ld_stream16(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

// The same for 4 * W bytes (W = 1, 2 or 4 32-bit words), into w[0..W).
template <int W>
__device__ __forceinline__ void ld_stream_words(const void* p, uint32_t (&w)[W]) {
  static_assert(W == 1 || W == 2 || W == 4, "ld_stream_words: 1, 2 or 4 words");
  if constexpr (W == 4) {
    const uint4 r = ld_stream16(p);
    w[0] = r.x, w[1] = r.y, w[2] = r.z, w[3] = r.w;
  } else if constexpr (W == 2) {
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];\n" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(w[0]) : "l"(p));
  }
}

// B's loads of the stream_sweep kernels (kKeep 0: ld_stream16 / ld_stream_words above; 1: the
// same without L1::no_allocate). The lines L1::no_allocate loads bring into the L2 do not stay
// there for the next call: H200, TN weights of 26-34 MB called back to back were read from DRAM
// on every call unless another kernel had just loaded them, and from the L2 with kKeep 1
// (bench/results/h200/bandwidth/keep/).
template <int kKeep>
__device__ __forceinline__ uint4 ld_weights16(const void* p) {
  static_assert(kKeep == 0 || kKeep == 1, "ld_weights16: keep 0 or 1");
  if constexpr (kKeep == 0) {
    return ld_stream16(p);
  } else {
    uint4 r;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
  }
}

template <int kKeep, int W>
__device__ __forceinline__ void ld_weights_words(const void* p, uint32_t (&w)[W]) {
  static_assert(kKeep == 0 || kKeep == 1, "ld_weights_words: keep 0 or 1");
  if constexpr (kKeep == 0) {
    ld_stream_words<W>(p, w);
  } else if constexpr (W == 4) {
    const uint4 r = ld_weights16<1>(p);
    w[0] = r.x, w[1] = r.y, w[2] = r.z, w[3] = r.w;
  } else if constexpr (W == 2) {
    asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];\n" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
  } else {
    asm volatile("ld.global.nc.u32 %0, [%1];\n" : "=r"(w[0]) : "l"(p));
  }
}

}  // namespace cudal2_ld
