// Family lat: a latency-first HGEMM for problems that finish in a few microseconds (the small
// class, K-heavy few-tile shapes), where launch, prologue, first-load latency and a second
// launch for split-K's reduction cost more than the multiply-adds. Each trick, in a line:
//  - one launch, one wave: a CTA owns one output tile (or one K slice of it); nothing loops
//    over tiles, so there is no scheduler and no pipeline ramp to hide;
//  - PDL: everything before griddepcontrol.wait (index math, the K range) overlaps the previous
//    kernel's tail, and every CTA triggers the next launch at once, so the next call's launch
//    latency overlaps this one's work (a CTA owns one item: nothing is left to starve);
//  - fragments straight from global memory (L2) into registers, the next k-block's loads (or
//    the next stages-1) in flight while the current one multiplies (the `tiny` mainloop,
//    tiny_gemm.cuh): no shared-memory staging, no barriers in the mainloop;
//  - K split without a second kernel: across a CTA's warps (kwarps, reduced through shared
//    memory) and across the CTAs of one thread-block cluster (the runtime knob `splits`, up to
//    16), whose partial tiles are reduced through distributed shared memory: each CTA of the
//    cluster sums one slice of the tile over all ranks, in rank order (deterministic), and
//    stores it;
//  - a few tiles and a long K need more CTAs than one cluster holds: splits 24..128 (multiples of
//    8) are groups of clusters of 8, 4 or 2 CTAs (the largest whose clusters are all resident at
//    once, asked of the occupancy calculator: clusters of 8 pack badly into the GPCs); each
//    cluster reduces through distributed shared memory as above, leaves its slice's sum in the
//    workspace, and the last cluster to arrive (an arrival counter per tile and slice) adds the
//    groups' sums in group order and stores C, so the bits do not depend on who finishes first
//    and no launch waits for another CTA to be resident;
//  - the cluster size is a launch attribute, not a template argument: one artifact serves every
//    split count, so the search tries them without a recompile.
// C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn", column-major "tn"), any M, N, K.
//   #include "lat_gemm.cuh"
//   using cudal2_kernel = cudal2_lat::Gemm<cudal2_lat::Config<true, false, 32, 32, 64, 1, 1, 4>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "lat tn f32 tile=32x32x64 warps=1x1 kwarps=4")
#pragma once
#include <cooperative_groups.h>

#include "cluster_sum.cuh"
#include "pdl.cuh"
#include "tiny_gemm.cuh"

namespace cudal2_lat {
namespace {
namespace cg = cooperative_groups;
using namespace cudal2_mma_common;
using namespace cudal2_pdl;
namespace plan = cudal2_plan;

// The compile-time knobs are tiny's (layout, accumulator, CTA tile, warps along M, N and K) and
// kStages: the k-blocks a warp keeps in flight in registers (2: the next one while the current one
// multiplies; more: a K-heavy warp's later loads overlap its first ones).
template <bool kLayoutTN, bool kAccumF16, int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kWarpsK,
          int kStages = 2>
struct Config : cudal2_tiny::Config<kLayoutTN, kAccumF16, kTileM, kTileN, kTileK, kWarpsM, kWarpsN, kWarpsK> {
  static constexpr int kDepth = kStages;
  static_assert(kStages >= 2 && kStages <= 8, "lat: 2..8 k-blocks in flight");
};

constexpr int kMaxClusterSplits = plan::kMaxLatSplits;
constexpr int kGroupCluster = plan::kLatGroupCluster;

// lat's own parameters: tiny's, and the workspace of grouped splits (arrival counters, then the
// groups' partial sums; plan::lat_workspace_bytes).
template <class Cfg>
struct LatParams : cudal2_tiny::Tile<Cfg>::Params {
  unsigned* counters;
  float4* partials;
  int group_cluster;  // CTAs per cluster when splits > 16
};

template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(cudal2_tiny::Tile<Cfg>::kThreads) lat_gemm_kernel(const LatParams<Cfg> p) {
  using T = cudal2_tiny::Tile<Cfg>;
  using Frags = typename T::Frags;
  constexpr bool kF16 = T::kF16;
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, WM = T::WM, WN = T::WN, KW = T::KW;
  constexpr int WTM = T::WTM, WTN = T::WTN, MI = T::MI, NI = T::NI, kThreads = T::kThreads;
  // Partial tiles in fragment order: slices 1..KW-1 hand theirs to slice 0 here, and slice 0
  // leaves the CTA's sum in red[0] for the cluster's other CTAs to read.
  constexpr int kSlots = KW > 1 ? KW - 1 : 1;
  __shared__ float4 red[kSlots][WM * WN][MI * NI][32];

  launch_dependents();  // one item per CTA: the next kernel may launch now and wait for us
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kw = warp / (WM * WN), pw = warp % (WM * WN);  // K slice; warp within the M x N plane
  const int wm = pw / WN, wn = pw % WN;
  const int64_t row0 = int64_t(blockIdx.y) * BM + wm * WTM, col0 = int64_t(blockIdx.x) * BN + wn * WTN;
  // This CTA's K iterations: the z CTAs of a tile split them, balanced in whole iterations. Up
  // to 16 splits are one cluster; more are groups of clusters of p.group_cluster.
  const int splits = static_cast<int>(gridDim.z), zi = static_cast<int>(blockIdx.z);
  const int csize = splits > kMaxClusterSplits ? p.group_cluster : splits;
  const int rank = zi % csize, group = zi / csize, groups = splits / csize;
  const int64_t iters = (p.k + BK - 1) / BK;
  const int64_t it0 = iters * zi / splits, it1 = iters * (zi + 1) / splits;
  grid_dependency_wait();  // the previous kernel's writes (our A or B, perhaps) are visible now

  Acc<kF16> acc[MI][NI];
  if constexpr (!kAligned) {
    for (int64_t it = it0 + kw; it < it1; it += KW) {
      Frags f;
      T::template load_frags<kAligned>(f, p.A, p.B, p.m, p.n, p.k, row0, col0, it * BK, lane);
      T::compute(f, acc);
    }
  } else if constexpr (Cfg::kDepth == 2) {
    if (it0 + kw < it1) {
      Frags cur;
      T::template load_frags<kAligned>(cur, p.A, p.B, p.m, p.n, p.k, row0, col0, (it0 + kw) * BK, lane);
      for (int64_t it = it0 + kw + KW; it < it1; it += KW) {
        Frags nxt;
        T::template load_frags<kAligned>(nxt, p.A, p.B, p.m, p.n, p.k, row0, col0, it * BK, lane);
        T::compute(cur, acc);
        cur = nxt;
      }
      T::compute(cur, acc);
    }
  } else {
    // A ring of D buffers, indexed by compile-time constants (the loop over d is unrolled), so it
    // stays in registers: D-1 k-blocks are in flight while one multiplies.
    constexpr int D = Cfg::kDepth;
    Frags buf[D];
#pragma unroll
    for (int d = 0; d < D - 1; ++d)
      if (it0 + kw + d * KW < it1)
        T::template load_frags<kAligned>(buf[d], p.A, p.B, p.m, p.n, p.k, row0, col0, (it0 + kw + d * KW) * BK, lane);
    for (int64_t base = it0 + kw; base < it1; base += int64_t(D) * KW) {
#pragma unroll
      for (int d = 0; d < D; ++d) {
        const int64_t it = base + d * KW;
        if (it >= it1) break;
        if (it + (D - 1) * KW < it1)
          T::template load_frags<kAligned>(buf[(d + D - 1) % D], p.A, p.B, p.m, p.n, p.k, row0, col0,
                                           (it + (D - 1) * KW) * BK, lane);
        T::compute(buf[d], acc);
      }
    }
  }

  float4 out[MI][NI];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) out[mi][ni] = acc[mi][ni].get();

  if constexpr (KW > 1) {
    // Slices 1..KW-1 hand their sums to slice 0, which adds them in slice order (deterministic).
    if (kw > 0)
#pragma unroll
      for (int j = 0; j < MI * NI; ++j) red[kw - 1][pw][j][lane] = out[j / NI][j % NI];
    __syncthreads();
    if (kw == 0)
#pragma unroll
      for (int s = 0; s < KW - 1; ++s)
#pragma unroll
        for (int j = 0; j < MI * NI; ++j) out[j / NI][j % NI] = out[j / NI][j % NI] + red[s][pw][j][lane];
  }

  if (splits == 1) {  // the whole grid takes this branch or none of it
    if (kw > 0) return;
    const int64_t r = row0 + (lane >> 2), c = col0 + (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) store_c(p.C, p.m, p.n, r + mi * 16, c + ni * 8, out[mi][ni], p.c_vec);
    return;
  }

  // Slice 0 only ever read and writes its own (pw, j, lane) entries of red, so it can overwrite
  // red[0] with the CTA's sum without a barrier; the cluster barrier publishes it.
  if (kw == 0)
#pragma unroll
    for (int j = 0; j < MI * NI; ++j) red[0][pw][j][lane] = out[j / NI][j % NI];
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  // Rank r sums entries [r * per, (r + 1) * per) of the tile over every rank, in rank order.
  constexpr int kEntries = WM * WN * MI * NI * 32;
  const int per = (kEntries + csize - 1) / csize;
  const int e0 = rank * per, e1 = min(kEntries, (rank + 1) * per);
  float4* mine = &red[0][0][0][0];
  // One entry summed over the cluster's ranks in rank order (cluster_sum.cuh).
  auto cluster_sum = [&](int e) {
    return cudal2_cluster_sum::cluster_sum<kMaxClusterSplits>(cluster, mine + e, csize);
  };
  auto store_entry = [&](int e, float4 s) {
    store_fragment_entry<MI, NI, WN, WTM, WTN>(p.C, p.m, p.n, int64_t(blockIdx.y) * BM, int64_t(blockIdx.x) * BN, e, s,
                                               p.c_vec);
  };
  if (groups == 1) {
    for (int e = e0 + static_cast<int>(threadIdx.x); e < e1; e += kThreads) store_entry(e, cluster_sum(e));
    cluster.sync();  // this CTA's shared memory stays until every rank has read it
    return;
  }

  // Grouped: this cluster's sum of the slice goes to the workspace (L2, not L1: another SM reads
  // it), then the slice's arrival counter; the group that arrives last adds all groups' sums.
  const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  float4* part = p.partials + tile * groups * kEntries;
  for (int e = e0 + static_cast<int>(threadIdx.x); e < e1; e += kThreads)
    __stcg(part + int64_t(group) * kEntries + e, cluster_sum(e));
  cluster.sync();  // every rank has read this CTA's shared memory; it may go after this
  __shared__ bool last;
  __threadfence();  // this CTA's partial sums are visible device-wide before its arrival
  __syncthreads();
  unsigned* counter = p.counters + tile * kGroupCluster + rank;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == static_cast<unsigned>(groups - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();  // the other groups' sums, published before their arrivals, are read after ours
  // Eight groups' loads in flight at a time, added in group order.
  constexpr int kBatch = 8;
  for (int e = e0 + static_cast<int>(threadIdx.x); e < e1; e += kThreads) {
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int g0 = 0; g0 < groups; g0 += kBatch) {
      float4 v[kBatch];
#pragma unroll
      for (int g = 0; g < kBatch; ++g)
        if (g0 + g < groups) v[g] = __ldcg(part + int64_t(g0 + g) * kEntries + e);
#pragma unroll
      for (int g = 0; g < kBatch; ++g)
        if (g0 + g < groups) s = g0 + g == 0 ? v[g] : s + v[g];
    }
    store_entry(e, s);
  }
  // Every group of this tile and slice has arrived: the counter goes back to zero for the next
  // launch (the workspace contract: leave it as found).
  if (threadIdx.x == 0) *counter = 0;
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  using T = cudal2_tiny::Tile<Cfg>;
  using Params = LatParams<Cfg>;
  static constexpr bool kTN = T::kTN;
  static constexpr int BM = T::BM, BN = T::BN, BK = T::BK, kThreads = T::kThreads;

  // z: the CTAs splitting K (every one gets at least one K iteration): up to 16, one cluster
  // (fewer where K has fewer iterations); more, groups of clusters (group_cluster), exactly.
  static plan::Grid grid_of(const cudal2_gemm_args& a) {
    if (a.splits > kMaxClusterSplits) return {plan::ceil_div(a.n, BN), plan::ceil_div(a.m, BM), a.splits};
    return plan::grid(a.m, a.n, a.k, BM, BN, BK, a.splits < 1 ? 1 : a.splits);
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "lat kernels take only raster=0 swizzle=1 decomposition=0";
    if (const char* why = plan::lat_splits_refusal(a.splits)) return why;
    if (a.splits > kMaxClusterSplits && plan::k_tiles(a.k, BK) < a.splits)
      return "lat: splits above 16 need at least one k-block per split (K / tile K >= splits)";
    if (!plan::grid_fits(grid_of(a))) return "too many M tiles for the grid (at most 65535)";
    return nullptr;
  }

  // 16-byte fragment loads need 16-byte aligned rows of A (and of B when it is K-contiguous);
  // row-major B is read 4 bytes at a time, which N % 8 == 0 also keeps aligned.
  static bool aligned(const cudal2_gemm_args& a) { return cudal2_shim::rows_16b_aligned(a, kTN); }

  // CTAs per cluster of grouped splits: the largest of 8, 4, 2 whose clusters of this kernel are
  // all resident at once (the occupancy calculator, asked once per kernel and cluster size), else
  // the one that keeps the most CTAs resident. The same answer for every call of a shape on one
  // GPU, so the reduction order (and the bits) are fixed.
  template <bool kAligned>
  static int group_cluster(int64_t ctas) {
    struct Residency {
      int active[kGroupCluster + 1] = {};  // clusters resident at once, by cluster size
    };
    static const Residency r = [] {
      Residency out;
      for (int c = 2; c <= kGroupCluster; c *= 2) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(1, 1, unsigned(c));
        cfg.blockDim = dim3(kThreads, 1, 1);
        cudaLaunchAttribute at[1];
        unsigned n_at = 0;
        add_cluster_attribute(at, n_at, 1, 1, static_cast<unsigned>(c));
        cfg.attrs = at;
        cfg.numAttrs = n_at;
        if (cudaOccupancyMaxActiveClusters(&out.active[c], lat_gemm_kernel<Cfg, kAligned>, &cfg) != cudaSuccess) {
          cudaGetLastError();
          out.active[c] = 0;
        }
      }
      return out;
    }();
    int best = kGroupCluster;
    for (int c = kGroupCluster; c >= 2; c /= 2) {
      if (int64_t(r.active[c]) * c >= ctas) return c;
      if (r.active[c] * c > r.active[best] * best) best = c;
    }
    return best;
  }

  template <bool kAligned>
  static cudaError_t launch(Params p, const plan::Grid& g, cudaStream_t s) {
    auto* kernel = lat_gemm_kernel<Cfg, kAligned>;
    if (g.z > kMaxClusterSplits) p.group_cluster = group_cluster<kAligned>(g.x * g.y * g.z);
    const int64_t csize = g.z > kMaxClusterSplits ? p.group_cluster : g.z;
    if (csize > 8) {
      // Clusters of more than 8 CTAs are "non-portable": allowed per kernel, once.
      static const cudaError_t allowed =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
      if (allowed != cudaSuccess) return allowed;
    }
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(g.x), unsigned(g.y), unsigned(g.z));
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.stream = s;
    cudaLaunchAttribute at[2];
    unsigned n_at = 0;
    if (csize > 1) add_cluster_attribute(at, n_at, 1, 1, static_cast<unsigned>(csize));
    add_pdl_attribute(at, n_at);
    cfg.attrs = at;
    cfg.numAttrs = n_at;
    return cudaLaunchKernelEx(&cfg, kernel, p);
  }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    if (a.splits <= kMaxClusterSplits) return 0;
    // Room for the most groups (clusters of 2), whichever cluster size the launch picks.
    return plan::lat_workspace_bytes(plan::ceil_div(a.m, BM) * plan::ceil_div(a.n, BN), a.splits / 2, BM, BN);
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    // can_implement is asked before the caller has a workspace; the launch needs it.
    if (const size_t ws = workspace_size(a); ws > 0 && (a.workspace == nullptr || a.workspace_bytes < ws))
      return "lat: grouped splits need the workspace cudal2_workspace_size asks for";
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.c_vec = a.n % 2 == 0 && reinterpret_cast<uintptr_t>(a.C) % 4 == 0;
    p.group_cluster = kGroupCluster;
    const int64_t tiles = plan::ceil_div(a.m, BM) * plan::ceil_div(a.n, BN);
    p.counters = static_cast<unsigned*>(a.workspace);
    p.partials = a.workspace == nullptr
                     ? nullptr
                     : reinterpret_cast<float4*>(static_cast<char*>(a.workspace) + plan::lat_counters_bytes(tiles));
    auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = aligned(a) ? launch<true>(p, grid_of(a), s) : launch<false>(p, grid_of(a), s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_lat
