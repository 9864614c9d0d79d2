// Family stream_sweep: decode GEMMs (M <= 64 tokens against TN weights B, N x K row-major, K
// contiguous) with the fewest instructions per weight byte, for weights the L2 holds (and beyond).
// The `stream` kernel (stream_gemm.cuh) is bound there by each warp's serial stage steps and
// their bookkeeping (Nsight Compute: ~0.17 instructions a weight byte, 61% of cycles with no
// eligible warp), while the read-limit kernel (measure/read_limit.cu) reads the same bytes in half
// the time with ~0.01 instructions a byte: eight 16-byte loads a lane in flight and nothing else.
// This kernel is that read loop with the multiply folded in:
//  - a warp owns 16 * kRowTiles rows of B and a contiguous range of K; lane (g, t) reads 16 bytes
//    of rows g and g + 8 at K offset 8t of each 32-wide step, and the tokens' 16 bytes of token g
//    (and 8 + g) at the same K. Those registers are mma.sync m16n8k16 fragments as loaded (the K
//    order inside a fragment is free as long as A and B agree), so a step costs 2 * kRowTiles +
//    kTokTiles loads and 2 * kRowTiles * kTokTiles MMAs a lane, nothing else;
//  - kSteps steps are loaded before the first is multiplied (all loads of a batch in flight), and
//    each warp walks its range with one pointer increment a batch; rows past N read row N - 1 and
//    tokens past M read token M - 1 (their outputs are never stored), so the main loop has no
//    bounds check. Only the range's last, partial step checks K;
//  - K is split over the CTA's kWarps warps (reduced through shared memory) and over the CTAs of
//    a thread-block cluster (a launch attribute, 1..8 CTAs, picked so that one wave of CTAs holds
//    every row tile: reduced through distributed shared memory in rank order). One launch, no
//    workspace, and the same bits whichever CTA finishes first. With 16-64 tokens the warps of a
//    CTA own rows of their own instead (Config::kWarpRows) and share its K range and its tokens.
// NN (Config::kNN: B row-major K x N, N contiguous) reads 2 MT columns of 8 K rows a lane a step
// (4 MT bytes each: a warp instruction covers 4 rows, 32 MT contiguous bytes of each) and pairs
// two rows' values of a column into a fragment word with a byte permute: the same bytes and MMAs
// a step as TN, 16 byte permutes more.
// C (row-major M x N) = A (row-major M x K) * B (column-major K x N, TN; or row-major, NN), M <= 64,
// K % 8 == 0 (NN: N % 8 == 0) and A, B 16-byte aligned (the runtime sends other shapes elsewhere);
// fp32 accumulation. Measured,
// and where the runtime runs it: bench/results/h200/bandwidth/sweep/, runtime/stream_rule.hpp.
//   #include "stream_sweep_gemm.cuh"
//   using cudal2_kernel = cudal2_stream_sweep::Gemm<cudal2_stream_sweep::Config<1, 1, 8, 2, 3, 0, 1>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1")
// (codegen/family_stream_sweep.cpp writes these sources from spec texts.)
#pragma once
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cluster_sum.cuh"
#include "cudal2_kernel_shim.h"
#include "device_sms.cuh"
#include "ld_stream.cuh"
#include "mma_common.cuh"
#include "pdl.cuh"
#include "stream_sweep_plan.h"

namespace cudal2_stream_sweep {
namespace {
using cudal2_device::device_sms;
using cudal2_ld::ld_stream16;
using cudal2_ld::ld_stream_words;
using namespace cudal2_mma_common;
using namespace cudal2_pdl;
namespace cg = cooperative_groups;

// kRowTiles: 16-row tiles of B a warp covers; kTokTiles: 8-token tiles (M <= 8 * kTokTiles);
// kWarps: warps a CTA (each a slice of K, or rows of its own: kWarpRows); kSteps: 32-wide K steps a warp loads before
// it multiplies the first; kMinCtas: CTAs an SM must hold at once (caps a thread's registers);
// kPdl: 1 lets the next kernel launch as soon as every CTA has started (0: no programmatic
// dependent launch; replayed back to back, the next launch's CTAs then take no SM slot while
// this one still streams). kPipelined: 1 issues the loads of the next batch of steps before it multiplies this one (two
// batches of registers: a warp never waits with nothing in flight; from DRAM and cold that is what the plain loop
// lacked).
// kWarpRows: 0 splits the CTA's K range over its warps (each warp the CTA's rows); 1 gives each warp
// rows of its own over the CTA's whole K range, so the warps of a CTA read the same tokens at the
// same time and all but the first find them in L1: with 16-64 tokens the tokens' bytes a step
// outweigh a row tile's, and splitting K over warps reads them from L2 once a warp.
// kLayoutNN: 1 reads B row-major (K x N, N contiguous: the NN layout) instead of TN (below).
// kL2KeepMode: 1 loads B without L1::no_allocate (ld_stream.cuh ld_weights16), so that weights the
// next call reads again stay in the L2 (0: they do not).
template <int kRowTiles, int kTokTiles, int kWarpsPerCta, int kStepsInFlight, int kMinCtasPerSm, int kPdlMode = 0,
          int kPipelined = 0, int kWarpRowsMode = 0, int kLayoutNN = 0, int kL2KeepMode = 0>
struct Config {
  static constexpr int MT = kRowTiles, NT = kTokTiles, kWarps = kWarpsPerCta, kSteps = kStepsInFlight;
  static constexpr int kCtas = kMinCtasPerSm, kPdl = kPdlMode, kPipe = kPipelined, kWarpRows = kWarpRowsMode;
  static constexpr bool kNN = kLayoutNN != 0;
  static constexpr int kKeep = kL2KeepMode;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRows = 16 * MT * (kWarpRows ? kWarps : 1), kToks = 8 * NT;
  static constexpr int kWarpsK = kWarpRows ? 1 : kWarps;  // warps splitting the CTA's K range
  static_assert(MT >= 1 && MT <= 4, "stream_sweep: 1..4 row tiles");
  static_assert(NT >= 1 && NT <= 8, "stream_sweep: 1..8 token tiles");
  static_assert(kWarpRows == 0 || kWarpRows == 1, "stream_sweep: warp rows 0 or 1");
  static_assert(kWarps * MT * NT * 32 * 16 <= 48 * 1024,
                "stream_sweep: the partial tiles exceed 48 KiB of shared memory");
  static_assert(kPdl == 0 || kPdl == 1, "stream_sweep: pdl 0 or 1");
  static_assert(kWarps >= 1 && kWarps <= 16, "stream_sweep: 1..16 warps");
  static_assert(kSteps >= 1 && kSteps <= 16, "stream_sweep: 1..16 steps in flight");
  static_assert(kCtas >= 1 && kCtas * kThreads <= 2048, "stream_sweep: at most 2048 threads an SM");
  static_assert(kPipe == 0 || kPipe == 1, "stream_sweep: pipelined 0 or 1");
  static_assert(kKeep == 0 || kKeep == 1, "stream_sweep: keep 0 or 1");
  static_assert(kLayoutNN == 0 || (kLayoutNN == 1 && (MT == 1 || MT == 2 || MT == 4)),
                "stream_sweep: layout 0 (TN) or 1 (NN, with 1, 2 or 4 row tiles a warp)");
};

using cudal2_sweep_plan::kMaxCluster;
constexpr int kStep = cudal2_sweep_plan::kStepK;

struct Params {
  const __half* A;
  const __half* B;
  __half* C;
  int m, n, k;
  int cluster;  // CTAs splitting K in one cluster (the launch attribute)
};

__device__ __forceinline__ uint4 ld_tokens(const __half* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

// One step's registers, the tokens' 16 bytes of token g (and 8 + g) at K offset 8q of the step and:
//  - TN: 16 bytes of rows g and g + 8 of each row tile at the same K (w[t][r]: row 8r + g of tile t);
//  - NN: the 2 MT columns 2 MT g.. of the warp's columns at each of the 8 K rows 8q + i (w[i]: word
//    t holds columns 2t and 2t + 1). Each MMA row pairs with a column: MMA t's row g is column
//    2 MT g + 2t and its row g + 8 the next, so a fragment word is two K rows of one column, put
//    together with a byte permute.
template <int MT, int NT, bool kNN>
struct Step;
template <int MT, int NT>
struct Step<MT, NT, false> {
  uint4 w[MT][2];
  uint4 a[NT];
};
template <int MT, int NT>
struct Step<MT, NT, true> {
  uint32_t w[8][MT];
  uint4 a[NT];
};

// Fragment words of one MMA from a step's weights: lo covers the step's K elements 8q..8q+3 of
// the lane, hi 8q+4..8q+7, in the order the tokens' words x, y (lo) and z, w (hi) hold them.
template <int MT, int NT>
__device__ __forceinline__ void fragments(const Step<MT, NT, false>& s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
  lo[0] = s.w[t][0].x, lo[1] = s.w[t][1].x, lo[2] = s.w[t][0].y, lo[3] = s.w[t][1].y;
  hi[0] = s.w[t][0].z, hi[1] = s.w[t][1].z, hi[2] = s.w[t][0].w, hi[3] = s.w[t][1].w;
}
template <int MT, int NT>
__device__ __forceinline__ void fragments(const Step<MT, NT, true>& s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
  // 0x5410: the low halves of two words (column 2t at two K rows); 0x7632: the high halves (2t + 1).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint32_t(&f)[4] = h == 0 ? lo : hi;
    const int i = 4 * h;
    f[0] = __byte_perm(s.w[i][t], s.w[i + 1][t], 0x5410), f[1] = __byte_perm(s.w[i][t], s.w[i + 1][t], 0x7632);
    f[2] = __byte_perm(s.w[i + 2][t], s.w[i + 3][t], 0x5410);
    f[3] = __byte_perm(s.w[i + 2][t], s.w[i + 3][t], 0x7632);
  }
}

template <int MT, int NT, bool kNN>
__device__ __forceinline__ void multiply(Acc<false> (&acc)[MT][NT][2], const Step<MT, NT, kNN>& s) {
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    uint32_t lo[4], hi[4];
    fragments(s, t, lo, hi);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      acc[t][j][0].mma(lo, s.a[j].x, s.a[j].y);
      acc[t][j][1].mma(hi, s.a[j].z, s.a[j].w);
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtas) stream_sweep_kernel(const Params p) {
  constexpr int MT = Cfg::MT, NT = Cfg::NT, W = Cfg::kWarps, U = Cfg::kSteps;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int rank = static_cast<int>(blockIdx.x) % p.cluster;
  const int tile = static_cast<int>(blockIdx.x) / p.cluster;
  const int n0 = tile * Cfg::kRows + (Cfg::kWarpRows ? warp * 16 * MT : 0);  // this warp's first row

  // This warp's K range, in whole steps (the last step of K may be partial).
  const int steps = (p.k + kStep - 1) / kStep;
  const int splits = Cfg::kWarpsK * p.cluster, split = Cfg::kWarpRows ? rank : rank * W + warp;
  const int s0 = static_cast<int>(int64_t(steps) * split / splits);
  const int s1 = static_cast<int>(int64_t(steps) * (split + 1) / splits);
  const int full_end = min(s1, p.k / kStep);  // steps wholly inside K

  if constexpr (Cfg::kPdl == 1) launch_dependents();
  grid_dependency_wait();  // the previous kernel's writes (our A or B, perhaps) are visible now

  const int64_t k0 = int64_t(s0) * kStep + 8 * q;
  using St = Step<MT, NT, Cfg::kNN>;
  // TN: a pointer per row of the lane's (rows past N read row N - 1); NN: one at K row k0 of the
  // lane's 2 MT columns (columns past N read the last 2 MT, whose outputs are never stored), its
  // 8 rows N apart. A step moves them kStep elements along K: kStep rows in NN.
  constexpr int kPtrs = Cfg::kNN ? 1 : 2 * MT;
  const int64_t w_step = Cfg::kNN ? int64_t(kStep) * p.n : kStep;
  const __half* wp[kPtrs];
  if constexpr (Cfg::kNN) {
    wp[0] = p.B + k0 * p.n + min(n0 + 2 * MT * g, p.n - 2 * MT);
  } else {
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int r = 0; r < 2; ++r) wp[2 * t + r] = p.B + int64_t(min(n0 + 16 * t + 8 * r + g, p.n - 1)) * p.k + k0;
  }
  const __half* ap[NT];
#pragma unroll
  for (int j = 0; j < NT; ++j) ap[j] = p.A + int64_t(min(8 * j + g, p.m - 1)) * p.k + k0;

  auto load_weights = [&](St& st, int64_t off) {
    if constexpr (Cfg::kNN) {
#pragma unroll
      for (int i = 0; i < 8; ++i) cudal2_ld::ld_weights_words<Cfg::kKeep, MT>(wp[0] + off + i * p.n, st.w[i]);
    } else {
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int r = 0; r < 2; ++r) st.w[t][r] = cudal2_ld::ld_weights16<Cfg::kKeep>(wp[2 * t + r] + off);
    }
  };
  Acc<false> acc[MT][NT][2];
  auto load = [&](St(&st)[U], int ahead) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      load_weights(st[u], (ahead + u) * w_step);
#pragma unroll
      for (int j = 0; j < NT; ++j) st[u].a[j] = ld_tokens(ap[j] + (ahead + u) * kStep);
    }
  };
  auto advance = [&](int steps) {
#pragma unroll
    for (int x = 0; x < kPtrs; ++x) wp[x] += steps * w_step;
#pragma unroll
    for (int j = 0; j < NT; ++j) ap[j] += steps * kStep;
  };
  int s = s0;
  if constexpr (Cfg::kPipe == 1) {
    // Two batches of registers in turn: the next batch's loads go out before this one's MMAs.
    auto multiply_all = [&](const St(&st)[U]) {
#pragma unroll
      for (int u = 0; u < U; ++u) multiply(acc, st[u]);
      s += U;
      advance(U);
    };
    if (s + U <= full_end) {
      St x[U], y[U];
      load(x, 0);
      while (true) {
        if (s + 2 * U > full_end) {
          multiply_all(x);
          break;
        }
        load(y, U);
        multiply_all(x);
        if (s + 2 * U > full_end) {
          multiply_all(y);
          break;
        }
        load(x, U);
        multiply_all(y);
      }
    }
  } else {
    for (; s + U <= full_end; s += U) {
      St st[U];
      load(st, 0);
#pragma unroll
      for (int u = 0; u < U; ++u) multiply(acc, st[u]);
      advance(U);
    }
  }
  // The range's remaining steps, one at a time; the lanes of a partial step past K read zeros
  // (K % 8 == 0: a lane's 8 K elements are all in or all out).
  for (; s < s1; ++s) {
    St st{};
    if (int64_t(s) * kStep + 8 * q < p.k) {
      load_weights(st, 0);
#pragma unroll
      for (int j = 0; j < NT; ++j) st.a[j] = ld_tokens(ap[j]);
    }
    multiply(acc, st);
    advance(1);
  }

  // The warps' partial tiles: red[warp][entry], entry e = (row tile t, token tile j, lane) as
  // ((t * NT + j) << 5) | lane. Warps splitting K: warp 0's slots end up holding the CTA's sum and
  // are the CTA's output; warps owning rows: every warp's slots are its rows' output.
  constexpr int kEntries = MT * NT * 32;
  constexpr int kOut = (Cfg::kWarpRows ? W : 1) * kEntries;  // output entries, red's first kOut
  __shared__ float4 red[W][kEntries];
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int j = 0; j < NT; ++j) red[warp][((t * NT + j) << 5) | lane] = acc[t][j][0].get() + acc[t][j][1].get();
  __syncthreads();
  if constexpr (!Cfg::kWarpRows)
    for (int e = static_cast<int>(threadIdx.x); e < kEntries; e += Cfg::kThreads) {
      float4 v = red[0][e];
#pragma unroll
      for (int w = 1; w < W; ++w) v = v + red[w][e];
      red[0][e] = v;
    }
  float4* const out = &red[0][0];

  // Output entry o = warp w's entry e: rows (the CTA's first) + 16 MT w + 16t + g (and + 8), tokens
  // 8j + 2q and 8j + 2q + 1 (w is 0 where warps split K). NN: columns + 16 MT w + 2 MT g + 2t (and
  // the next).
  auto store = [&](int o, float4 v) {
    const int w = o / kEntries, e = o % kEntries;
    const int t = (e >> 5) / NT, j = (e >> 5) % NT, gg = (e & 31) >> 2, qq = e & 3;
    const int base = tile * Cfg::kRows + 16 * MT * w;
    const int r0 = Cfg::kNN ? base + 2 * MT * gg + 2 * t : base + 16 * t + gg, r_step = Cfg::kNN ? 1 : 8;
    const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = r0 + r_step * (i >> 1), tok = 8 * j + 2 * qq + (i & 1);
      if (row < p.n && tok < p.m) p.C[int64_t(tok) * p.n + row] = __float2half_rn(vals[i]);
    }
  };
  if (p.cluster == 1) {
    __syncthreads();
    for (int o = static_cast<int>(threadIdx.x); o < kOut; o += Cfg::kThreads) store(o, out[o]);
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every rank's sums are in its red
  if (rank == 0)
    for (int o = static_cast<int>(threadIdx.x); o < kOut; o += Cfg::kThreads)
      store(o, cudal2_cluster_sum::cluster_sum<kMaxCluster>(cluster, &out[o], p.cluster));
  cluster.sync();  // this CTA's shared memory stays until rank 0 has read it
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  static int resident() {
    static const int n = [] {
      int r = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, stream_sweep_kernel<Cfg>, Cfg::kThreads, 0) !=
          cudaSuccess) {
        cudaGetLastError();
        r = 1;
      }
      return r < 1 ? 1 : r;
    }();
    return n;
  }

  // CTAs a cluster (stream_sweep_plan.h); a.splits > 1 asks for one. NN: as many as keep the launch
  // within two CTAs an SM, whatever the SM holds: its tiles are 2-4x wider than TN's, and on an H200
  // (bench/results/h200/bandwidth/nn/, back to back) 1-8 tokens ran fastest at ~256 CTAs, e.g.
  // 1x4096x4096 with 32 columns a warp 12.3 us at 256 CTAs against 15.9 at 512, 1x4096x14336 with 64
  // a warp 33.2 us at 256 against 37.2 at 128 and 39.5 at 512.
  static int cluster_of(const cudal2_gemm_args& a) {
    if (a.splits > 1) return static_cast<int>(a.splits);
    const int64_t tiles = (a.n + Cfg::kRows - 1) / Cfg::kRows;
    const int64_t slots = Cfg::kNN ? int64_t(2) * device_sms() : int64_t(device_sms()) * resident();
    return cudal2_sweep_plan::cluster(tiles, slots, Cfg::kWarpsK, a.k);
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.m > Cfg::kToks) return "stream_sweep: more tokens (M) than the kernel serves";
    if (!cudal2_shim::rows_16b_aligned(a, !Cfg::kNN))
      return Cfg::kNN ? "stream_sweep nn: needs K % 8 == 0, N % 8 == 0 and 16-byte aligned A and B"
                      : "stream_sweep: needs K % 8 == 0 and 16-byte aligned A and B";
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "stream_sweep kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits != 1 && a.splits != 2 && a.splits != 4 && a.splits != 8)
      return "stream_sweep: splits (CTAs a cluster) must be 1, 2, 4 or 8";
    return nullptr;
  }

  static size_t workspace_size(const cudal2_gemm_args&) { return 0; }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = static_cast<int>(a.m), p.n = static_cast<int>(a.n), p.k = static_cast<int>(a.k);
    p.cluster = cluster_of(a);
    const int64_t tiles = (a.n + Cfg::kRows - 1) / Cfg::kRows;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(tiles * p.cluster), 1, 1);
    cfg.blockDim = dim3(Cfg::kThreads, 1, 1);
    cfg.stream = static_cast<cudaStream_t>(stream);
    cudaLaunchAttribute at[2];
    unsigned n_at = 0;
    if (p.cluster > 1) add_cluster_attribute(at, n_at, static_cast<unsigned>(p.cluster));
    if (Cfg::kPdl == 1) add_pdl_attribute(at, n_at);
    cfg.attrs = at;
    cfg.numAttrs = n_at;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, stream_sweep_kernel<Cfg>, p);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_stream_sweep
