// Family stream: HGEMM for problems bound by reading the weights once (decode and small-batch
// linear layers: a few tokens M against a wide K x N operand B). The time such a problem can take
// is B's bytes over the GPU's read bandwidth, so everything here serves one goal: every SM keeps
// enough bytes of B in flight, from the first microsecond to the last, and reads each byte once.
//  - swap-AB: B's rows (N) run along the MMA's 16-row side and the tokens along its 8-column
//    side (mma.sync m16n8k16), so M = 1..8 wastes no weight bytes, only idle MMA lanes;
//  - B straight from global memory into registers, 16-byte (TN) or 8/16-byte (NN) streaming
//    loads that skip L1 (ld.global.nc.L1::no_allocate), kDepth stages of 64 K-elements per warp
//    in a register ring (kDepth - 1 in flight while one multiplies); no shared-memory staging, no
//    barrier in the mainloop. (Measured on an H200: a per-warp shared-memory ring filled by
//    cp.async, 3-8 stages deep, ran at 0.5-0.7 of this: one CTA per SM, each warp's issue of
//    copies, waits and shared loads serialized.) A fragment's K order is free as long as A and B
//    agree on it, so each thread reads whole 16-byte runs of a row and the fragments are taken
//    from them in a permuted K order (TN), or B's 2-byte rows are paired with a byte permute (NN,
//    where N is contiguous);
//  - the tokens' operand A is small and read by every CTA of a K range: plain cached loads, so
//    the warps of one CTA that share a K range share it through L1;
//  - K split across a CTA's warps (kWarpsK, reduced through shared memory) and across CTAs (the
//    runtime knob `splits`): each split leaves its fp32 partial tile in the workspace and the last
//    CTA of a tile to arrive adds the partials in split order and stores C (one launch,
//    deterministic bits whoever finishes first);
//  - PDL: the next kernel launches as soon as every CTA has started, and the weights' first
//    stage is prefetched into L2 before waiting for the previous kernel (a prefetch cannot read
//    stale data: L2 is where the previous kernel's writes land).
// C (row-major M x N) = A (row-major M x K) * B (K x N: row-major "nn", column-major "tn"), any M,
// N, K; unaligned rows take a checked element-wise path.
//   #include "stream_gemm.cuh"
//   using cudal2_kernel = cudal2_stream::Gemm<cudal2_stream::Config<true, false, 1, 2, 2, 4, 2>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "stream tn f32 toks=8 rows=2x2 kwarps=4 stages=2")
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cudal2_kernel_shim.h"
#include "mma_common.cuh"
#include "pdl.cuh"
#include "stream_plan.h"

namespace cudal2_stream {
namespace {
using namespace cudal2_mma_common;
using namespace cudal2_pdl;
namespace plan = cudal2_stream_plan;

// kTokTiles: 8-token column tiles a CTA covers (M <= 8 * kTokTiles in one pass over B; larger M
// takes several token blocks, each reading B again); kRowTiles: 16-row tiles of B per warp;
// kWarpsR x kWarpsK warps: along B's rows and along K; kDepth: stages in flight per warp;
// kMinCtas: CTAs an SM must hold at once (__launch_bounds__), which caps the registers a thread so
// that more warps, each with its stages in flight, share an SM (bytes in flight per SM are what a
// streaming read's rate follows); kAhead: stages of its own a warp asks L2 to fetch ahead of the
// one it loads (prefetch.global.L2: bytes in flight that hold no register; 0: none); kPdlMode:
// 1 lets the next kernel launch as soon as every CTA has started, 2 only once every CTA has left
// its mainloop (the next kernel's CTAs then cannot take SM slots while this one still streams),
// 0 launches without programmatic dependent launch at all.
template <bool kTN, bool kF16Acc, int kTokTiles, int kRowTiles, int kWarpsR, int kWarpsK, int kDepth, int kMinCtas = 1,
          int kAheadStages = 0, int kPdlMode = 1, int kLoadMode = 0, int kSplitOrderMode = 0, int kL2WholeRange = 0>
struct Config {
  static constexpr bool kLayoutTN = kTN, kAccumF16 = kF16Acc;
  static constexpr int NT = kTokTiles, MT = kRowTiles, WR = kWarpsR, WK = kWarpsK, D = kDepth, kCtas = kMinCtas;
  static constexpr int kAhead = kAheadStages, kPdl = kPdlMode, kLoad = kLoadMode;
  // kSplitOrder 1: split z of S takes the K stages z, z + S, z + 2S, ... (each of its k-warps
  // one of every WK of them) instead of a contiguous range, so that the CTAs sharing an output
  // tile read neighbouring stages of the same rows at the same time, as a CTA's k-warps do.
  // (Measured on an H200: CTAs reading the same rows at different K offsets at once, by
  // rotating each tile's range, ran 10% slower: the weights stream fastest when everything in
  // flight lies close together.)
  static constexpr int kSplitOrder = kSplitOrderMode;
  // kL2Whole 1: before anything else, the CTA asks L2 for its whole share of B (TN, contiguous
  // split ranges: one cp.async.bulk.prefetch.L2 per B row, the row's K range in one request),
  // so DRAM sees every byte of a launch requested in its first microsecond whatever the
  // registers hold. Only for weights that fit the L2 with room to spare: beyond it the
  // requests evict each other.
  static constexpr int kL2Whole = kL2WholeRange;
  static_assert(kL2Whole == 0 || (kL2Whole == 1 && kTN && kSplitOrderMode == 0),
                "stream: whole-range L2 prefetch only in TN with contiguous split ranges");
  static_assert(kSplitOrder == 0 || kSplitOrder == 1, "stream: split order 0 (ranges) or 1 (interleaved)");
  static_assert(kAhead >= 0 && kAhead <= 8, "stream: 0..8 stages fetched ahead");
  static_assert(kPdl >= 0 && kPdl <= 2, "stream: pdl 0, 1 or 2");
  static_assert(kLoad >= 0 && kLoad <= 6, "stream: load modes 0..6 (ld_stream16)");
  static constexpr int kThreads = 32 * WR * WK;
  static constexpr int kRows = 16 * MT * WR, kToks = 8 * NT;
  static_assert(NT >= 1 && NT <= 8, "stream: 1..8 token tiles");
  static_assert(kTN ? (MT >= 1 && MT <= 4) : (MT == 2 || MT == 4), "stream: row tiles 1..4 (tn), 2 or 4 (nn)");
  static_assert(kThreads <= 512, "stream: at most 16 warps");
  static_assert(D >= 1 && D <= 6, "stream: 1..6 stages in flight");
  static_assert(kCtas >= 1 && kCtas * kThreads <= 2048, "stream: at most 2048 threads an SM");
  // The k-warps' partial tiles, reduced in shared memory.
  static constexpr int kRedBytes = (WK > 1 ? WK - 1 : 1) * WR * MT * NT * 32 * 16;
  static_assert(kRedBytes <= 48 * 1024, "stream: k-warp reduction over 48 KB of shared memory");
};

// B's 16-byte loads. kLoad says how the caches treat them: 0 skips L1 (each line read once);
// 1 also asks L2 to fetch the whole 256-byte block from DRAM (the neighbouring k-warp's stage of
// the same rows: fewer, longer DRAM reads); 2 as 1 and marks the lines first to evict (weights are
// read once, the tokens and partials stay); 3 lets L1 keep the line (the two instructions that
// read a 32-byte sector's halves then get one L2 transfer, not two); 4 as 3 with the 256-byte
// fetch; 5 and 6 as 0 and 3 with the TN fragments' other K order (FragsTN: each instruction
// reads whole sectors).
#define CUDAL2_STREAM_LD16(q) \
  asm("ld.global.nc" q ".v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p))
template <int kLoad = 0>
__device__ __forceinline__ uint4 ld_stream16(const __half* p) {
  uint4 r;
  if constexpr (kLoad == 0 || kLoad == 5)
    CUDAL2_STREAM_LD16(".L1::no_allocate");
  else if constexpr (kLoad == 1)
    CUDAL2_STREAM_LD16(".L1::no_allocate.L2::256B");
  else if constexpr (kLoad == 2) {
    uint64_t policy;  // the evict-first priority takes a cache policy on 16-byte loads
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    asm("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4], %5;\n"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p), "l"(policy));
  } else if constexpr (kLoad == 3 || kLoad == 6)
    CUDAL2_STREAM_LD16("");
  else
    CUDAL2_STREAM_LD16(".L2::256B");
  return r;
}
#undef CUDAL2_STREAM_LD16
__device__ __forceinline__ uint2 ld_stream8(const __half* p) {
  uint2 r;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];\n" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p)); }
// `bytes` (a multiple of 16, from a 16-byte aligned address) into L2 by the copy engine: one
// instruction, no register or shared memory holds them.
__device__ __forceinline__ void bulk_prefetch_l2(const void* p, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(bytes) : "memory");
}
__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ __forceinline__ uint32_t u16(const __half* p, bool ok) { return ok ? ld_u16(p) : 0u; }

// Where a warp works: its first row of B (n0), first token (m0), lane coordinates.
struct Where {
  int64_t m, n, k;
  int64_t n0, m0;
  int g, q;  // lane / 4, lane % 4
};

// TN: B is N x K row-major (K contiguous). Thread (g, q) reads, for each of its rows (16t + g
// and 16t + g + 8), the 16 elements [16q, 16q + 16) of the stage's 64: two 16-byte loads, which
// the row's four threads issue as one 128-byte line per pair of instructions. (Measured on an
// H200: the variant whose single instructions cover contiguous 64-byte runs, [8q, 8q + 8) and
// [32 + 8q, ...), was slower.) MMA step s (0..3) takes the thread's elements 4s..4s+3 as its K
// order 2q, 2q+1, 2q+8, 2q+9; the tokens' elements at the same K positions give the B operand the
// same order.
template <class Cfg, bool kAligned>
struct FragsTN {
  static constexpr int MT = Cfg::MT, NT = Cfg::NT;
  uint4 w[MT][2][2];  // [row tile][row g, g+8][first, second 8 elements]
  uint4 a[NT][2];     // [token tile][first, second 8 elements]

  __device__ __forceinline__ void load(const __half* A, const __half* B, const Where& at, int64_t k0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Load modes 5 and 6: instruction h covers [32h, 32h + 32) of the stage's 64 (whole sectors).
      const int64_t k = Cfg::kLoad >= 5 ? k0 + 32 * h + 8 * at.q : k0 + 16 * at.q + 8 * h;
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int64_t n = at.n0 + 16 * t + 8 * r + at.g;
          if constexpr (kAligned)
            w[t][r][h] = (n < at.n && k < at.k) ? ld_stream16<Cfg::kLoad>(B + n * at.k + k) : make_uint4(0, 0, 0, 0);
          else
            w[t][r][h] = load8<false>(B, at.n, at.k, n, k);
        }
#pragma unroll
      for (int j = 0; j < NT; ++j) a[j][h] = load8<kAligned>(A, at.m, at.k, at.m0 + 8 * j + at.g, k);
    }
  }

  // Where this thread's next stage starts, carried from stage to stage: a stage that lies wholly
  // inside K, of a warp whose rows all lie inside N, then costs its loads and a few adds, not a
  // bounds check, a zero fill and a 64-bit address per load (on weights in L2 the per-stage
  // bookkeeping, ~170 instructions against 8 loads and 8 MMAs, was what the warps waited on).
  // Carried, not recomputed: at 64 registers a thread the compiler rebuilt addresses it could
  // derive at every stage. The thread's B rows are one pointer and a stride. A token past M reads
  // token M - 1: an MMA's output column depends on its token alone, and those columns are never
  // stored.
  struct Rows {
    const __half* w;  // row n0 + g, at the thread's first K offset
    int64_t row8;     // 8 rows of B, in elements
    const __half* a[NT];
    bool inside;  // every row of the warp < N
  };
  __device__ __forceinline__ static Rows rows(const __half* A, const __half* B, const Where& at, int64_t k0) {
    Rows r;
    const int64_t kq = k0 + (Cfg::kLoad >= 5 ? 8 * at.q : 16 * at.q);
    r.inside = at.n0 + 16 * MT <= at.n;
    r.w = B + (at.n0 + at.g) * at.k + kq;
    r.row8 = 8 * at.k;
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int64_t m = at.m0 + 8 * j + at.g;
      r.a[j] = A + (m < at.m ? m : at.m - 1) * at.k + kq;
    }
    return r;
  }
  __device__ __forceinline__ static void advance(Rows& r, int64_t dk) {
    r.w += dk;
#pragma unroll
    for (int j = 0; j < NT; ++j) r.a[j] += dk;
  }

  // Aligned rows (K % 8 == 0), r.inside, and a stage whose 64 elements all lie inside K: the loads
  // of load() without a check.
  __device__ __forceinline__ void load_inside(const Rows& r) {
    constexpr int kH = Cfg::kLoad >= 5 ? 32 : 8;  // the second load's K offset
    const __half* b = r.w;
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        w[t][e][0] = ld_stream16<Cfg::kLoad>(b);
        w[t][e][1] = ld_stream16<Cfg::kLoad>(b + kH);
        b += r.row8;
      }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const __half* x = r.a[j];
      a[j][0] = __ldg(reinterpret_cast<const uint4*>(x));
      a[j][1] = __ldg(reinterpret_cast<const uint4*>(x + kH));
    }
  }

  template <class AccT>
  __device__ __forceinline__ void compute(AccT (&acc)[MT][NT]) const {
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int h = s / 2, i = 2 * (s % 2);  // words i, i+1 of the h-th 16-byte run
#pragma unroll
      for (int t = 0; t < MT; ++t) {
        const uint32_t af[4] = {word(w[t][0][h], i), word(w[t][1][h], i), word(w[t][0][h], i + 1),
                                word(w[t][1][h], i + 1)};
#pragma unroll
        for (int j = 0; j < NT; ++j) acc[t][j].mma(af, word(a[j][h], i), word(a[j][h], i + 1));
      }
    }
  }

  // Lane values v of accumulator (t, j): rows 16t + g (+8 for z, w), tokens 2q (+1 for y, w).
  __device__ __forceinline__ static void store(__half* C, const Where& at, int t, int j, float4 v) {
    const int64_t n = at.n0 + 16 * t + at.g, m = at.m0 + 8 * j + 2 * at.q;
    const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t r = m + (e & 1), c = n + 8 * (e >> 1);
      if (r < at.m && c < at.n) C[r * at.n + c] = __float2half_rn(x[e]);
    }
  }
};

// NN: B is K x N row-major (N contiguous). Thread (g, q) covers the 2*MT consecutive columns
// [2*MT*g, 2*MT*g + 2*MT) of the warp's 16*MT: column 2t of them is row g of MMA tile t, column
// 2t+1 its row g + 8. Per MMA step it reads four rows of B, K = 4q..4q+3 of the step's 16, as the
// K order 2q, 2q+1, 2q+8, 2q+9 (and the tokens' 4 elements at the same K, one 8-byte load); a
// byte permute pairs two rows' elements of one column into the fragment's 32-bit word.
template <class Cfg, bool kAligned>
struct FragsNN {
  static constexpr int MT = Cfg::MT, NT = Cfg::NT;
  using Vec = typename std::conditional<MT == 4, uint4, uint2>::type;
  Vec w[4][4];     // [step][row 4q + i]
  uint2 a[NT][4];  // [token tile][step]
  struct Rows {};  // every NN load keeps its checks
  __device__ __forceinline__ static Rows rows(const __half*, const __half*, const Where&, int64_t) { return {}; }
  __device__ __forceinline__ static void advance(Rows&, int64_t) {}

  __device__ __forceinline__ static uint32_t vword(const Vec& v, int t) {
    if constexpr (MT == 4)
      return word(v, t);
    else
      return t == 0 ? v.x : v.y;
  }

  __device__ __forceinline__ void load(const __half* A, const __half* B, const Where& at, int64_t k0) {
    const int64_t n = at.n0 + 2 * MT * at.g;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int64_t kq = k0 + 16 * s + 4 * at.q;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t k = kq + i;
        if constexpr (kAligned) {
          const bool ok = k < at.k && n < at.n;
          if constexpr (MT == 4)
            w[s][i] = ok ? ld_stream16<Cfg::kLoad>(B + k * at.n + n) : make_uint4(0, 0, 0, 0);
          else
            w[s][i] = ok ? ld_stream8(B + k * at.n + n) : make_uint2(0, 0);
        } else {
          uint32_t v[MT];
#pragma unroll
          for (int t = 0; t < MT; ++t) {
            const int64_t c = n + 2 * t;
            const bool in = k < at.k && c < at.n, in1 = k < at.k && c + 1 < at.n;
            v[t] = u16(B + k * at.n + c, in) | (u16(B + k * at.n + c + 1, in1) << 16);
          }
          if constexpr (MT == 4)
            w[s][i] = make_uint4(v[0], v[1], v[2], v[3]);
          else
            w[s][i] = make_uint2(v[0], v[1]);
        }
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int64_t m = at.m0 + 8 * j + at.g;
        if constexpr (kAligned) {
          a[j][s] =
              (m < at.m && kq < at.k) ? __ldg(reinterpret_cast<const uint2*>(A + m * at.k + kq)) : make_uint2(0, 0);
        } else {
          uint32_t v[2];
#pragma unroll
          for (int p = 0; p < 2; ++p) {
            const int64_t c = kq + 2 * p;
            v[p] = u16(A + m * at.k + c, m < at.m && c < at.k) |
                   (u16(A + m * at.k + c + 1, m < at.m && c + 1 < at.k) << 16);
          }
          a[j][s] = make_uint2(v[0], v[1]);
        }
      }
    }
  }

  template <class AccT>
  __device__ __forceinline__ void compute(AccT (&acc)[MT][NT]) const {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int t = 0; t < MT; ++t) {
        const uint32_t w0 = vword(w[s][0], t), w1 = vword(w[s][1], t), w2 = vword(w[s][2], t), w3 = vword(w[s][3], t);
        const uint32_t af[4] = {__byte_perm(w0, w1, 0x5410), __byte_perm(w0, w1, 0x7632), __byte_perm(w2, w3, 0x5410),
                                __byte_perm(w2, w3, 0x7632)};
#pragma unroll
        for (int j = 0; j < NT; ++j) acc[t][j].mma(af, a[j][s].x, a[j][s].y);
      }
  }

  // Lane values v of accumulator (t, j): columns 2*MT*g + 2t (x, y) and + 1 (z, w), tokens 2q
  // (x, z) and 2q + 1 (y, w): two adjacent columns per token, one 4-byte store where it can.
  __device__ __forceinline__ static void store(__half* C, const Where& at, int t, int j, float4 v) {
    const int64_t n = at.n0 + 2 * MT * at.g + 2 * t, m = at.m0 + 8 * j + 2 * at.q;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t r = m + e;
      if (r >= at.m || n >= at.n) continue;
      const float lo = e ? v.y : v.x, hi = e ? v.w : v.z;
      __half* dst = C + r * at.n + n;
      if (n + 1 < at.n && at.n % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 4 == 0)
        *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(lo, hi);
      else {
        dst[0] = __float2half_rn(lo);
        if (n + 1 < at.n) dst[1] = __float2half_rn(hi);
      }
    }
  }
};

struct Params {
  const __half* A;
  const __half* B;
  __half* C;
  int64_t m, n, k;
  unsigned* counters;  // one per output tile (x * y), zero between launches
  float4* partials;    // [tile][split][entry]
};

template <class Cfg, bool kAligned>
using Frags = typename std::conditional<Cfg::kLayoutTN, FragsTN<Cfg, kAligned>, FragsNN<Cfg, kAligned>>::type;

template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtas) stream_gemm_kernel(const Params p) {
  constexpr int MT = Cfg::MT, NT = Cfg::NT, WR = Cfg::WR, WK = Cfg::WK, D = Cfg::D;
  constexpr int kEntries = WR * MT * NT * 32;  // float4 entries of a CTA's partial tile
  using F = Frags<Cfg, kAligned>;
  __shared__ float4 red[WK > 1 ? WK - 1 : 1][WR][MT * NT][32];

  if constexpr (Cfg::kPdl == 1) launch_dependents();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wr = warp % WR, wk = warp / WR;
  Where at{p.m,       p.n,     p.k, int64_t(blockIdx.y) * Cfg::kRows + wr * 16 * MT, int64_t(blockIdx.x) * Cfg::kToks,
           lane >> 2, lane & 3};
  const int splits = static_cast<int>(gridDim.z), z = static_cast<int>(blockIdx.z);
  // This warp's stages: first, first + step, ... below end (count of them).
  int64_t first, step, end;
  if constexpr (Cfg::kSplitOrder == 1) {
    first = int64_t(z) * WK + wk, step = int64_t(splits) * WK, end = plan::ceil_div(p.k, plan::kStageK);
  } else {
    const plan::Range range = plan::split_stages(p.k, splits, z);
    first = range.begin + wk, step = WK, end = range.end;
  }
  const int64_t count = first < end ? (end - first + step - 1) / step : 0;
  auto stage_of = [&](int64_t i) { return first + i * step; };
  // Stage st of this warp's B rows into L2: a line a lane (B is read-only here, and L2 is where the
  // previous kernel's writes land, so this may run before waiting for it).
  auto prefetch_stage = [&](int64_t st) {
    if (!kAligned || st >= end) return;
    const int64_t k = st * plan::kStageK;
    if constexpr (Cfg::kLayoutTN) {
      const int64_t n = at.n0 + lane % (16 * MT);
      if (lane < 16 * MT && n < p.n) prefetch_l2(p.B + n * p.k + k);
    } else {
      const int64_t kk = k + lane * 2;
      if (kk < p.k && at.n0 < p.n) prefetch_l2(p.B + kk * p.n + at.n0);
    }
  };
  if constexpr (Cfg::kL2Whole == 1) {
    // Aligned rows only (K % 8 == 0): every row's range then starts and ends on 16 bytes. One
    // thread a B row of the CTA; the token blocks of one B tile share it (the first asks).
    if (kAligned && blockIdx.x == 0 && threadIdx.x < Cfg::kRows) {
      const int64_t n = int64_t(blockIdx.y) * Cfg::kRows + threadIdx.x;
      const plan::Range r = plan::split_stages(p.k, splits, z);
      const int64_t k0 = r.begin * plan::kStageK, k1 = r.end * plan::kStageK < p.k ? r.end * plan::kStageK : p.k;
      if (n < p.n && k1 > k0) bulk_prefetch_l2(p.B + n * p.k + k0, static_cast<unsigned>((k1 - k0) * 2));
    }
  }
  // The first stage (and those the mainloop will not ask ahead for) while the previous kernel finishes.
#pragma unroll
  for (int d = 0; d < (Cfg::kAhead > 1 ? Cfg::kAhead : 1); ++d)
    if (d < count) prefetch_stage(stage_of(d));
  grid_dependency_wait();

  // Stages are loaded in order, first, first + step, ...: the cursor moves one step a load.
  typename F::Rows rows = F::rows(p.A, p.B, at, first * plan::kStageK);
  auto load_stage = [&](F& f, int64_t st) {
    const int64_t k0 = st * plan::kStageK;
    if constexpr (kAligned && Cfg::kLayoutTN) {
      if (rows.inside && k0 + plan::kStageK <= p.k)
        f.load_inside(rows);
      else
        f.load(p.A, p.B, at, k0);
      F::advance(rows, step * plan::kStageK);
    } else {
      f.load(p.A, p.B, at, k0);
    }
  };
  Acc<Cfg::kAccumF16> acc[MT][NT];
  {
    // A ring of D stages held in registers (indices are compile-time constants after unrolling):
    // D - 1 stages' loads in flight while one multiplies.
    F buf[D];
#pragma unroll
    for (int d = 0; d < D - 1; ++d)
      if (d < count) load_stage(buf[d], stage_of(d));
    for (int64_t base = 0; base < count; base += D) {
#pragma unroll
      for (int d = 0; d < D; ++d) {
        const int64_t i = base + d;
        if (i >= count) break;
        if constexpr (Cfg::kAhead > 0)
          if (i + Cfg::kAhead < count) prefetch_stage(stage_of(i + Cfg::kAhead));
        if (i + D - 1 < count) load_stage(buf[(d + D - 1) % D], stage_of(i + D - 1));
        buf[d].compute(acc);
      }
    }
  }

  if constexpr (Cfg::kPdl == 2) launch_dependents();
  float4 out[MT][NT];
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int j = 0; j < NT; ++j) out[t][j] = acc[t][j].get();
  if constexpr (WK > 1) {
    // k-warps 1..WK-1 hand their sums to k-warp 0, which adds them in order.
    if (wk > 0)
#pragma unroll
      for (int e = 0; e < MT * NT; ++e) red[wk - 1][wr][e][lane] = out[e / NT][e % NT];
    __syncthreads();
    if (wk == 0)
#pragma unroll
      for (int s = 0; s < WK - 1; ++s)
#pragma unroll
        for (int e = 0; e < MT * NT; ++e) out[e / NT][e % NT] = out[e / NT][e % NT] + red[s][wr][e][lane];
  }

  if (splits == 1) {  // the whole grid takes this branch or none of it
    if (wk > 0) return;
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int j = 0; j < NT; ++j) F::store(p.C, at, t, j, out[t][j]);
    return;
  }

  // Split: this CTA's partial tile to the workspace (L2: another SM reads it), then the tile's
  // arrival counter; the last to arrive adds every split's partial in split order.
  const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  float4* part = p.partials + tile * splits * kEntries;
  if (wk == 0)
#pragma unroll
    for (int e = 0; e < MT * NT; ++e)
      __stcg(part + int64_t(z) * kEntries + (wr * MT * NT + e) * 32 + lane, out[e / NT][e % NT]);
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(p.counters + tile, 1u) == static_cast<unsigned>(splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  constexpr int kBatch = 8;  // splits' loads in flight at a time
  for (int e = static_cast<int>(threadIdx.x); e < kEntries; e += Cfg::kThreads) {
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int z0 = 0; z0 < splits; z0 += kBatch) {
      float4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (z0 + b < splits) v[b] = __ldcg(part + int64_t(z0 + b) * kEntries + e);
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (z0 + b < splits) s = z0 + b == 0 ? v[b] : s + v[b];
    }
    const int el = e & 31, idx = e >> 5, ewr = idx / (MT * NT), ej = idx % (MT * NT);
    Where w = at;
    w.n0 = int64_t(blockIdx.y) * Cfg::kRows + ewr * 16 * MT, w.g = el >> 2, w.q = el & 3;
    F::store(p.C, w, ej / NT, ej % NT, s);
  }
  if (threadIdx.x == 0) p.counters[tile] = 0;  // the workspace contract: leave it as found
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  static plan::Grid grid_of(const cudal2_gemm_args& a) {
    return plan::grid(a.m, a.n, Cfg::kRows, Cfg::kToks, a.splits < 1 ? 1 : a.splits);
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "stream kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits < 1 || a.splits > plan::kMaxSplits) return "stream: splits must be in 1..64";
    if (!plan::grid_fits(grid_of(a))) return "stream: too many B-row tiles for the grid (at most 65535)";
    return nullptr;
  }

  static bool aligned(const cudal2_gemm_args& a) { return cudal2_shim::rows_16b_aligned(a, Cfg::kLayoutTN); }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    return plan::workspace_bytes(grid_of(a), Cfg::kRows, Cfg::kToks);
  }

  template <bool kAligned>
  static cudaError_t launch(const Params& p, const plan::Grid& g, cudaStream_t s) {
    auto* kernel = stream_gemm_kernel<Cfg, kAligned>;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(g.x), unsigned(g.y), unsigned(g.z));
    cfg.blockDim = dim3(Cfg::kThreads, 1, 1);
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    unsigned n_at = 0;
    if constexpr (Cfg::kPdl > 0) add_pdl_attribute(at, n_at);
    cfg.attrs = at;
    cfg.numAttrs = n_at;
    return cudaLaunchKernelEx(&cfg, kernel, p);
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    const plan::Grid g = grid_of(a);
    if (const size_t ws = workspace_size(a); ws > 0 && (a.workspace == nullptr || a.workspace_bytes < ws))
      return "stream: split K needs the workspace cudal2_workspace_size asks for";
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.counters = static_cast<unsigned*>(a.workspace);
    p.partials = a.workspace == nullptr
                     ? nullptr
                     : reinterpret_cast<float4*>(static_cast<char*>(a.workspace) + plan::counters_bytes(g));
    auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = aligned(a) ? launch<true>(p, g, s) : launch<false>(p, g, s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_stream
