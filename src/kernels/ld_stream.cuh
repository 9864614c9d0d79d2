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

}  // namespace cudal2_ld
