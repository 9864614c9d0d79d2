// Family wgmma_swapab: our Hopper-native HGEMM for small M (LLM decode, skinny shapes), raw CUDA
// with inline PTX (sm_90a). C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn",
// column-major "tn"), any M, N; K (and N for "nn") multiples of 8 so TMA can address the rows.
//  - Swap-AB: the kernel computes C^T = B^T A^T, so the problem's small M lands on wgmma's N
//    (8, 16, 32 or 64: tile M) and the large N on wgmma's M (64 rows per consumer warpgroup);
//    a wgmma m64nMk16 wastes nothing when M is 8, where the ordinary orientation pads M to 64.
//  - A producer warp streams 64-wide K tiles of B (the big operand) and A with TMA into
//    128-byte-swizzled shared memory, `stages` deep, on full/empty mbarriers; TMA zero-fills
//    whatever lies outside the matrices. B^T is wgmma's A operand: K-major for "tn", MN-major
//    ("nn", the instruction's transpose-A bit); A^T is its B operand, K-major as stored.
//  - Split-K without a second pass or a workspace: the `splits` CTAs of one tile form a cluster,
//    each sums its own K range into a fp32 tile in its shared memory, and after a cluster barrier
//    CTA r adds up rows r*kTileM/splits.. of all of them, read through distributed shared memory
//    (ld.shared::cluster), in split order (the same bits whichever CTA finishes first).
//  - Or, without split-K, a cluster of 2 CTAs that share an operand: "cluster=2x1" pairs
//    neighbouring M tiles (the B tile: on skinny shapes such as 4096x64xK every CTA reads all of B),
//    "cluster=1x2" neighbouring N tiles (the A tile). Each CTA loads half of the shared tile and
//    multicasts it to both, and a stage is refilled once both CTAs' consumers are done with it.
//  - Epilogue from that shared tile, stored with M-major rows (N contiguous): each warp writes
//    whole runs of a row of C, masked at the edges.
// One configuration is the type cudal2_wgmma_swapab::Gemm<Cfg>, Cfg any type with Config's named
// constants; a generated .cu includes this file, spells them out and exports the type through the
// kernel C ABI (cudal2_kernel_shim.h):
//   #include "wgmma_swapab.cuh"
//   namespace {
//   struct cudal2_config {
//     static constexpr bool kLayoutTN = true;
//     static constexpr bool kAccumF16 = false;
//     static constexpr int kTileM = 16;
//     static constexpr int kTileN = 128;
//     static constexpr int kStages = 8;
//   };
//   }  // namespace
//   using cudal2_kernel = cudal2_wgmma_swapab::Gemm<cudal2_config>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "wgmma_swapab tn f32 tile=16x128x64 stages=8")
// (Gemm<Config<true, false, 16, 128, 8>> is the same kernel, for hand-written sources.)
#pragma once
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cudal2_kernel_shim.h"
#include "tma_host.h"
#include "wgmma_pipeline.cuh"
#include "wgmma_ptx.cuh"
#include "wgmma_swapab_plan.h"

namespace cudal2_wgmma_swapab {
namespace {
using namespace cudal2_wgmma_ptx;
using namespace cudal2_wgmma_pipeline;
using cudal2_tma::encode;
using cudal2_tma::encoder;
namespace plan = cudal2_swapab_plan;

// One compile-time configuration by position; codegen/family_wgmma_swapab.cpp writes the same
// constants by name (a struct of its own) from a spec, kClusterM / kClusterN only when one is 2.
template <bool LayoutTN, bool AccumF16, int TileM, int TileN, int Stages, int ClusterM = 1, int ClusterN = 1>
struct Config {
  static constexpr bool kLayoutTN = LayoutTN;           // B stored as N rows of K
  static constexpr bool kAccumF16 = AccumF16;           // fp16 accumulators
  static constexpr int kTileM = TileM, kTileN = TileN;  // tile of C: kTileM rows (wgmma N), kTileN columns
  static constexpr int kStages = Stages;
  static constexpr int kClusterM = ClusterM, kClusterN = ClusterN;  // an operand-sharing pair
};

// Cfg::kClusterM / kClusterN where Cfg names them, else 1 (configurations without a pair).
template <class Cfg, class = void>
struct ClusterOf {
  static constexpr int m = 1, n = 1;
};
template <class Cfg>
struct ClusterOf<Cfg, std::void_t<decltype(Cfg::kClusterM), decltype(Cfg::kClusterN)>> {
  static constexpr int m = Cfg::kClusterM, n = Cfg::kClusterN;
};

struct Params {
  __half* C;
  int64_t m, n;
  int64_t k_tiles;
  plan::Grid grid;
  bool c_vec;  // N % 4 == 0 and C 8-byte aligned: 4 halves per store
};

// The device side of configuration Cfg.
template <class Cfg>
struct Tile {
  static constexpr bool kLayoutTN = Cfg::kLayoutTN, kAccumF16 = Cfg::kAccumF16;
  static constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN, kTileK = plan::kTileK, kStages = Cfg::kStages;
  static_assert(plan::tile_m_ok(kTileM), "tile M is 8, 16, 32 or 64");
  static_assert(plan::tile_n_ok(kTileN), "tile N is 64 or 128");
  static constexpr int kClusterM = ClusterOf<Cfg>::m, kClusterN = ClusterOf<Cfg>::n;
  static constexpr int kPair = kClusterM * kClusterN;  // CTAs sharing an operand: 1 or 2
  static_assert(plan::cluster_tile_ok(kClusterM, kClusterN, kTileM), "cluster 1x1, 2x1, or 1x2 with tile M >= 16");
  // The box each CTA loads: A's rows (halved when a 1x2 pair shares A), B's rows (N rows for tn,
  // K rows for nn; halved when a 2x1 pair shares B). Halves start on a swizzle atom (1024 bytes).
  static constexpr int kABoxRows = kTileM / kClusterN;
  static constexpr int kBBoxRows = (kLayoutTN ? kTileN : kTileK) / kClusterM;
  static constexpr int kConsumers = plan::consumers(kTileN), kThreads = plan::threads(kTileN);
  static constexpr int kABytes = kTileM * kTileK * 2, kBBytes = kTileN * kTileK * 2;
  static constexpr int kPitch = plan::red_pitch(kTileN);
  static constexpr int kSmem = plan::smem_bytes(kTileM, kTileN, kStages);
  static_assert(kStages >= 2 && kStages <= plan::kMaxStages && kSmem <= plan::kSmemBudget,
                "stages do not fit in shared memory");
  // wgmma m64n<kTileM>k16: fp32 accumulators kTileM/2 per thread, fp16 ones (as half2) kTileM/4.
  using AccT = std::conditional_t<kAccumF16, uint32_t, float>;
  static constexpr int kAccRegs = kAccumF16 ? kTileM / 4 : kTileM / 2;
  // Independent accumulator sets, k step kk into set kk % kChains: a small wgmma is short on work
  // and long on latency, and the steps of one set form a dependent chain; with several chains in
  // flight the tensor pipe overlaps them. Summed (in fp32) once at the end.
  static constexpr int kChains = kTileM <= 32 ? 4 : 2;

  // The stage ring (stage s: A tile of kTileM rows of 128 bytes, B tile of kTileN rows or kTileN/64 blocks of 64
  // k-rows), then the reduction tile, then the ring's barriers. Every tile starts 1024-aligned (the
  // swizzle atom).
  struct Smem : StageSmem<kStages, kABytes, kBBytes, plan::red_bytes(kTileM, kTileN)> {
    __device__ __forceinline__ uint32_t red() const { return this->own(); }
  };

  using Ring = StageRing<kStages>;

  // The producer thread: the K tiles of this CTA's range. In a pair, CTA `rank` loads half `rank`
  // of the shared tile into both CTAs (the same offset in each) and its own other operand.
  static __device__ __forceinline__ void produce(const Smem& sm, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                                 int m0, int n0, plan::KRange kr) {
    Ring ring;
    const int rank = kPair > 1 ? static_cast<int>(cluster_rank()) : 0;
    produce_stages<kTileK>(sm, ring, kr.begin, kr.end, [&](int s, int k0, uint32_t full) {
      if constexpr (kClusterN == 2)
        tma_load_multicast(sm.a(s) + rank * kABoxRows * 128, &map_a, full, k0, m0 + rank * kABoxRows, 0x3);
      else
        tma_load(sm.a(s), &map_a, full, k0, m0);
      if constexpr (kLayoutTN) {
        if constexpr (kClusterM == 2)
          tma_load_multicast(sm.b(s) + rank * kBBoxRows * 128, &map_b, full, k0, n0 + rank * kBBoxRows, 0x3);
        else
          tma_load(sm.b(s), &map_b, full, k0, n0);
      } else {
#pragma unroll
        for (int c = 0; c < kConsumers; ++c) {
          const uint32_t dst = sm.b(s) + c * 64 * kTileK * 2;
          if constexpr (kClusterM == 2)  // the block's K rows halved: rows rank*32.. of each
            tma_load_multicast(dst + rank * kBBoxRows * 128, &map_b, full, n0 + c * 64, k0 + rank * kBBoxRows, 0x3);
          else
            tma_load(dst, &map_b, full, n0 + c * 64, k0);
        }
      }
    });
  }

  // Consumer warpgroup c: columns c*64.. of the tile (rows of C^T), into the reduction tile.
  static __device__ __forceinline__ void consume(const Smem& sm, int c, int tid, plan::KRange kr) {
    AccT acc[kChains][kAccRegs];
#pragma unroll
    for (int ch = 0; ch < kChains; ++ch)
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) acc[ch][i] = 0;
    auto fence_acc = [&] {
#pragma unroll
      for (int ch = 0; ch < kChains; ++ch)
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) fence_reg(acc[ch][i]);
    };
    auto stage_mma = [&](int s) {
      const uint32_t a0 = sm.a(s), b0 = sm.b(s);
      return [&acc, c, a0, b0](int64_t) {
#pragma unroll
        for (int kk = 0; kk < kTileK / 16; ++kk) {
          const uint64_t da = kLayoutTN ? desc(b0 + c * 64 * 128 + kk * 32, 16, 1024)
                                        : desc(b0 + c * 64 * kTileK * 2 + kk * 2048, 64 * kTileK * 2, 1024);
          const uint64_t db = desc(a0 + kk * 32, 16, 1024);  // wgmma's B = A^T: K-major rows of A
          Wgmma<kTileM, kAccumF16>::template mma<kLayoutTN ? 0 : 1, 0>(acc[kk % kChains], da, db, 1);
        }
      };
    };
    // A pair's stage is refilled by both producers: each consumer warpgroup hands it back to both
    // CTAs (thread q arrives on CTA q, one instruction for the warp).
    auto release = [&](int s) {
      if constexpr (kPair == 1) {
        if (tid == 0) mbar_arrive(sm.empty(s));
      } else {
        if (tid < kPair) mbar_arrive_cluster(sm.empty(s), tid);
      }
    };
    Ring ring;
    consume_stages(sm, ring, kr.begin, kr.end, fence_acc, stage_mma, release);
    wgmma_wait<0>();
    fence_acc();
    // (No release of the last stage: nothing is loaded after it.)
    // Accumulator fragment, per 8-column block j of wgmma's N (here rows m of C): this lane holds
    // wgmma rows r and r+8 (columns n of C), wgmma columns 2*(lane%4)+{0,1} (rows m of C).
    const int warp = tid / 32, lane = tid % 32;
    const int n = c * 64 + warp * 16 + lane / 4;
    auto value = [&](int j, int h, int e) -> float {
      float sum = 0;
#pragma unroll
      for (int ch = 0; ch < kChains; ++ch) {
        if constexpr (kAccumF16) {
          const __half2 v = *reinterpret_cast<const __half2*>(&acc[ch][2 * j + h]);
          sum += __half2float(e ? __high2half(v) : __low2half(v));
        } else {
          sum += acc[ch][4 * j + 2 * h + e];
        }
      }
      return sum;
    };
#pragma unroll
    for (int j = 0; j < kTileM / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int m = j * 8 + (lane % 4) * 2 + e;
          st_shared_f32(sm.red() + (m * kPitch + n + 8 * h) * 4, value(j, h, e));
        }
  }

  // Rows [m_lo, m_lo + rows) of the tile: the sum over the cluster's reduction tiles, to C.
  static __device__ __forceinline__ void reduce_store(const Smem& sm, const Params& p, const plan::Cta& at, int splits,
                                                      int m_lo, int rows) {
    constexpr int kQuads = kTileN / 4;  // float4s per row
    for (int i = threadIdx.x; i < rows * kQuads; i += kThreads) {
      const int m = m_lo + i / kQuads, q = i % kQuads;
      const uint32_t addr = sm.red() + (m * kPitch + q * 4) * 4;
      float4 sum;
      if (splits == 1) {
        sum = ld_shared_f4(addr);
      } else {
        // In split order, this CTA's own tile included, so every CTA would get the same bits.
        sum = ld_cluster_f4(addr, 0);
        for (int r = 1; r < splits; ++r) {
          const float4 v = ld_cluster_f4(addr, r);
          sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
        }
      }
      const int64_t gm = at.tile_m * kTileM + m, gn = at.tile_n * kTileN + q * 4;
      if (gm >= p.m || gn >= p.n) continue;
      __half* dst = p.C + gm * p.n + gn;
      const __half2 lo = __floats2half2_rn(sum.x, sum.y), hi = __floats2half2_rn(sum.z, sum.w);
      if (p.c_vec && gn + 3 < p.n) {
        uint2 v;
        v.x = *reinterpret_cast<const uint32_t*>(&lo), v.y = *reinterpret_cast<const uint32_t*>(&hi);
        *reinterpret_cast<uint2*>(dst) = v;
      } else {
        const __half h[4] = {__low2half(lo), __high2half(lo), __low2half(hi), __high2half(hi)};
        for (int e = 0; e < 4 && gn + e < p.n; ++e) dst[e] = h[e];
      }
    }
  }

  static __device__ __forceinline__ void st_shared_f32(uint32_t addr, float v) {
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
  }
  static __device__ __forceinline__ float4 ld_shared_f4(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
  }
  // The same offset in the shared memory of cluster CTA `rank`.
  static __device__ __forceinline__ float4 ld_cluster_f4(uint32_t addr, int rank) {
    float4 v;
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %4, %5;\n"
        "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "r"(addr), "r"(rank)
        : "memory");
    return v;
  }
};

template <class Cfg>
__global__ void __launch_bounds__(Tile<Cfg>::kThreads)
    swapab_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const Params p) {
  using T = Tile<Cfg>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm{{align_1024(smem_raw)}};
  const plan::Cta at = plan::cta_of(blockIdx.x, p.grid, T::kClusterN);
  const int splits = p.grid.splits;
  const plan::KRange kr = plan::k_range(p.k_tiles, splits, at.split);

  if (threadIdx.x == 0) {
    prefetch_map(&map_a);
    prefetch_map(&map_b);
    for (int s = 0; s < T::kStages; ++s) {
      mbar_init(sm.full(s), 1);                          // the producer's expect_tx arrival (+ the bytes)
      mbar_init(sm.empty(s), T::kConsumers * T::kPair);  // one arrival per consumer warpgroup (of the pair)
    }
    fence_barrier_init();
  }
  // A pair's peer loads into this CTA and arrives on its barriers: they are initialized first.
  if constexpr (T::kPair > 1)
    cluster_sync();
  else
    __syncthreads();
  // PDL (wgmma_ptx.cuh): global memory only from here on. With split-K clusters the next grid may
  // launch once every CTA of this one has started (H100: 3-15% faster back to back); without, an
  // early trigger was up to 40% slower where the grid left SMs idle or shared them (72 CTAs of
  // 64x64; 144 of 8x64), so the trigger is our exit (bench/results/h100/wgmma-final/).
  grid_dependency_wait();
  if (splits > 1) launch_dependents();
  const int wg = threadIdx.x / 128;
  if (wg == T::kConsumers) {
    if (threadIdx.x % 32 == 0)
      T::produce(sm, map_a, map_b, static_cast<int>(at.tile_m * T::kTileM), static_cast<int>(at.tile_n * T::kTileN),
                 kr);
  } else {
    T::consume(sm, wg, threadIdx.x % 128, kr);
  }
  // Every reduction tile written (and, in a cluster, visible to the peers), then the sum. A pair
  // meets here too: after it, neither CTA's barriers or shared memory are touched by the other.
  if (splits > 1 || T::kPair > 1)
    cluster_sync();
  else
    __syncthreads();
  const int rows = T::kTileM / splits;
  T::reduce_store(sm, p, at, splits, at.split * rows, rows);
  if (splits > 1) cluster_sync();  // the peers have read this CTA's tile before it exits
}

// ---- Host side ---------------------------------------------------------------------------------

template <class Cfg>
struct Gemm {
  using T = Tile<Cfg>;

  // The GPU's SM count, asked once (the auto split count covers them); 0 when it cannot be asked.
  static int sms() {
    static const int n = [] {
      int dev = 0, count = 0;
      if (cudaGetDevice(&dev) != cudaSuccess ||
          cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
      }
      return count;
    }();
    return n;
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1) return "wgmma_swapab has no tile-order knobs (raster 0, swizzle 1)";
    if (a.decomposition != 0 && a.decomposition != 2)
      return "wgmma_swapab takes decomposition 0 (heuristic) or 2 (split-K across a cluster)";
    if (a.splits != 0 && !plan::splits_ok(a.splits)) return "splits must be 0 (auto), 1, 2, 4 or 8";
    if (T::kPair > 1 && a.splits > 1) return "a wgmma_swapab cluster shares an operand: splits must be 0 (auto) or 1";
    if (a.splits > plan::k_tiles(a.k)) return "splits must not exceed the K tiles (ceil(K/64))";
    if (!plan::tma_rows_ok(a.n, a.k, T::kLayoutTN))
      return T::kLayoutTN ? "TMA needs 16-byte rows: K must be a multiple of 8"
                          : "TMA needs 16-byte rows: K and N must be multiples of 8";
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.B)) % 16)
      return "TMA needs A and B 16-byte aligned";
    return nullptr;
  }

  static size_t workspace_size(const cudal2_gemm_args&) { return 0; }  // split-K stays on chip

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    if (!encoder()) return "cuTensorMapEncodeTiled not found in the driver";
    CUtensorMap map_a, map_b;
    const bool ok =
        encode(&map_a, a.A, a.m, a.k, T::kABoxRows) &&
        (T::kLayoutTN ? encode(&map_b, a.B, a.n, a.k, T::kBBoxRows) : encode(&map_b, a.B, a.k, a.n, T::kBBoxRows));
    if (!ok) return "cuTensorMapEncodeTiled refused the operands";
    static const cudaError_t prepared =
        cudaFuncSetAttribute(swapab_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmem);
    if (prepared != cudaSuccess) return cudaGetErrorString(prepared);
    const int count = sms();
    if (count < 1) return "could not ask the GPU for its SM count";
    Params p;
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n;
    p.k_tiles = plan::k_tiles(a.k);
    const auto one = plan::grid(a.m, a.n, T::kTileM, T::kTileN, 1);
    const int splits = plan::resolve_splits(a.splits, one.ctas(), p.k_tiles, count, T::kPair > 1);
    p.grid = plan::grid(a.m, a.n, T::kTileM, T::kTileN, splits, T::kClusterM, T::kClusterN);
    p.c_vec = a.n % 4 == 0 && reinterpret_cast<uintptr_t>(a.C) % 8 == 0;
    if (p.grid.ctas() > INT32_MAX) return "too many tiles for one launch";
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute at[2]{};
    unsigned n_at = 0;
    if (splits * T::kPair > 1) add_cluster_attribute(at, n_at, static_cast<unsigned>(splits * T::kPair));
    add_pdl_attribute(at, n_at);  // the kernel's prologue overlaps the previous one
    cfg.gridDim = dim3(unsigned(p.grid.ctas())), cfg.blockDim = dim3(T::kThreads), cfg.dynamicSmemBytes = T::kSmem;
    cfg.stream = static_cast<cudaStream_t>(stream);
    cfg.attrs = at, cfg.numAttrs = n_at;
    cudaError_t e = cudaLaunchKernelEx(&cfg, swapab_kernel<Cfg>, map_a, map_b, p);
    if (e == cudaSuccess) e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_wgmma_swapab
