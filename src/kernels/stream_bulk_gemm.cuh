// Family stream, bulk pipeline: the weight-streaming kernel of stream_gemm.cuh with B's bytes
// moved by the copy engine (TMA) instead of the warps. Why: the register ring keeps ~64 KB of B
// in flight per SM (ncu, H200: 63-71% of DRAM throughput); Little's law at 4.5 TB/s and ~1.5 us
// of loaded latency asks for ~50 KB per SM at the very least and the read limit's own kernel holds
// several times that. Here one producer thread issues tensor copies (cp.async.bulk.tensor, 64
// rows x 64 K-elements of B and tokens x 64 of A per box, 128-byte swizzle, zeros past the edges)
// into a ring of `kStages` shared-memory stages of kChunks boxes each, every stage completing on
// an mbarrier, and kChunks consumer warps multiply them with the swap-AB mma.sync fragments of
// stream_gemm.cuh (FragsTN), read back from shared memory.
// (Measured on an H200: 1-D bulk copies, one per row segment of 256-1024 bytes, ran at 0.2-0.5 of
// cuBLASLt whatever the ring's depth: ~50-80 ns of copy engine per copy; a box moves 8 KB.)
//  - Work: the output's 64-row x tokens tiles, each cut into K chunks of 64: tiles x chunks units
//    over one CTA per SM (persistent), each CTA a contiguous range of units (stream-K), so every
//    SM streams the same bytes whatever the tile count (no partial wave, no split knob);
//  - a tile whose chunks span several CTAs is reduced in the launch: each contributor leaves its
//    fp32 partial in slot (tile + CTA) of the workspace (contributors of one tile are consecutive
//    CTAs, so the slots never overlap) and the last to arrive adds them in CTA order: the same
//    bits whoever finishes first;
//  - PDL: the first stage's boxes are prefetched into L2 before waiting for the previous kernel;
//    shared-memory copies start only after it.
// TN only (B is N x K with K contiguous), rows 16-byte aligned (K % 8 == 0, aligned A and B: what
// a tensor map needs); anything else runs the register kernel (stream_gemm.cuh) with the same
// tile, so every M, N, K is served.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "stream_gemm.cuh"
#include "tma_host.h"
#include "wgmma_ptx.cuh"

namespace cudal2_stream_bulk {
namespace {
using namespace cudal2_mma_common;
using namespace cudal2_pdl;
namespace ptx = cudal2_wgmma_ptx;
namespace plan = cudal2_stream_plan;
using cudal2_stream::Where;

// kTokTiles: 8-token tiles of a CTA (M <= 8 * kTokTiles per pass over B); kChunks: K chunks of
// 64 per stage, one consumer warp each; kStages: ring depth; kRowTiles: 16-row tiles of B per
// output tile (fewer rows, longer runs of each row per stage).
template <bool kF16Acc, int kTokTiles, int kChunks, int kStages, int kRowTiles = 4>
struct Config {
  static constexpr bool kLayoutTN = true, kAccumF16 = kF16Acc;
  static constexpr int NT = kTokTiles, MT = kRowTiles, CH = kChunks, S = kStages;
  static constexpr int kRows = 16 * MT, kToks = 8 * NT;
  static constexpr int kThreads = 32 * (CH + 1);  // consumers, then the producer warp
  // A stage: CH boxes of B (kRows x 128 bytes), then CH boxes of A (tokens x 128 bytes), each a
  // whole number of the swizzle's 1024-byte atoms.
  static constexpr int kBoxB = kRows * 128, kBoxA = kToks * 128;
  static constexpr int kStageBytes = CH * (kBoxB + kBoxA);
  static constexpr int kEntries = MT * NT * 32;  // float4 entries of a partial tile
  static constexpr int kRedBytes = (CH > 1 ? CH - 1 : 1) * kEntries * 16;
  static constexpr int kSmem = S * kStageBytes + kRedBytes + 2 * S * 8 + 1024;  // + the ring's alignment
  static_assert(NT == 1 || NT == 2 || NT == 4, "stream bulk: 1, 2 or 4 token tiles");
  static_assert(MT == 1 || MT == 2 || MT == 4, "stream bulk: 16, 32 or 64 rows a tile");
  static_assert(CH >= 1 && CH <= 8, "stream bulk: 1..8 chunks a stage");
  static_assert(S >= 2 && S <= 12, "stream bulk: 2..12 stages");
  static_assert(kSmem <= 227 * 1024, "stream bulk: the ring exceeds 227 KB of shared memory");
  // The register kernel that serves what tensor maps cannot (unaligned rows).
  using Fallback = cudal2_stream::Config<true, kF16Acc, NT, 2, 2, 4, 2>;
};

// A 3-D box (K within a chunk, rows, chunks) into shared memory, counted on `bar` when it lands.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// A tensor map's box at (c0, c1) into L2 only (before the previous kernel has finished).
__device__ __forceinline__ void tma_prefetch_l2(const CUtensorMap* map, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
      "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ uint4 lds16(uint32_t addr) {
  uint4 r;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "r"(addr));
  return r;
}

struct Params {
  const __half* A;
  const __half* B;
  __half* C;
  int64_t m, n, k;
  int64_t tok_blocks;  // token blocks per row tile (tiles = row tiles x tok_blocks)
  int64_t chunks;      // K chunks of 64 per tile
  int64_t units;       // tiles x chunks
  unsigned* counters;  // one per tile, zero between launches
  float4* partials;    // [tile + CTA][entry]
  int box3d;           // the 3-D maps hold whole stages (K % 64 == 0)
};

// The CTA (of P) whose range holds unit u: ranges are [c * U / P, (c + 1) * U / P).
__device__ __forceinline__ int64_t cta_of(int64_t u, int64_t units, int64_t ctas) {
  return ((u + 1) * ctas - 1) / units;
}

// One stage of the ring: the chunks [j, j + n) of tile t (never across a tile's end).
struct Stage {
  int64_t t, j, n;
};
__device__ __forceinline__ Stage stage_at(const Params& p, int64_t u, int64_t end, int chunks_max) {
  Stage s;
  s.t = u / p.chunks, s.j = u % p.chunks;
  s.n = p.chunks - s.j;
  if (s.n > end - u) s.n = end - u;
  if (s.n > chunks_max) s.n = chunks_max;
  return s;
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    stream_bulk_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                       const __grid_constant__ CUtensorMap map_a3, const __grid_constant__ CUtensorMap map_b3,
                       const Params p) {
  constexpr int MT = Cfg::MT, NT = Cfg::NT, CH = Cfg::CH, S = Cfg::S;
  using F = cudal2_stream::FragsTN<Cfg, true>;
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: the ring starts on such a boundary.
  unsigned char* smem = smem_raw + ((1024 - ptx::smem_u32(smem_raw) % 1024) % 1024);
  auto* red = reinterpret_cast<float4*>(smem + S * Cfg::kStageBytes);
  auto* bars = reinterpret_cast<uint64_t*>(smem + S * Cfg::kStageBytes + Cfg::kRedBytes);
  const uint32_t ring = ptx::smem_u32(smem), full0 = ptx::smem_u32(bars), empty0 = full0 + 8 * S;

  launch_dependents();
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) ptx::mbar_init(full0 + 8 * s, 1), ptx::mbar_init(empty0 + 8 * s, CH);
    ptx::fence_barrier_init();
  }
  __syncthreads();
  const int64_t ctas = gridDim.x, cta = blockIdx.x;
  const int64_t begin = cta * p.units / ctas, end = (cta + 1) * p.units / ctas;

  if (warp == CH) {
    // The producer (one thread): the first stage's boxes of B into L2 while the previous kernel
    // finishes, then the ring.
    if (lane != 0) return;
    {
      const Stage s0 = stage_at(p, begin, end, CH);
      const int n0 = static_cast<int>((s0.t / p.tok_blocks) * Cfg::kRows);
      for (int c = 0; c < s0.n; ++c) tma_prefetch_l2(&map_b, static_cast<int>((s0.j + c) * plan::kStageK), n0);
    }
    grid_dependency_wait();
    uint32_t i = 0;
    for (int64_t u = begin; u < end; ++i) {
      const Stage st = stage_at(p, u, end, CH);
      const int s = static_cast<int>(i % S);
      ptx::mbar_wait(empty0 + 8 * s, ((i / S) & 1) ^ 1);
      const int n0 = static_cast<int>((st.t / p.tok_blocks) * Cfg::kRows);
      const int m0 = static_cast<int>((st.t % p.tok_blocks) * Cfg::kToks);
      const uint32_t full = full0 + 8 * s, base = ring + s * Cfg::kStageBytes;
      if (p.box3d && st.n == CH) {
        // A whole stage in one box each: every row's CH x 128 bytes as one contiguous read.
        ptx::mbar_expect_tx(full, CH * (Cfg::kBoxB + Cfg::kBoxA));
        tma_load_3d(base, &map_b3, full, 0, n0, static_cast<int>(st.j));
        tma_load_3d(base + CH * Cfg::kBoxB, &map_a3, full, 0, m0, static_cast<int>(st.j));
      } else {
        ptx::mbar_expect_tx(full, static_cast<uint32_t>(st.n) * (Cfg::kBoxB + Cfg::kBoxA));
        for (int c = 0; c < st.n; ++c) {
          const int k = static_cast<int>((st.j + c) * plan::kStageK);
          ptx::tma_load(base + c * Cfg::kBoxB, &map_b, full, k, n0);
          ptx::tma_load(base + CH * Cfg::kBoxB + c * Cfg::kBoxA, &map_a, full, k, m0);
        }
      }
      u += st.n;
    }
    return;
  }

  // The consumers: warp w multiplies box w of each stage (zeros past the problem's edges: TMA
  // fills them). Row r's 16-byte column c sits at r * 128 + ((c ^ (r % 8)) * 16): every row a
  // lane reads has r % 8 == g.
  grid_dependency_wait();
  const int g = lane >> 2, q = lane & 3;
  Acc<Cfg::kAccumF16> acc[MT][NT];
  uint32_t i = 0;
  for (int64_t u = begin; u < end; ++i) {
    const Stage st = stage_at(p, u, end, CH);
    const int s = static_cast<int>(i % S);
    ptx::mbar_wait(full0 + 8 * s, (i / S) & 1);
    if (warp < st.n) {
      const uint32_t box_b = ring + s * Cfg::kStageBytes + warp * Cfg::kBoxB;
      const uint32_t box_a = ring + s * Cfg::kStageBytes + CH * Cfg::kBoxB + warp * Cfg::kBoxA;
      F f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t col = static_cast<uint32_t>(((2 * q + h) ^ g) * 16);
#pragma unroll
        for (int t = 0; t < MT; ++t)
#pragma unroll
          for (int r = 0; r < 2; ++r) f.w[t][r][h] = lds16(box_b + (16 * t + 8 * r + g) * 128 + col);
#pragma unroll
        for (int j = 0; j < NT; ++j) f.a[j][h] = lds16(box_a + (8 * j + g) * 128 + col);
      }
      f.compute(acc);
    }
    __syncwarp();
    if (lane == 0) ptx::mbar_arrive(empty0 + 8 * s);
    u += st.n;
    if (u != end && u % p.chunks != 0) continue;

    // The CTA's last stage of tile st.t: its warps' sums to warp 0, in warp order.
    float4 out[MT][NT];
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int j = 0; j < NT; ++j) out[t][j] = acc[t][j].get(), acc[t][j] = Acc<Cfg::kAccumF16>{};
    if constexpr (CH > 1) {
      if (warp > 0)
#pragma unroll
        for (int e = 0; e < MT * NT; ++e) red[((warp - 1) * MT * NT + e) * 32 + lane] = out[e / NT][e % NT];
      ptx::named_sync(1, 32 * CH);  // the consumers only
      if (warp == 0)
#pragma unroll
        for (int w = 0; w < CH - 1; ++w)
#pragma unroll
          for (int e = 0; e < MT * NT; ++e)
            out[e / NT][e % NT] = out[e / NT][e % NT] + red[(w * MT * NT + e) * 32 + lane];
      ptx::named_sync(1, 32 * CH);  // the consumers only
    }
    if (warp != 0) continue;
    Where at{p.m, p.n, p.k, (st.t / p.tok_blocks) * Cfg::kRows, (st.t % p.tok_blocks) * Cfg::kToks, g, q};
    const int64_t lo = cta_of(st.t * p.chunks, p.units, ctas),
                  hi = cta_of(st.t * p.chunks + p.chunks - 1, p.units, ctas);
    if (lo == hi) {
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int j = 0; j < NT; ++j) F::store(p.C, at, t, j, out[t][j]);
      continue;
    }
    float4* mine = p.partials + (st.t + cta) * Cfg::kEntries;
#pragma unroll
    for (int e = 0; e < MT * NT; ++e) __stcg(mine + e * 32 + lane, out[e / NT][e % NT]);
    __threadfence();
    __syncwarp();
    unsigned last = 0;
    if (lane == 0) last = atomicAdd(p.counters + st.t, 1u) == static_cast<unsigned>(hi - lo);
    if (!__shfl_sync(0xffffffffu, last, 0)) continue;
    __threadfence();
    // Contributor by contributor, each one's entries loaded together: one L2 round trip per
    // contributor, not one per entry (warp 0 holds up the ring while it adds).
    float4 sum[MT * NT];
    for (int64_t c = lo; c <= hi; ++c) {
      float4 v[MT * NT];
      const float4* part = p.partials + (st.t + c) * Cfg::kEntries + lane;
#pragma unroll
      for (int e = 0; e < MT * NT; ++e) v[e] = c == cta ? out[e / NT][e % NT] : __ldcg(part + e * 32);
#pragma unroll
      for (int e = 0; e < MT * NT; ++e) sum[e] = c == lo ? v[e] : sum[e] + v[e];
    }
#pragma unroll
    for (int e = 0; e < MT * NT; ++e) F::store(p.C, at, e / NT, e % NT, sum[e]);
    if (lane == 0) p.counters[st.t] = 0;  // the workspace contract: leave it as found
  }
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  using Fallback = cudal2_stream::Gemm<typename Cfg::Fallback>;

  static int sm_count() {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }

  struct Work {
    plan::Grid tiles;  // x: token blocks, y: 64-row tiles
    int64_t chunks = 0, units = 0, ctas = 0;
  };
  // splits: CTAs per SM (each with its own producer and ring); their rings must fit an SM.
  static constexpr int kMaxCtasPerSm = 4;
  static Work work_of(const cudal2_gemm_args& a, int sms) {
    Work w;
    w.tiles = plan::grid(a.m, a.n, Cfg::kRows, Cfg::kToks, 1);
    w.chunks = (a.k + plan::kStageK - 1) / plan::kStageK;
    w.units = w.tiles.x * w.tiles.y * w.chunks;
    const int64_t slots = int64_t(sms) * (a.splits < 1 ? 1 : a.splits);
    w.ctas = slots < w.units ? slots : w.units;
    return w;
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "stream kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits < 1 || a.splits > kMaxCtasPerSm) return "stream bulk: splits (CTAs per SM) must be in 1..4";
    if (!cudal2_shim::rows_16b_aligned(a, true)) return Fallback::refusal(a);
    return nullptr;
  }

  // A counter per tile, then a partial per (tile + CTA) slot.
  static size_t workspace_bytes(const Work& w) {
    return plan::counters_bytes(w.tiles) + static_cast<size_t>(w.tiles.x * w.tiles.y + w.ctas) * Cfg::kEntries * 16;
  }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    if (!cudal2_shim::rows_16b_aligned(a, true)) return Fallback::workspace_size(a);
    return workspace_bytes(work_of(a, sm_count()));
  }

  // A row-major (rows x k) fp16 matrix seen as (64, rows, k / 64): a box of (64, box_rows, CH) is
  // one stage, laid out chunk by chunk as the 2-D boxes are (128-byte swizzle, zeros past the
  // rows), read as box_rows runs of CH x 128 contiguous bytes. Needs k % 64 == 0.
  static bool encode_stages(CUtensorMap* map, const void* ptr, int64_t rows, int64_t k, int box_rows) {
    const cuuint64_t dims[3] = {64, cuuint64_t(rows), cuuint64_t(k / plan::kStageK)};
    const cuuint64_t strides[2] = {cuuint64_t(k) * 2, 128};
    const cuuint32_t box[3] = {64, cuuint32_t(box_rows), cuuint32_t(Cfg::CH)};
    const cuuint32_t elem[3] = {1, 1, 1};
    return cudal2_tma::encoder()(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<void*>(ptr), dims, strides, box,
                                 elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  }

  // The ring's shared memory, allowed once per device.
  static cudaError_t allow_smem() {
    static std::atomic<bool> done[64];
    int dev = 0;
    if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
    if (dev >= 0 && dev < 64 && done[dev].load(std::memory_order_acquire)) return cudaSuccess;
    const cudaError_t e =
        cudaFuncSetAttribute(stream_bulk_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmem);
    if (e == cudaSuccess && dev >= 0 && dev < 64) done[dev].store(true, std::memory_order_release);
    return e;
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    if (!cudal2_shim::rows_16b_aligned(a, true)) return Fallback::run(a, stream);
    const int sms = sm_count();
    if (sms < 1) return "stream bulk: cannot read the device's SM count";
    const Work w = work_of(a, sms);
    if (a.workspace == nullptr || a.workspace_bytes < workspace_bytes(w))
      return "stream bulk: needs the workspace cudal2_workspace_size asks for";
    if (const cudaError_t e = allow_smem(); e != cudaSuccess) return cudaGetErrorString(e);
    if (!cudal2_tma::encoder()) return "cuTensorMapEncodeTiled not found in the driver";
    CUtensorMap map_a, map_b, map_a3{}, map_b3{};
    if (!cudal2_tma::encode(&map_a, a.A, a.m, a.k, Cfg::kToks) ||
        !cudal2_tma::encode(&map_b, a.B, a.n, a.k, Cfg::kRows))
      return "cuTensorMapEncodeTiled refused the operands";
    const bool box3d = a.k % plan::kStageK == 0 && encode_stages(&map_a3, a.A, a.m, a.k, Cfg::kToks) &&
                       encode_stages(&map_b3, a.B, a.n, a.k, Cfg::kRows);
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.tok_blocks = w.tiles.x, p.chunks = w.chunks, p.units = w.units;
    p.counters = static_cast<unsigned*>(a.workspace);
    p.partials = reinterpret_cast<float4*>(static_cast<char*>(a.workspace) + plan::counters_bytes(w.tiles));
    p.box3d = box3d ? 1 : 0;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(w.ctas), 1, 1);
    cfg.blockDim = dim3(Cfg::kThreads, 1, 1);
    cfg.dynamicSmemBytes = Cfg::kSmem;
    cfg.stream = static_cast<cudaStream_t>(stream);
    cudaLaunchAttribute at[1];
    unsigned n_at = 0;
    add_pdl_attribute(at, n_at);
    cfg.attrs = at;
    cfg.numAttrs = n_at;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, stream_bulk_kernel<Cfg>, map_a, map_b, map_a3, map_b3, p);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_stream_bulk
