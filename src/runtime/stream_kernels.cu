// The `stream` kernels every build of libcudal2_runtime carries, whatever its tables: the runtime's
// rule (runtime/stream_rule.hpp) runs bandwidth-bound shapes that no table holds on them, on any
// sm_90 GPU. The register pipeline (stream_gemm.cuh): one configuration per accumulator, the one
// that won most of the exploration's shapes; the bulk pipeline (stream_bulk_gemm.cuh): 8, 16 and
// 32 tokens per accumulator, the ring as deep as shared memory holds (docs/kernels-stream.md).
#include "stream_bulk_gemm.cuh"
#include "stream_gemm.cuh"
#include "stream_portfolio.h"

namespace {

// Config<TN, F16 accumulation, token tiles, row tiles a warp, warps along rows, k-warps, stages>, and
// the canonical spec text (codegen/family_stream.cpp) of the same kernel.
#define CUDAL2_STREAM_CONFIGS(X)                                                          \
  X(true, false, 1, 2, 2, 4, 2, "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2") \
  X(true, true, 1, 2, 2, 4, 2, "stream tn f16 tile=8x64x64 warps=1x2 kwarps=4 stages=2")

// The bulk pipeline's configurations: Config<F16 accumulation, token tiles, K chunks a stage, stages>.
#define CUDAL2_STREAM_BULK_CONFIGS(X)                                               \
  X(false, 1, 4, 6, "stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=6")      \
  X(true, 1, 4, 6, "stream tn f16 tile=8x64x256 warps=1x1 kwarps=4 stages=6")       \
  X(false, 2, 4, 5, "stream tn f32 tile=16x64x256 warps=1x1 kwarps=4 stages=5")     \
  X(true, 2, 4, 5, "stream tn f16 tile=16x64x256 warps=1x1 kwarps=4 stages=5")      \
  X(false, 4, 4, 4, "stream tn f32 tile=32x64x256 warps=1x1 kwarps=4 stages=4")     \
  X(true, 4, 4, 4, "stream tn f16 tile=32x64x256 warps=1x1 kwarps=4 stages=4")

template <class G>
int can_implement(const cudal2_gemm_args* a, char* err, size_t len) {
  return cudal2_shim::answer(G::refusal(*a), err, len);
}
template <class G>
size_t workspace_size(const cudal2_gemm_args* a) {
  return G::workspace_size(*a);
}
template <class G>
int run(const cudal2_gemm_args* a, void* stream, char* err, size_t len) {
  return cudal2_shim::answer(G::run(*a, stream), err, len);
}
int one_resident() { return 1; }  // the bulk pipeline's ring takes an SM's shared memory
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

#define CUDAL2_STREAM_GEMM(tn, f16, nt, mt, wr, wk, d) cudal2_stream::Gemm<cudal2_stream::Config<tn, f16, nt, mt, wr, wk, d>>
#define CUDAL2_STREAM_ENTRY(tn, f16, nt, mt, wr, wk, d, text)                                    \
  cudal2_stream_kernel{text,                                                                     \
                       tn,                                                                       \
                       f16,                                                                      \
                       8 * (nt),                                                                 \
                       16 * (mt) * (wr),                                                         \
                       wk,                                                                       \
                       can_implement<CUDAL2_STREAM_GEMM(tn, f16, nt, mt, wr, wk, d)>,            \
                       workspace_size<CUDAL2_STREAM_GEMM(tn, f16, nt, mt, wr, wk, d)>,           \
                       run<CUDAL2_STREAM_GEMM(tn, f16, nt, mt, wr, wk, d)>,                      \
                       resident<cudal2_stream::Config<tn, f16, nt, mt, wr, wk, d>>,              \
                       0},
#define CUDAL2_STREAM_BULK_GEMM(f16, nt, ch, s) cudal2_stream_bulk::Gemm<cudal2_stream_bulk::Config<f16, nt, ch, s>>
#define CUDAL2_STREAM_BULK_ENTRY(f16, nt, ch, s, text)                          \
  cudal2_stream_kernel{text,                                                    \
                       1,                                                       \
                       f16,                                                     \
                       8 * (nt),                                                \
                       64,                                                      \
                       ch,                                                      \
                       can_implement<CUDAL2_STREAM_BULK_GEMM(f16, nt, ch, s)>,  \
                       workspace_size<CUDAL2_STREAM_BULK_GEMM(f16, nt, ch, s)>, \
                       run<CUDAL2_STREAM_BULK_GEMM(f16, nt, ch, s)>,            \
                       one_resident,                                            \
                       1},

const cudal2_stream_kernel kKernels[] = {CUDAL2_STREAM_CONFIGS(CUDAL2_STREAM_ENTRY)
                                             CUDAL2_STREAM_BULK_CONFIGS(CUDAL2_STREAM_BULK_ENTRY)};

}  // namespace

extern "C" const cudal2_stream_kernel* cudal2_rt_stream_kernels(int* count) {
  *count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}
