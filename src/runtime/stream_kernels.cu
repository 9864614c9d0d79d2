// The `stream` kernels every build of libcudal2_runtime carries, whatever its tables: the runtime's
// rule (runtime/stream_rule.hpp) runs bandwidth-bound shapes that no table holds on them, on any
// sm_90 GPU: one configuration per token tile (8, 16) and accumulator, the ones that measured
// fastest on the exploration shapes (docs/kernels-stream.md). None lets the next kernel launch
// early (pdl=0): replayed back to back, an early launch's CTAs took SM slots while the kernel still
// streamed (H200: 1x14336x4096 33.9 us with PDL, 31.9 without; the same with a kernel between).
#include "stream_gemm.cuh"
#include "stream_portfolio.h"

namespace {

// Config<TN, F16 accumulation, token tiles, row tiles a warp, warps along rows, k-warps, stages, CTAs
// an SM, stages fetched ahead, PDL mode>, and the canonical spec text (codegen/family_stream.cpp) of
// the same kernel.
#define CUDAL2_STREAM_CONFIGS(X)                                                                                 \
  X(true, false, 1, 2, 2, 4, 2, 1, 0, 0, "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 pdl=0")         \
  X(true, true, 1, 2, 2, 4, 2, 1, 0, 0, "stream tn f16 tile=8x64x64 warps=1x2 kwarps=4 stages=2 pdl=0")          \
  X(true, false, 2, 1, 2, 4, 1, 4, 0, 0, "stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0") \
  X(true, true, 2, 1, 2, 4, 1, 4, 0, 0, "stream tn f16 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0")

template <class Cfg>
int can_implement(const cudal2_gemm_args* a, char* err, size_t len) {
  return cudal2_shim::answer(cudal2_stream::Gemm<Cfg>::refusal(*a), err, len);
}
template <class Cfg>
size_t workspace_size(const cudal2_gemm_args* a) {
  return cudal2_stream::Gemm<Cfg>::workspace_size(*a);
}
template <class Cfg>
int run(const cudal2_gemm_args* a, void* stream, char* err, size_t len) {
  return cudal2_shim::answer(cudal2_stream::Gemm<Cfg>::run(*a, stream), err, len);
}
// CTAs of the aligned kernel one SM holds at once (0 when the calculator fails).
template <class Cfg>
int resident() {
  int n = 0;
  auto* kernel = cudal2_stream::stream_gemm_kernel<Cfg, true>;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, Cfg::kThreads, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

#define CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl) \
  cudal2_stream::Config<tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl>
#define CUDAL2_STREAM_ENTRY(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, text)                         \
  cudal2_stream_kernel{text,                                                                            \
                       tn,                                                                              \
                       f16,                                                                             \
                       8 * (nt),                                                                        \
                       16 * (mt) * (wr),                                                                \
                       wk,                                                                              \
                       can_implement<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl)>,  \
                       workspace_size<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl)>, \
                       run<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl)>,            \
                       resident<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl)>},

const cudal2_stream_kernel kKernels[] = {CUDAL2_STREAM_CONFIGS(CUDAL2_STREAM_ENTRY)};

}  // namespace

extern "C" const cudal2_stream_kernel* cudal2_rt_stream_kernels(int* count) {
  *count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}
