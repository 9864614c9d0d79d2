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

}  // namespace cudal2_ld
