// The `stream` kernels every build of libcudal2_runtime carries, whatever its tables: the runtime's
// rule (runtime/stream_rule.hpp) runs bandwidth-bound shapes that no table holds on them, on any
// sm_90 GPU, taking the first of the list below that runs a shape in one wave. Per accumulator:
//  - 16 tokens a CTA, four CTAs an SM: the configuration that measured fastest on the exploration
//    shapes (docs/kernels-stream.md). It serves 1-8 tokens too, ahead of the 8-token kernel that
//    did before (H200, 1x14336x4096 back to back: 30.5 against 31.5 us; 1x28672x4096 60.9 against
//    62.6; bench/results/h200/bandwidth/loads/): idle MMA lanes cost nothing where the weights'
//    bytes set the time, and its CTAs keep more warps streaming.
//  - 8 tokens and 64 B rows a CTA, three CTAs an SM: weights of up to ~25000 rows at 1-8 tokens,
//    for which the first would need a second wave (H200, exploration layer 1x18944x3584: 1.16 of
//    auto-tuning back to back, 1.14 chained; bench/results/h200/bandwidth/lean/).
//  - stream_sweep, 8 tokens and 16 B rows a CTA of 8 warps, two batches of two K steps in flight a
//    warp (pipelined), three CTAs an SM: the sweep band's (weights the L2 holds,
//    runtime/stream_rule.hpp), the fastest single configuration of the exploration, and the same
//    with CTAs of 4 warps, six an SM, close behind it, for row tiles that the first deals unevenly
//    over the SMs (bench/results/h200/bandwidth/sweep/, pipelined/).
//  - stream_sweep, 16, 32 and 64 tokens and 32 B rows a CTA of 4 warps: the sweep band above 8 tokens
//    (bench/results/h200/bandwidth/tokens/).
// None lets the next kernel launch early (pdl=0): replayed back to back, an early launch's CTAs
// took SM slots while the kernel still streamed (H200: 1x14336x4096 33.9 us with PDL, 31.9
// without; the same with a kernel between).
#include "stream_gemm.cuh"
#include "stream_portfolio.h"
#include "stream_sweep_gemm.cuh"

namespace {

// Config<TN, F16 accumulation, token tiles, row tiles a warp, warps along rows, k-warps, stages, CTAs
// an SM, stages fetched ahead, PDL mode, load mode 0, split order>, and the canonical spec text
// (codegen/family_stream.cpp) of the same kernel. Split order 1 (interleaved K stages) measured
// ahead of contiguous ranges on exploration shapes the rule splits (16x4096x14336, H200, back to
// back 0.933 of auto-tuning against 0.878), but behind them on the held-out set (stream class:
// back to back 0.965 against 0.994, with an unrelated kernel between calls 1.052 against 1.089):
// its run-time stride costs 3-4% where nothing is split (bench/results/h200/bandwidth/loads/).
#define CUDAL2_STREAM_CONFIGS(X)                                                                                    \
  X(true, false, 2, 1, 2, 4, 1, 4, 0, 0, 0, "stream tn f32 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0") \
  X(true, true, 2, 1, 2, 4, 1, 4, 0, 0, 0, "stream tn f16 tile=16x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 pdl=0")  \
  X(true, false, 1, 1, 4, 2, 2, 3, 0, 0, 0, "stream tn f32 tile=8x64x64 warps=1x4 kwarps=2 stages=2 ctas=3 pdl=0")  \
  X(true, true, 1, 1, 4, 2, 2, 3, 0, 0, 0, "stream tn f16 tile=8x64x64 warps=1x4 kwarps=2 stages=2 ctas=3 pdl=0")

// The kernel C ABI's three calls over a family's Gemm<Cfg> (stream or stream_sweep).
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
// CTAs of the aligned stream kernel one SM holds at once (0 when the calculator fails).
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

#define CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order) \
  cudal2_stream::Config<tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, 0, order>
#define CUDAL2_STREAM_ENTRY(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order, text)                             \
  cudal2_stream_kernel{                                                                                            \
      text,                                                                                                        \
      tn,                                                                                                          \
      f16,                                                                                                         \
      8 * (nt),                                                                                                    \
      16 * (mt) * (wr),                                                                                            \
      wk,                                                                                                          \
      can_implement<cudal2_stream::Gemm<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order)>>,  \
      workspace_size<cudal2_stream::Gemm<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order)>>, \
      run<cudal2_stream::Gemm<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order)>>,            \
      resident<CUDAL2_STREAM_CFG(tn, f16, nt, mt, wr, wk, d, ctas, ahead, pdl, order)>,                            \
      0},

// The sweep band's kernels (stream_sweep_gemm.cuh): Config<row tiles a warp, token tiles, warps,
// steps in flight, CTAs an SM, PDL 0, pipelined, warp rows 0, NN>, in the rule's order of
// preference; the 16-, 32- and 64-token ones (a warp over 32 rows) for the band above 8 tokens.
// NN (B row-major): 32 columns a warp for weights up to 8 MiB, 64 for weights beyond the L2
// (runtime/stream_rule.hpp, bench/results/h200/bandwidth/nn/). Last, the keep variants (keep=1: B's
// lines stay in the L2) of the TN 8- and 16-token kernels, which the rule runs for warm weights.
#define CUDAL2_SWEEP_CFG(mt, nt, warps, steps, ctas, nn, keep) \
  cudal2_stream_sweep::Config<mt, nt, warps, steps, ctas, 0, 1, 0, nn, keep>
#define CUDAL2_SWEEP_GEMM(mt, nt, warps, steps, ctas, nn, keep) \
  cudal2_stream_sweep::Gemm<CUDAL2_SWEEP_CFG(mt, nt, warps, steps, ctas, nn, keep)>
#define CUDAL2_SWEEP_KEEP_ENTRY(mt, nt, warps, steps, ctas, nn, keep, text)        \
  cudal2_stream_kernel {                                                           \
    text, !(nn), 0, CUDAL2_SWEEP_CFG(mt, nt, warps, steps, ctas, nn, keep)::kToks, \
        CUDAL2_SWEEP_CFG(mt, nt, warps, steps, ctas, nn, keep)::kRows, warps,      \
        can_implement<CUDAL2_SWEEP_GEMM(mt, nt, warps, steps, ctas, nn, keep)>,    \
        workspace_size<CUDAL2_SWEEP_GEMM(mt, nt, warps, steps, ctas, nn, keep)>,   \
        run<CUDAL2_SWEEP_GEMM(mt, nt, warps, steps, ctas, nn, keep)>,              \
        CUDAL2_SWEEP_GEMM(mt, nt, warps, steps, ctas, nn, keep)::resident, 1, keep \
  }
#define CUDAL2_SWEEP_ENTRY(mt, nt, warps, steps, ctas, nn, text) \
  CUDAL2_SWEEP_KEEP_ENTRY(mt, nt, warps, steps, ctas, nn, 0, text)

const cudal2_stream_kernel kKernels[] = {
    CUDAL2_STREAM_CONFIGS(CUDAL2_STREAM_ENTRY)
        CUDAL2_SWEEP_ENTRY(1, 1, 8, 2, 3, 0, "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1"),
    CUDAL2_SWEEP_ENTRY(1, 1, 4, 2, 6, 0, "stream_sweep tn f32 tile=8x16x32 kwarps=4 stages=2 ctas=6 pipe=1"),
    CUDAL2_SWEEP_ENTRY(2, 2, 4, 2, 3, 0, "stream_sweep tn f32 tile=16x32x32 kwarps=4 stages=2 ctas=3 pipe=1"),
    CUDAL2_SWEEP_ENTRY(2, 4, 4, 2, 2, 0, "stream_sweep tn f32 tile=32x32x32 kwarps=4 stages=2 ctas=2 pipe=1"),
    CUDAL2_SWEEP_ENTRY(2, 8, 4, 1, 2, 0, "stream_sweep tn f32 tile=64x32x32 kwarps=4 stages=1 ctas=2 pipe=1"),
    CUDAL2_SWEEP_ENTRY(2, 1, 4, 2, 4, 1, "stream_sweep nn f32 tile=8x32x32 kwarps=4 stages=2 ctas=4 pipe=1"),
    CUDAL2_SWEEP_ENTRY(4, 1, 4, 1, 3, 1, "stream_sweep nn f32 tile=8x64x32 kwarps=4 stages=1 ctas=3 pipe=1"),
    CUDAL2_SWEEP_KEEP_ENTRY(1, 1, 8, 2, 3, 0, 1,
                            "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1 keep=1"),
    CUDAL2_SWEEP_KEEP_ENTRY(1, 1, 4, 2, 6, 0, 1,
                            "stream_sweep tn f32 tile=8x16x32 kwarps=4 stages=2 ctas=6 pipe=1 keep=1"),
    CUDAL2_SWEEP_KEEP_ENTRY(2, 2, 4, 2, 3, 0, 1,
                            "stream_sweep tn f32 tile=16x32x32 kwarps=4 stages=2 ctas=3 pipe=1 keep=1")};

}  // namespace

extern "C" const cudal2_stream_kernel* cudal2_rt_stream_kernels(int* count) {
  *count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}
