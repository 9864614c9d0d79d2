// Family lat_staged: lat's one-launch, one-wave split-K (partial tiles reduced across a thread-block
// cluster through distributed shared memory, programmatic dependent launch) over mma's
// shared-memory mainloop, for few output tiles with a long K. Each trick, in a line:
//  - operands staged through shared memory by cp.async, stages-1 k-blocks in flight per CTA: a
//    CTA's whole K slice is requested before its first mma when it fits (no pipeline ramp, one L2
//    latency instead of one per k-block as with lat's register-only loads, which measured about
//    1.1 us per extra k-block per warp), and a long slice streams with many bytes in flight;
//  - larger CTA tiles than lat's (up to 128x128): a few tiles re-read A and B from L2 less;
//  - K split across the CTAs of one cluster (the runtime knob `splits`, up to 16): each CTA leaves
//    its fp32 partial tile in its own shared memory (the stage buffers, free after the mainloop),
//    and each rank sums one slice of the tile over all ranks, in rank order (deterministic, the
//    same bits whoever finishes first), every rank's load issued before the first add;
//  - no workspace, no arrival counters, no second kernel: the cluster barrier is the only
//    cross-CTA synchronization;
//  - PDL: index math before griddepcontrol.wait, and every CTA triggers the next launch at once
//    (a CTA owns one item).
// C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn", column-major "tn"), any M, N, K.
//   #include "lat_staged_gemm.cuh"
//   using cudal2_kernel = cudal2_lat_staged::Gemm<cudal2_lat_staged::Config<true, false, 32, 32, 64, 1, 1, 4, 8>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "lat_staged tn f32 tile=32x32x64 warps=1x1 kwarps=4 stages=8")
#pragma once
#include <cooperative_groups.h>

#include "cluster_sum.cuh"
#include "mma_gemm.cuh"
#include "pdl.cuh"

namespace cudal2_lat_staged {
namespace {
namespace cg = cooperative_groups;
using namespace cudal2_mma_common;
using namespace cudal2_pdl;
namespace plan = cudal2_plan;

// mma's knobs (layout, accumulator, CTA tile, warps along M and N, stages) and kwarps: warps
// sharing each warp tile, each taking every kwarps-th 16-wide k step of a stage, so each warp's
// mma chain per accumulator is kwarps times shorter and more warps issue loads. (Measured on the
// H100: it helped little; on few tiles the launch, the cluster and the store cost more than the
// mainloop, bench/results/h100/lat-staged/.)
template <bool kLayoutTN, bool kAccumF16, int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kWarpsK,
          int kStageCount>
struct Config : cudal2_mma::Config<kLayoutTN, kAccumF16, kTileM, kTileN, kTileK, kWarpsM, kWarpsN, kStageCount> {
  static constexpr int KW = kWarpsK;
};

template <class Cfg>
using Tile = cudal2_mma::Tile<Cfg>;

// Dynamic shared memory: the stage ring, which after the mainloop holds the k-warps' fp32 partial
// tiles.
template <class Cfg>
constexpr int smem_bytes() {
  return plan::lat_staged_smem_bytes(Cfg::BM, Cfg::BN, Cfg::BK, Cfg::kStages, Cfg::kTN, Cfg::KW);
}

template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(Tile<Cfg>::kThreads, 1) lat_staged_kernel(const typename Tile<Cfg>::Params p) {
  using T = Tile<Cfg>;
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, WM = T::WM, WN = T::WN, KW = T::KW, kStages = T::kStages;
  constexpr int kThreads = T::kThreads;
  constexpr int WTM = T::WTM, WTN = T::WTN, MI = T::MI, NI = T::NI;
  extern __shared__ __align__(128) unsigned char smem[];
  __half* sA = reinterpret_cast<__half*>(smem);
  __half* sB = sA + kStages * T::kAStage;

  launch_dependents();  // one item per CTA: the next kernel may launch now and wait for us
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int kw = warp / (WM * WN), pw = warp % (WM * WN);  // k-warp; warp within the M x N plane
  const int wm = pw / WN, wn = pw % WN;
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  // The z CTAs of a tile (one cluster) split its K tiles, balanced in whole tiles.
  const int splits = static_cast<int>(gridDim.z), rank = static_cast<int>(blockIdx.z);
  const auto kr = plan::split_k_range(p.k, BK, splits, rank);
  const int nt = static_cast<int>((kr.end - kr.begin + BK - 1) / BK);
  grid_dependency_wait();  // the previous kernel's writes (our A or B, perhaps) are visible now

  Acc<T::kF16> acc[MI][NI];
  T::template mainloop<kAligned>(p, sA, sB, m0, n0, kr.begin, nt, acc, tid, wm, wn, lane, kw);

  float4 out[MI][NI];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) out[mi][ni] = acc[mi][ni].get();

  if (KW == 1 && splits == 1) {  // the whole grid takes this branch or none of it
    const int64_t r0 = m0 + wm * WTM + (lane >> 2), c0 = n0 + wn * WTN + (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) store_c(p.C, p.m, p.n, r0 + mi * 16, c0 + ni * 8, out[mi][ni], p.c_vec);
    return;
  }

  // The k-warps' partial tiles in fragment order, [kw][pw][mi * NI + ni][lane], over the stage
  // ring: every copy has landed (the trailing groups are empty) and every warp is past its last
  // ldmatrix. The CTA's sum (k-warps added in order) then goes to slot 0, entry by entry.
  constexpr int kEntries = BM * BN / 4;
  cp_async_wait<0>();
  __syncthreads();
  float4* red = reinterpret_cast<float4*>(smem);
#pragma unroll
  for (int j = 0; j < MI * NI; ++j) red[kw * kEntries + (pw * MI * NI + j) * 32 + lane] = out[j / NI][j % NI];
  auto store_entry = [&](int e, float4 v) {
    store_fragment_entry<MI, NI, WN, WTM, WTN>(p.C, p.m, p.n, m0, n0, e, v, p.c_vec);
  };
  if constexpr (KW > 1) {
    __syncthreads();
    for (int e = tid; e < kEntries; e += kThreads) {
      float4 v[KW];
#pragma unroll
      for (int q = 0; q < KW; ++q) v[q] = red[q * kEntries + e];
      float4 s = v[0];
#pragma unroll
      for (int q = 1; q < KW; ++q) s = s + v[q];
      if (splits == 1)
        store_entry(e, s);
      else
        red[e] = s;
    }
    if (splits == 1) return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  // Rank r sums entries [r * per, (r + 1) * per) of the tile over every rank, in rank order.
  const int per = (kEntries + splits - 1) / splits;
  const int e0 = rank * per, e1 = min(kEntries, (rank + 1) * per);
  for (int e = e0 + tid; e < e1; e += kThreads)
    store_entry(e, cudal2_cluster_sum::cluster_sum<plan::kMaxLatSplits>(cluster, red + e, splits));
  cluster.sync();  // this CTA's shared memory stays until every rank has read it
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  using T = Tile<Cfg>;
  using Params = typename T::Params;
  static constexpr bool kTN = T::kTN;
  static constexpr int BM = T::BM, BN = T::BN, BK = T::BK, kThreads = T::kThreads, kSmem = smem_bytes<Cfg>();
  static_assert(kSmem <= plan::kSmemBudget, "lat_staged: stages do not fit in shared memory");

  // z: the CTAs splitting K, one cluster; fewer where K has fewer tiles than splits.
  static plan::Grid grid_of(const cudal2_gemm_args& a) {
    return plan::grid(a.m, a.n, a.k, BM, BN, BK, a.splits < 1 ? 1 : a.splits);
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "lat_staged kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits < 1 || a.splits > plan::kMaxLatSplits) return "lat_staged kernels take splits=1..16 (one cluster)";
    if (!plan::grid_fits(grid_of(a))) return "too many M tiles for the grid (at most 65535)";
    return nullptr;
  }

  // The 16-byte cp.async path needs every row of A and B to start 16-byte aligned.
  static bool aligned(const cudal2_gemm_args& a) { return cudal2_shim::rows_16b_aligned(a, kTN); }

  template <bool kAligned>
  static cudaError_t launch(const Params& p, const plan::Grid& g, cudaStream_t s) {
    auto* kernel = lat_staged_kernel<Cfg, kAligned>;
    // Once per artifact and path: not stream operations.
    static const cudaError_t smem_ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (smem_ok != cudaSuccess) return smem_ok;
    if (g.z > 8) {
      // Clusters of more than 8 CTAs are "non-portable": allowed per kernel.
      static const cudaError_t allowed =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
      if (allowed != cudaSuccess) return allowed;
    }
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(g.x), unsigned(g.y), unsigned(g.z));
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = kSmem;
    cfg.stream = s;
    cudaLaunchAttribute at[2];
    unsigned n_at = 0;
    if (g.z > 1) add_cluster_attribute(at, n_at, 1, 1, static_cast<unsigned>(g.z));
    add_pdl_attribute(at, n_at);
    cfg.attrs = at;
    cfg.numAttrs = n_at;
    return cudaLaunchKernelEx(&cfg, kernel, p);
  }

  static size_t workspace_size(const cudal2_gemm_args&) { return 0; }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    const auto g = grid_of(a);
    Params p{};
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.splits = static_cast<int>(g.z);
    p.c_vec = a.n % 2 == 0 && reinterpret_cast<uintptr_t>(a.C) % 4 == 0;
    auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = aligned(a) ? launch<true>(p, g, s) : launch<false>(p, g, s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_lat_staged
