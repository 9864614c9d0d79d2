// Family stream_rows: the weights read as one contiguous stream, for decode problems (a few tokens
// M against a wide TN weight matrix B, N x K row-major, K contiguous). Where the `stream` kernel
// (stream_gemm.cuh) feeds tensor cores and so has each warp instruction touch 8 rows of B (64
// bytes of each), this one does the few multiply-adds per weight on the CUDA cores and reads B the
// way the product's read-limit kernel (measure/read_limit.cu) does: every warp instruction reads
// 512 contiguous bytes of one row, and each warp owns one contiguous slice of the whole matrix
// (B's rows follow one another in memory, so the matrix is a single run of bytes).
//  - The unit of work is a granule: 256 elements of one row, 16 bytes a lane. The N * ceil(K/256)
//    granules are cut into as many equal contiguous ranges as the launch has warps (one wave of
//    resident CTAs), so no warp streams more than one granule beyond the average.
//  - A warp walks its range kU granules at a time (kU 16-byte loads in flight a lane, never
//    crossing a row), accumulates in fp32 per token, and at each row's end reduces the row across
//    its lanes with shuffles.
//  - A row wholly inside one warp's range is stored by that warp. A row cut between ranges (at
//    most two per warp) leaves each piece's sums in the workspace; the warp whose piece completes
//    the row (an arrival counter per row) adds the pieces in range order and stores C: one launch,
//    the same bits whoever finishes first.
//  - The tokens' operand A (M x K, small) is read through L1 by every warp.
// C (row-major M x N) = A (row-major M x K) * B (column-major K x N, i.e. TN), M <= kM.
//   #include "stream_rows_gemm.cuh"
//   using cudal2_kernel = cudal2_stream_rows::Gemm<cudal2_stream_rows::Config<4, 8, 8, 2>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "stream_rows tn f32 toks=4 loads=8 warps=8 ctas=2")
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cudal2_kernel_shim.h"
#include "device_sms.cuh"
#include "ld_stream.cuh"

namespace cudal2_stream_rows {
namespace {
using cudal2_device::device_sms;
using cudal2_ld::ld_stream16;

// kM: tokens (M) one launch serves; kU: granules (16-byte loads a lane) in flight a warp;
// kWarps: warps a CTA; kMinCtas: CTAs an SM must hold at once (caps the registers a thread).
template <int kMaxM, int kLoads, int kWarpsPerCta, int kMinCtasPerSm>
struct Config {
  static constexpr int kM = kMaxM, kU = kLoads, kWarps = kWarpsPerCta, kCtas = kMinCtasPerSm;
  static constexpr int kThreads = 32 * kWarps;
  static_assert(kM >= 1 && kM <= 8, "stream_rows: 1..8 tokens");
  static_assert(kU >= 1 && kU <= 16, "stream_rows: 1..16 loads in flight a lane");
  static_assert(kThreads <= 1024 && kCtas * kThreads <= 2048, "stream_rows: at most 2048 threads an SM");
};

constexpr int64_t kGranule = 256;  // elements of one row a warp instruction covers (32 lanes x 8)

struct Params {
  const __half* A;
  const __half* B;
  __half* C;
  int64_t m, n, k;
  int64_t granules;    // n * per_row
  int64_t per_row;     // ceil(k / 256)
  int64_t warps;       // warps with a range (<= granules)
  unsigned* counters;  // one per row of B, zero between launches
  float* partials;     // [warp][2 pieces][kM]
};

// The range of warp w: granules [first(w), first(w + 1)).
__device__ __forceinline__ int64_t first_granule(const Params& p, int64_t w) { return w * p.granules / p.warps; }
// The warp whose range holds granule g (every range is non-empty: warps <= granules).
__device__ __forceinline__ int64_t warp_of(const Params& p, int64_t g) { return ((g + 1) * p.warps - 1) / p.granules; }

// Eight fp16 of row r at columns c..c+7 of a rows x cols row-major matrix; zeros outside.
template <bool kAligned, bool kStream>
__device__ __forceinline__ uint4 load8(const __half* base, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  if (r >= rows || c >= cols) return make_uint4(0, 0, 0, 0);
  const __half* ptr = base + r * cols + c;
  if constexpr (kAligned) {
    if constexpr (kStream)
      return ld_stream16(ptr);
    else
      return __ldg(reinterpret_cast<const uint4*>(ptr));
  } else {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t c0 = c + 2 * j;
      const uint32_t lo = c0 < cols ? __ldg(reinterpret_cast<const unsigned short*>(ptr + 2 * j)) : 0u;
      const uint32_t hi = c0 + 1 < cols ? __ldg(reinterpret_cast<const unsigned short*>(ptr + 2 * j + 1)) : 0u;
      w[j] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

__device__ __forceinline__ float2 f2(uint32_t v) { return __half22float2(*reinterpret_cast<const __half2*>(&v)); }

// acc[t] += dot(w, x) over eight elements.
__device__ __forceinline__ float dot8(const uint4& w, const uint4& x, float acc) {
  const uint32_t ws[4] = {w.x, w.y, w.z, w.w}, xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = f2(ws[i]), b = f2(xs[i]);
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
  }
  return acc;
}

// acc[lane] with a register array's constant indices (lane < kM).
template <int kM>
__device__ __forceinline__ float of_lane(const float (&acc)[kM], int lane) {
  float v = acc[0];
#pragma unroll
  for (int t = 1; t < kM; ++t)
    if (lane == t) v = acc[t];
  return v;
}

template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtas) stream_rows_kernel(const Params p) {
  constexpr int kM = Cfg::kM, kU = Cfg::kU;
  const int lane = threadIdx.x & 31;
  const int64_t w = int64_t(blockIdx.x) * Cfg::kWarps + (threadIdx.x >> 5);
  if (w >= p.warps) return;
  const int64_t g0 = first_granule(p, w), g1 = first_granule(p, w + 1);
  const int m = static_cast<int>(p.m);

  float acc[kM];
#pragma unroll
  for (int t = 0; t < kM; ++t) acc[t] = 0.f;
  for (int64_t g = g0; g < g1;) {
    const int64_t row = g / p.per_row, v0 = g % p.per_row;
    const int64_t left_in_row = p.per_row - v0, left = g1 - g;
    const int cnt = static_cast<int>(min(min(left_in_row, left), int64_t{kU}));
    uint4 wv[kU];
#pragma unroll
    for (int j = 0; j < kU; ++j)
      wv[j] =
          j < cnt ? load8<kAligned, true>(p.B, p.n, p.k, row, (v0 + j) * kGranule + 8 * lane) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      if (j >= cnt) break;
      const int64_t c = (v0 + j) * kGranule + 8 * lane;
#pragma unroll
      for (int t = 0; t < kM; ++t)
        if (t < m) acc[t] = dot8(wv[j], load8<kAligned, false>(p.A, p.m, p.k, t, c), acc[t]);
    }
    g += cnt;
    if (g % p.per_row != 0 && g != g1) continue;
      // The end of this warp's piece of `row`: reduce across the lanes.
#pragma unroll
    for (int t = 0; t < kM; ++t)
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
    const int64_t row_g0 = row * p.per_row, row_g1 = row_g0 + p.per_row;
    if (row_g0 >= g0 && row_g1 <= g1) {
      if (lane < kM && lane < m) p.C[int64_t(lane) * p.n + row] = __float2half_rn(of_lane(acc, lane));
    } else {
      // A piece: its sums to the workspace, then the row's counter; the piece that completes the
      // row adds every piece of it in range order.
      const int side = row == g0 / p.per_row ? 0 : 1;
      const int64_t mine = min(row_g1, g1) - max(row_g0, g0);
      float* slot = p.partials + (w * 2 + side) * kM;
      if (lane < kM) __stcg(slot + lane, of_lane(acc, lane));
      __threadfence();
      __syncwarp();
      unsigned before = 0;
      if (lane == 0) before = atomicAdd(p.counters + row, static_cast<unsigned>(mine));
      before = __shfl_sync(0xffffffffu, before, 0);
      if (before + static_cast<unsigned>(mine) == static_cast<unsigned>(p.per_row)) {
        __threadfence();
        const int64_t lo = warp_of(p, row_g0), hi = warp_of(p, row_g1 - 1);
        if (lane < kM && lane < m) {
          float s = 0.f;
          for (int64_t u = lo; u <= hi; ++u) {
            const int su = row == first_granule(p, u) / p.per_row ? 0 : 1;
            s += __ldcg(p.partials + (u * 2 + su) * kM + lane);
          }
          p.C[int64_t(lane) * p.n + row] = __float2half_rn(s);
        }
        if (lane == 0) p.counters[row] = 0;  // the workspace contract: leave it as found
      }
    }
#pragma unroll
    for (int t = 0; t < kM; ++t) acc[t] = 0.f;
  }
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  static int resident() {
    static const int n = [] {
      int r = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, stream_rows_kernel<Cfg, true>, Cfg::kThreads, 0) !=
          cudaSuccess) {
        cudaGetLastError();
        r = 1;
      }
      return r < 1 ? 1 : r;
    }();
    return n;
  }

  // Launch shape: one wave of resident CTAs, never more warps than granules.
  struct Shape {
    int64_t granules, per_row, warps, ctas;
  };
  static Shape shape_of(const cudal2_gemm_args& a) {
    Shape s;
    s.per_row = (a.k + kGranule - 1) / kGranule;
    s.granules = a.n * s.per_row;
    const int64_t slots = int64_t(device_sms()) * resident() * Cfg::kWarps;
    s.warps = s.granules < slots ? s.granules : slots;
    s.ctas = (s.warps + Cfg::kWarps - 1) / Cfg::kWarps;
    return s;
  }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.m > Cfg::kM) return "stream_rows: more tokens (M) than the kernel serves";
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0 || a.splits != 1)
      return "stream_rows kernels take only raster=0 swizzle=1 decomposition=0 splits=1";
    return nullptr;
  }

  static size_t workspace_size(const cudal2_gemm_args& a) {
    const Shape s = shape_of(a);
    const size_t counters = (static_cast<size_t>(a.n) * 4 + 255) / 256 * 256;
    return counters + static_cast<size_t>(s.warps) * 2 * Cfg::kM * sizeof(float);
  }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    if (a.workspace == nullptr || a.workspace_bytes < workspace_size(a))
      return "stream_rows: needs the workspace cudal2_workspace_size asks for";
    const Shape s = shape_of(a);
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.granules = s.granules, p.per_row = s.per_row, p.warps = s.warps;
    p.counters = static_cast<unsigned*>(a.workspace);
    p.partials =
        reinterpret_cast<float*>(static_cast<char*>(a.workspace) + (static_cast<size_t>(a.n) * 4 + 255) / 256 * 256);
    auto st = static_cast<cudaStream_t>(stream);
    const bool aligned = cudal2_shim::rows_16b_aligned(a, true);
    if (aligned)
      stream_rows_kernel<Cfg, true><<<unsigned(s.ctas), Cfg::kThreads, 0, st>>>(p);
    else
      stream_rows_kernel<Cfg, false><<<unsigned(s.ctas), Cfg::kThreads, 0, st>>>(p);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_stream_rows
