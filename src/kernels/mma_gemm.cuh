// Family mma: a raw-CUDA HGEMM for small and skinny shapes (sm_80-class instructions, built
// for sm_90a). Multi-stage cp.async pipeline into padded shared memory, ldmatrix, mma.sync
// m16n8k16 with fp32 or fp16 accumulators, and split-K reduced inside the same launch.
// C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn", column-major "tn"), any M, N, K.
// One configuration is the type cudal2_mma::Gemm<Config<...>>; a generated .cu includes this file
// and exports that type through the kernel C ABI (cudal2_kernel_shim.h):
//   #include "mma_gemm.cuh"
//   using cudal2_kernel = cudal2_mma::Gemm<cudal2_mma::Config<false, false, 64, 64, 32, 2, 2, 3>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "mma nn f32 tile=64x64x32 warps=2x2 stages=3")
#pragma once
#include "cudal2_kernel_shim.h"
#include "mma_common.cuh"
#include "mma_plan.h"

namespace cudal2_mma {
namespace {
using namespace cudal2_mma_common;
namespace plan = cudal2_plan;

// One compile-time configuration (codegen/family_mma.cpp writes it from a spec).
template <bool kLayoutTN, bool kAccumF16, int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kStageCount>
struct Config {
  static constexpr bool kTN = kLayoutTN;                       // B stored as N rows of K
  static constexpr bool kF16 = kAccumF16;                      // fp16 accumulators
  static constexpr int BM = kTileM, BN = kTileN, BK = kTileK;  // CTA tile
  static constexpr int WM = kWarpsM, WN = kWarpsN;             // warps along M and N
  static constexpr int kStages = kStageCount;
  static constexpr int KW = 1;  // warps splitting each stage's K (lat_staged sets more)
};

// The device side of configuration Cfg.
template <class Cfg>
struct Tile {
  static constexpr bool kTN = Cfg::kTN, kF16 = Cfg::kF16;
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN, kStages = Cfg::kStages;
  // KW warps share each warp tile, warp kw taking every KW-th 16-wide k step of a stage: every
  // warp loads its share of the stages.
  static constexpr int KW = Cfg::KW;
  static constexpr int kThreads = WM * WN * KW * 32;
  static constexpr int WTM = BM / WM, WTN = BN / WN;  // warp tile
  static constexpr int MI = WTM / 16, NI = WTN / 8;   // m16n8 accumulator tiles per warp
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");
  static_assert(BK % 16 == 0 && BK % 8 == 0, "tile K must be a multiple of 16");
  static_assert(kStages >= 2, "the pipeline needs two stages");
  static_assert(KW >= 1 && BK / 16 % KW == 0, "the k-warps split a stage's 16-wide k steps evenly");

  // Shared-memory pitches: 8 halves of padding per row keep the 8 rows an ldmatrix reads in
  // distinct bank groups (no swizzle arithmetic in the address math).
  static constexpr int LDA = BK + plan::kPad;
  static constexpr int LDB = kTN ? BK + plan::kPad : BN + plan::kPad;
  static constexpr int kAStage = plan::mma_a_stage_elems(BM, BK), kBStage = plan::mma_b_stage_elems(BN, BK, kTN);
  static constexpr int kSmem = plan::mma_smem_bytes(BM, BN, BK, kStages, kTN);
  static_assert(kSmem <= plan::kSmemBudget, "stages do not fit in shared memory");

  struct Params {
    const __half* A;
    const __half* B;
    __half* C;
    int64_t m, n, k;
    int splits;        // effective split count (= gridDim.z)
    int* counters;     // per output tile, zero between launches (split-K only)
    float4* partials;  // fp32 partial tiles, [tile][split][BM*BN/4 float4 in thread order]
    bool c_vec;        // N even and C 4-byte aligned: half2 stores
  };

  // One 16-byte chunk of a tile into shared memory: cp.async on the aligned path (zeros past the
  // edge), checked element loads otherwise.
  template <bool kAligned>
  static __device__ __forceinline__ void copy16(__half* s, const __half* g, int64_t rows, int64_t cols, int64_t r,
                                                int64_t c) {
    if constexpr (kAligned) {
      const bool valid = r < rows && c < cols;
      cp_async16(s, valid ? g + r * cols + c : g, valid);
    } else {
      *reinterpret_cast<uint4*>(s) = load8<false>(g, rows, cols, r, c);
    }
  }

  // Copies a (rows x cols) tile, cols a multiple of 8, starting at global (r0, c0), into shared
  // memory with pitch ld; every thread takes chunks tid, tid + kThreads, ...
  template <bool kAligned, int kRows, int kCols, int kLd>
  static __device__ __forceinline__ void load_tile(__half* s, const __half* g, int64_t rows, int64_t cols, int64_t r0,
                                                   int64_t c0, int tid) {
    constexpr int kChunksPerRow = kCols / 8, kChunks = kRows * kChunksPerRow;
    constexpr int kIters = (kChunks + kThreads - 1) / kThreads;
    auto chunk = [&](int it) {
      const int idx = it * kThreads + tid;
      if (kChunks % kThreads == 0 || idx < kChunks) {
        const int r = idx / kChunksPerRow, c = idx % kChunksPerRow * 8;
        copy16<kAligned>(s + r * kLd + c, g, rows, cols, r0 + r, c0 + c);
      }
    };
    if constexpr (kAligned) {
#pragma unroll
      for (int it = 0; it < kIters; ++it) chunk(it);
    } else {
#pragma unroll 1
      for (int it = 0; it < kIters; ++it) chunk(it);  // checked loads: one chunk at a time, few registers
    }
  }

  template <bool kAligned>
  static __device__ __forceinline__ void load_stage(const Params& p, __half* sA, __half* sB, int64_t m0, int64_t n0,
                                                    int64_t k0, int tid) {
    load_tile<kAligned, BM, BK, LDA>(sA, p.A, p.m, p.k, m0, k0, tid);
    if constexpr (kTN)
      load_tile<kAligned, BN, BK, LDB>(sB, p.B, p.n, p.k, n0, k0, tid);
    else
      load_tile<kAligned, BK, BN, LDB>(sB, p.B, p.k, p.n, k0, n0, tid);
  }

  // One stage's BK: per 16-wide k step (k-warp kw: steps kw, kw + KW, ...), ldmatrix this warp's
  // A and B fragments, then MI x NI mma.
  static __device__ __forceinline__ void compute_stage(const __half* sA, const __half* sB, Acc<kF16> (&acc)[MI][NI],
                                                       int wm, int wn, int lane, int kw) {
#pragma unroll
    for (int step = 0; step < BK / 16 / KW; ++step) {
      const int kk = kw + step * KW;
      uint32_t af[MI][4], bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)  // lanes 0-15: rows 0-15 at k 0; lanes 16-31: at k 8
        ldmatrix_x4(af[mi], sA + (wm * WTM + mi * 16 + (lane & 15)) * LDA + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {  // one x4 = two n8 tiles x two k halves
        uint32_t r[4];
        const int q = (lane >> 3) & 1, h = lane >> 4, row = lane & 7;
        if constexpr (kTN)
          ldmatrix_x4(r, sB + (wn * WTN + nj * 16 + h * 8 + row) * LDB + kk * 16 + q * 8);
        else
          ldmatrix_x4_trans(r, sB + (kk * 16 + q * 8 + row) * LDB + wn * WTN + nj * 16 + h * 8);
        bf[2 * nj][0] = r[0], bf[2 * nj][1] = r[1], bf[2 * nj + 1][0] = r[2], bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) acc[mi][ni].mma(af[mi], bf[ni][0], bf[ni][1]);
    }
  }

  // acc += A[m0.., k0..] * B[k0.., n0..] over nt tiles of BK through the kStages-deep ring at sA,
  // sB: kStages-1 tiles in flight before the first mma (all of them when nt < kStages).
  template <bool kAligned>
  static __device__ __forceinline__ void mainloop(const Params& p, __half* sA, __half* sB, int64_t m0, int64_t n0,
                                                  int64_t k0, int nt, Acc<kF16> (&acc)[MI][NI], int tid, int wm, int wn,
                                                  int lane, int kw) {
    // Prologue. Empty groups keep the count right.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < nt) load_stage<kAligned>(p, sA + s * kAStage, sB + s * kBStage, m0, n0, k0 + s * BK, tid);
      cp_async_commit();
    }
    for (int i = 0; i < nt; ++i) {
      cp_async_wait<kStages - 2>();  // tile i has landed (for this thread) ...
      __syncthreads();               // ... for every thread, and stage (i-1) is free again
      const int nx = i + kStages - 1;
      if (nx < nt)
        load_stage<kAligned>(p, sA + nx % kStages * kAStage, sB + nx % kStages * kBStage, m0, n0, k0 + int64_t(nx) * BK,
                             tid);
      cp_async_commit();
      compute_stage(sA + i % kStages * kAStage, sB + i % kStages * kBStage, acc, wm, wn, lane, kw);
    }
  }
};

// The kernel reads the configuration through local constants, so its body is the code of the
// macro-configured header it replaced (and compiles to the same PTX).
template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(Tile<Cfg>::kThreads, 1) mma_gemm_kernel(const typename Tile<Cfg>::Params p) {
  using T = Tile<Cfg>;
  constexpr bool kF16 = T::kF16;
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, WN = T::WN, kStages = T::kStages, kThreads = T::kThreads;
  constexpr int WTM = T::WTM, WTN = T::WTN, MI = T::MI, NI = T::NI, kAStage = T::kAStage, kBStage = T::kBStage;
  extern __shared__ __align__(128) unsigned char smem[];
  __half* sA = reinterpret_cast<__half*>(smem);
  __half* sB = sA + kStages * kAStage;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WN, wn = warp % WN;
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  const auto kr = plan::split_k_range(p.k, BK, p.splits, blockIdx.z);
  const int nt = static_cast<int>((kr.end - kr.begin + BK - 1) / BK);

  Acc<kF16> acc[MI][NI];
  T::template mainloop<kAligned>(p, sA, sB, m0, n0, kr.begin, nt, acc, tid, wm, wn, lane, 0);

  float4 out[MI][NI];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) out[mi][ni] = acc[mi][ni].get();

  if (p.splits > 1) {
    // In-launch split-K: every split stores its fp32 partial (in thread order: coalesced, no
    // index math), then counts itself in; the last to arrive sums all partials in split order
    // (deterministic whatever the arrival order; re-reading its own from L2 costs less than
    // holding a second accumulator set in registers), writes C and re-arms the counter.
    __shared__ int is_last;
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    float4* base = p.partials + tile * p.splits * (BM * BN / 4);
    float4* mine = base + int64_t(blockIdx.z) * (BM * BN / 4);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) __stcg(mine + (mi * NI + ni) * kThreads + tid, out[mi][ni]);
    __threadfence();  // partials visible device-wide before the count says so
    __syncthreads();
    if (tid == 0) {
      is_last = atomicAdd(p.counters + tile, 1) == p.splits - 1;
      if (is_last) atomicExch(p.counters + tile, 0);  // zero again for the next launch
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    // kU splits' loads in flight at once: the reduction is L2-latency bound. At most 128 (with a
    // 64x32 warp tile: 64) registers of them beside the sums, so nothing spills.
    constexpr int kInFlight = (MI * NI <= 8 ? 32 : 16) / (MI * NI);
    constexpr int kU = kInFlight < 1 ? 1 : kInFlight > 8 ? 8 : kInFlight;
    for (int s0 = 0; s0 < p.splits; s0 += kU) {
      float4 v[kU][MI * NI];
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (s0 + u < p.splits)
#pragma unroll
          for (int j = 0; j < MI * NI; ++j)  // .cg: L2, where the other SMs' stores are
            v[u][j] = __ldcg(base + int64_t(s0 + u) * (BM * BN / 4) + j * kThreads + tid);
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (s0 + u < p.splits)
#pragma unroll
          for (int j = 0; j < MI * NI; ++j) out[j / NI][j % NI] = s0 + u == 0 ? v[u][j] : out[j / NI][j % NI] + v[u][j];
    }
  }

  const int64_t r0 = m0 + wm * WTM + (lane >> 2), c0 = n0 + wn * WTN + (lane & 3) * 2;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) store_c(p.C, p.m, p.n, r0 + mi * 16, c0 + ni * 8, out[mi][ni], p.c_vec);
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  using T = Tile<Cfg>;
  using Params = typename T::Params;
  static constexpr bool kTN = T::kTN;
  static constexpr int BM = T::BM, BN = T::BN, BK = T::BK, kThreads = T::kThreads, kSmem = T::kSmem;

  static plan::Grid grid_of(const cudal2_gemm_args& a) { return plan::grid(a.m, a.n, a.k, BM, BN, BK, a.splits); }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "mma kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits < 1 || a.splits > plan::kMaxSplits) return "splits must be 1..64";
    if (!plan::grid_fits(grid_of(a))) return "too many M tiles for the grid (at most 65535)";
    return nullptr;
  }

  // The 16-byte cp.async path needs every row of A and B to start 16-byte aligned.
  static bool aligned(const cudal2_gemm_args& a) { return cudal2_shim::rows_16b_aligned(a, kTN); }

  template <bool kAligned>
  static cudaError_t launch(const Params& p, const plan::Grid& g, cudaStream_t s) {
    // Once per artifact (and per path): not a stream operation, but no need to repeat it.
    static const cudaError_t attr =
        cudaFuncSetAttribute(mma_gemm_kernel<Cfg, kAligned>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (attr != cudaSuccess) return attr;
    mma_gemm_kernel<Cfg, kAligned><<<dim3(unsigned(g.x), unsigned(g.y), unsigned(g.z)), kThreads, kSmem, s>>>(p);
    return cudaGetLastError();
  }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    if (refusal(a)) return 0;
    return plan::workspace_bytes(grid_of(a), BM, BN);
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    const auto g = grid_of(a);
    const size_t need = plan::workspace_bytes(g, BM, BN);
    if (need && (!a.workspace || a.workspace_bytes < need || reinterpret_cast<uintptr_t>(a.workspace) % 16))
      return "workspace too small or misaligned for split-K";
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.splits = static_cast<int>(g.z);
    p.counters = static_cast<int*>(a.workspace);
    p.partials = need ? reinterpret_cast<float4*>(static_cast<char*>(a.workspace) + plan::partials_offset(g)) : nullptr;
    p.c_vec = a.n % 2 == 0 && reinterpret_cast<uintptr_t>(a.C) % 4 == 0;
    auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = aligned(a) ? launch<true>(p, g, s) : launch<false>(p, g, s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_mma
