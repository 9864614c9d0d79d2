// Family wgmma: a Hopper-native HGEMM of our own, raw CUDA with inline PTX (sm_90a).
// C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn", column-major "tn"), any M, N;
// K (and N for "nn") multiples of 8 so TMA can address the rows.
//  - A producer warpgroup (one thread) streams 64-wide K tiles of A and B with TMA
//    (cp.async.bulk.tensor) into 128-byte-swizzled shared memory, `stages` deep, each stage
//    completing on an mbarrier (full) and handed back on another (empty). Edges: TMA zero-fills
//    the parts of a box outside the matrix, so the mainloop has no bounds checks.
//  - BM/64 consumer warpgroups each own 64 rows of the tile and issue wgmma.mma_async m64nBNk16
//    with A and B read from shared memory through descriptors (B transposed by the instruction's
//    tnspB bit when it is row-major), fp32 or fp16 accumulators in registers; setmaxnreg moves
//    registers from the producer to the consumers.
//  - Persistent: one CTA per SM walks tiles in a grouped order (raster + swizzle, runtime knobs,
//    wgmma_plan.h); the producer runs ahead into the next tile while the consumers store C.
//  - Epilogue: when TMA can address C (N % 8 == 0, C 16-byte aligned), each consumer converts its
//    rows to fp16 in 64-column chunks through two swizzled shared buffers and TMA stores (which
//    clip at the edges and drain while the next tile's mainloop runs); otherwise registers
//    straight to global memory, bounds-checked.
//  - Ping-pong (compile-time, the configuration's kPingpong): two consumer warpgroups take the CTA's
//    tiles in turn, each computing a whole tile (64x256 or 128x128), so one stores its tile while
//    the other's wgmmas run: the tensor cores are not idle during the epilogue. Both read the one
//    stage ring in order; a warpgroup steps over the stages of the other's tiles.
//  - Split-K (runtime knob `splits`, wgmma_plan.h): the persistent loop deals out (tile, split)
//    work items; a split's consumers store their fp32 partial in the workspace and count in on a
//    per-tile counter, then every split of the tile, once all have stored, sums its own slice of
//    the tile over the splits in split order and stores it to C (the reduction spread over the
//    splits, deterministic bits); a cooperative launch keeps them all resident. A separate kernel
//    instance, so the data-parallel path is untouched.
//  - Programmatic dependent launch: the launch and prologue overlap the previous kernel in the
//    stream (griddepcontrol.wait before any global access, wgmma_ptx.cuh).
//  - Cluster 2x1 / 1x2: the two CTAs share the B / A tile, each loading half of it with a TMA
//    multicast; a stage is released to the producers only when the consumers of both CTAs are
//    done with it (remote arrivals with a CTA-scope release; see mbar_arrive_cluster).
// One configuration is the type cudal2_wgmma::Gemm<Cfg>, Cfg any type with Config's named
// constants; a generated .cu includes this file, spells them out and exports the type through the
// kernel C ABI (cudal2_kernel_shim.h):
//   #include "wgmma_gemm.cuh"
//   namespace {
//   struct cudal2_config {
//     static constexpr bool kLayoutTN = false;
//     static constexpr bool kAccumF16 = false;
//     static constexpr int kTileM = 128;
//     static constexpr int kTileN = 256;
//     static constexpr int kClusterM = 1;
//     static constexpr int kClusterN = 1;
//     static constexpr int kStages = 4;
//     static constexpr bool kPingpong = false;
//   };
//   }  // namespace
//   using cudal2_kernel = cudal2_wgmma::Gemm<cudal2_config>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4")
// (Gemm<Config<false, false, 128, 256, 1, 1, 4>> is the same kernel, for hand-written sources.)
#pragma once
// The device side (Config, Params, Tile) and the headers it needs: wgmma_tile.cuh.
#include <cstdio>
#include <cstdlib>

#include "cudal2_kernel_shim.h"
#include "tma_host.h"
#include "wgmma_tile.cuh"

namespace cudal2_wgmma {
namespace {  // the same namespace as wgmma_tile.cuh's, with its aliases and using-directives
using cudal2_tma::encode;
using cudal2_tma::encoder;

// kSplit: the split-K instance (p.splits > 1); the other is the data-parallel one (splits 1).
template <class Cfg, bool kSplit>
__global__ void __launch_bounds__(Tile<Cfg>::kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_c, const Params p) {
  using T = Tile<Cfg>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm{{align_1024(smem_raw)}};
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

  if (threadIdx.x == 0) {
    prefetch_map(&map_a);
    prefetch_map(&map_b);
    if (p.c_tma) prefetch_map(&map_c);
    for (int s = 0; s < T::kStages; ++s) {
      mbar_init(sm.full(s), 1);                           // the producer's expect_tx arrival (+ the bytes)
      mbar_init(sm.empty(s), T::kReaders * T::kCluster);  // one per consumer warpgroup of the cluster that reads it
    }
    if constexpr (T::kPingpong) {
      mbar_init(sm.turn(0), 1);
      mbar_init(sm.turn(1), 1);
    }
    fence_barrier_init();
  }
  __syncthreads();
  // Clusters: the peer's barriers are initialized before anyone multicasts or arrives on them.
  if constexpr (T::kCluster > 1) cluster_sync();
  // PDL (wgmma_ptx.cuh): the prologue above may have overlapped the previous kernel; global memory
  // only from here on. No early trigger (launch_dependents): the next grid launches at our exit.
  // On the H100 a trigger at every CTA's start made few-tile shapes 2-18% faster but others up to
  // 24% slower, both with several tiles per CTA (64x128 ping-pong on 2048^3) and with one (15-19%:
  // 2048x512x2048 on 128 CTAs, 4096x128x4096 split-K 4); no rule we found separated them, and the
  // exit trigger measured neutral (bench/results/h100/wgmma-final/).
  grid_dependency_wait();
  const uint32_t rank = T::kCluster > 1 ? cluster_rank() : 0;
  const int64_t first = blockIdx.x / T::kCluster, stride = gridDim.x / T::kCluster;
  const int splits = kSplit ? p.splits : 1;
  const int64_t n_work = p.units.count() * splits;
  if (wg == 0) {
    // Producer warpgroup: one thread issues every TMA; the others only give their registers up.
    if constexpr (T::kConsumers == 2) regs_dec<kProducerRegs>();
    if (tid == 0) T::produce(sm, p, map_a, map_b, first, stride, n_work, splits, rank);
  } else {
    if constexpr (T::kConsumers == 2) regs_inc<kConsumerRegs>();
    T::template consume<kSplit>(sm, p, map_c, wg - 1, tid, first, stride, n_work, splits, rank);
  }
}

// ---- Host side ---------------------------------------------------------------------------------

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h), refusal,
// workspace_size and run.
template <class Cfg>
struct Gemm {
  using T = Tile<Cfg>;
  static constexpr bool kLayoutTN = T::kLayoutTN;
  static constexpr int kTileM = T::kTileM, kTileN = T::kTileN, kTileK = T::kTileK, kThreads = T::kThreads,
                       kSmem = T::kSmem;
  static constexpr int kClusterM = T::kClusterM, kClusterN = T::kClusterN, kCluster = T::kCluster;
  static constexpr bool kPingpong = T::kPingpong;

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster < 0 || a.raster > 2) return "raster must be 0, 1 or 2";
    if (a.swizzle != 1 && a.swizzle != 2 && a.swizzle != 4 && a.swizzle != 8) return "swizzle must be 1, 2, 4 or 8";
    // Decomposition (cudal2_kernel_abi.h): 0 heuristic (split-K when splits != 1), 1 data-parallel,
    // 2 split-K; splits 0 asks plan::auto_splits.
    if (a.decomposition < 0 || a.decomposition > 2)
      return "wgmma takes decomposition 0 (heuristic), 1 (data-parallel) or 2 (split-K)";
    if (a.splits < 0 || a.splits > plan::kMaxSplits) return "splits must be 0 (auto) or 1..64";
    if (a.decomposition == 1 && a.splits > 1) return "data-parallel decomposition takes splits 0 or 1";
    if (kPingpong && (a.splits > 1 || a.decomposition == 2)) return "ping-pong takes no split-K (splits 0 or 1)";
    if (a.splits > plan::k_tiles(a.k)) return "splits must not exceed the K tiles (ceil(K/64))";
    if (!plan::split_fits(plan::tiles(a.m, a.n, kTileM, kTileN), a.splits)) return "too many split-K partial tiles";
    if (a.splits > 1) {
      const auto units = plan::cluster_units(plan::tiles(a.m, a.n, kTileM, kTileN), kClusterM, kClusterN).count();
      const int fit = fit_ctas();
      if (fit > 0 && !plan::splits_fit_wave(units, a.splits, fit / kCluster))
        return "explicit splits > 1 only where every (tile, split) fits in one wave of the SMs (splits=0 picks by "
               "itself)";
    }
    if (!plan::tma_rows_ok(a.n, a.k, kLayoutTN))
      return kLayoutTN ? "TMA needs 16-byte rows: K must be a multiple of 8"
                       : "TMA needs 16-byte rows: K and N must be multiples of 8";
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.B)) % 16)
      return "TMA needs A and B 16-byte aligned";
    return nullptr;
  }

  // Once per artifact (not stream operations): both kernels may take kSmem of shared memory.
  static cudaError_t prepare() {
    static const cudaError_t e = [] {
      cudaError_t r =
          cudaFuncSetAttribute(wgmma_gemm_kernel<Cfg, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      if constexpr (!kPingpong) {
        if (r == cudaSuccess)
          r = cudaFuncSetAttribute(wgmma_gemm_kernel<Cfg, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      }
      return r;
    }();
    return e;
  }

  // CTAs the persistent grid may have: one per SM, or for clusters the whole clusters that fit on
  // the GPU at once (GPCs need not hold an even number of SMs). Asked once; 0 when the GPU cannot
  // be asked.
  static int fit_ctas() {
    static const int fit = [] {
      int dev = 0, sms = 0;
      if (prepare() != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess ||
          cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
      }
      if (kCluster == 1) return sms;
      cudaLaunchConfig_t cfg{};
      cudaLaunchAttribute at{};
      unsigned n_at = 0;
      add_cluster_attribute(&at, n_at, kCluster);
      cfg.gridDim = dim3(kCluster * (sms / kCluster)), cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = kSmem;
      cfg.attrs = &at, cfg.numAttrs = n_at;
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, wgmma_gemm_kernel<Cfg, false>, &cfg) != cudaSuccess ||
          clusters < 1) {
        cudaGetLastError();
        clusters = sms / kCluster;
      }
      // Diagnostics (device runs only): CUDAL2_WGMMA_CLUSTERS=N reports the count, and overrides
      // it when N > 0.
      if (const char* o = std::getenv("CUDAL2_WGMMA_CLUSTERS")) {
        std::fprintf(stderr, "wgmma: cudaOccupancyMaxActiveClusters says %d (override: %s)\n", clusters, o);
        if (std::atoi(o) > 0) clusters = std::atoi(o);
      }
      return clusters * kCluster;
    }();
    return fit;
  }

  // The split count a call runs with (>= 1), for `fit` CTAs in the grid.
  static int call_splits(const cudal2_gemm_args& a, int fit) {
    if (a.decomposition == 1 || kPingpong) return 1;
    const auto units = plan::cluster_units(plan::tiles(a.m, a.n, kTileM, kTileN), kClusterM, kClusterN);
    return plan::resolve_splits(a.splits, units.count(), plan::k_tiles(a.k), fit / kCluster,
                                plan::reduce_steps(kTileM, kTileN));
  }

  // Split-K: counters and partial tiles (wgmma_plan.h, workspace_bytes); nothing otherwise.
  static size_t workspace_size(const cudal2_gemm_args& a) {
    if (refusal(a)) return 0;
    const int fit = fit_ctas();
    const int splits = call_splits(a, fit > 0 ? fit : plan::kSplitSms);
    return plan::workspace_bytes(plan::tiles(a.m, a.n, kTileM, kTileN), kTileM, kTileN, splits);
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    if (!encoder()) return "cuTensorMapEncodeTiled not found in the driver";
    // A cluster's CTAs each load half of the operand they share.
    CUtensorMap map_a, map_b, map_c{};
    const bool c_tma = T::kTmaEpilogue && a.n % 8 == 0 && reinterpret_cast<uintptr_t>(a.C) % 16 == 0;
    const bool ok = encode(&map_a, a.A, a.m, a.k, kClusterN == 2 ? kTileM / 2 : kTileM) &&
                    (kLayoutTN ? encode(&map_b, a.B, a.n, a.k, kClusterM == 2 ? kTileN / 2 : kTileN)
                               : encode(&map_b, a.B, a.k, a.n, kTileK, T::kNarrowN ? kTileN : 64)) &&
                    (!c_tma || encode(&map_c, a.C, a.m, a.n, 64));
    if (!ok) return "cuTensorMapEncodeTiled refused the operands";
    if (const cudaError_t e = prepare(); e != cudaSuccess) return cudaGetErrorString(e);
    const int fit = fit_ctas();
    if (fit < kCluster) return "could not ask the GPU for its SM count";
    Params p;
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.tiles = plan::tiles(a.m, a.n, kTileM, kTileN);
    p.units = plan::cluster_units(p.tiles, kClusterM, kClusterN);
    p.k_tiles = plan::k_tiles(a.k);
    p.raster = plan::resolve_raster(a.raster, p.units);
    p.swizzle = a.swizzle;
    p.c_vec = a.n % 2 == 0 && reinterpret_cast<uintptr_t>(a.C) % 4 == 0;
    p.c_tma = c_tma;
    p.splits = call_splits(a, fit);
    p.counters = nullptr, p.partials = nullptr;
    if (p.splits > 1) {
      const size_t need = plan::workspace_bytes(p.tiles, kTileM, kTileN, p.splits);
      if (!a.workspace || a.workspace_bytes < need || reinterpret_cast<uintptr_t>(a.workspace) % 16)
        return "workspace too small or misaligned for split-K (see cudal2_workspace_size)";
      p.counters = static_cast<int*>(a.workspace);
      p.partials = reinterpret_cast<float4*>(static_cast<char*>(a.workspace) + plan::counters_bytes(p.tiles));
    }
    const int64_t ctas = plan::persistent_ctas(p.units.count() * p.splits, fit / kCluster, 1) * kCluster;
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute at[3]{};
    unsigned n_at = 0;
    if (kCluster > 1) add_cluster_attribute(at, n_at, kCluster);
    if (p.splits > 1) {  // the splits of a tile wait for each other: all CTAs resident at once
      at[n_at].id = cudaLaunchAttributeCooperative;
      at[n_at].val.cooperative = 1;
      ++n_at;
    }
    add_pdl_attribute(at, n_at);  // the kernel's prologue overlaps the previous one
    cfg.gridDim = dim3(unsigned(ctas)), cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = kSmem;
    cfg.stream = static_cast<cudaStream_t>(stream);
    cfg.attrs = at, cfg.numAttrs = n_at;
    cudaError_t e = cudaSuccess;
    if constexpr (!kPingpong) {
      if (p.splits > 1) e = cudaLaunchKernelEx(&cfg, wgmma_gemm_kernel<Cfg, true>, map_a, map_b, map_c, p);
    }
    if (p.splits <= 1) e = cudaLaunchKernelEx(&cfg, wgmma_gemm_kernel<Cfg, false>, map_a, map_b, map_c, p);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return cudaGetErrorString(e);
    return nullptr;
  }
};

}  // namespace
}  // namespace cudal2_wgmma
