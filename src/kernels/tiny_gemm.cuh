// Family tiny: an HGEMM for the tiniest problems (2MNK < ~1e8), where launch and prologue
// dominate. No shared-memory pipeline and, with kwarps=1, no __syncthreads: each warp loads its
// mma fragments straight from global memory (L2) into registers and keeps the next k-block's
// loads in flight while it multiplies the current one. K may also be split across the warps of
// a CTA (kwarps), reduced through shared memory at the end: unlike grid split-K this needs no
// workspace, no counters and no extra memory round trip, which is what tiny shapes can afford.
// C (row-major MxN) = A (row-major MxK) * B (KxN: row-major "nn", column-major "tn"), any M, N, K.
// One configuration is the type cudal2_tiny::Gemm<Config<...>>; a generated .cu includes this file
// and exports that type through the kernel C ABI (cudal2_kernel_shim.h):
//   #include "tiny_gemm.cuh"
//   using cudal2_kernel = cudal2_tiny::Gemm<cudal2_tiny::Config<false, false, 32, 32, 64, 1, 1, 2>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "tiny nn f32 tile=32x32x64 warps=1x1 kwarps=2")
#pragma once
#include "cudal2_kernel_shim.h"
#include "mma_common.cuh"
#include "mma_plan.h"

namespace cudal2_tiny {
namespace {
using namespace cudal2_mma_common;
namespace plan = cudal2_plan;

// One compile-time configuration (codegen/family_tiny.cpp writes it from a spec).
template <bool kLayoutTN, bool kAccumF16, int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kWarpsK>
struct Config {
  static constexpr bool kTN = kLayoutTN;
  static constexpr bool kF16 = kAccumF16;
  static constexpr int BM = kTileM, BN = kTileN, BK = kTileK;     // CTA tile; BK: K per warp iteration
  static constexpr int WM = kWarpsM, WN = kWarpsN, KW = kWarpsK;  // warps along M, N and K
};

// The device side of configuration Cfg.
template <class Cfg>
struct Tile {
  static constexpr bool kTN = Cfg::kTN, kF16 = Cfg::kF16;
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN, KW = Cfg::KW;
  static constexpr int kThreads = WM * WN * KW * 32;
  static constexpr int WTM = BM / WM, WTN = BN / WN;
  static constexpr int MI = WTM / 16, NI = WTN / 8;
  static constexpr int KB = BK / 32;  // 32-wide k blocks per iteration
  static_assert(WTM % 16 == 0 && WTN % 8 == 0 && BK % 32 == 0, "tiny: warp tile 16k x 8k, BK multiple of 32");

  // K permutation inside each 32-wide block (mma sums over k, so any order used for both A and B
  // is fine): lane t=lane%4 owns physical k 8t..8t+7, so its A (and TN B) fragments for two
  // k16 steps are ONE 16-byte load per row. Words 0,1 feed step 0 (its k pairs 2t and 2t+8),
  // words 2,3 step 1.
  struct Frags {
    uint4 a[KB][MI][2];  // rows g and g+8 of each m16 tile
    uint4 b[KB][NI];     // TN: column g of each n8 tile; NN: 4 raw words for movmatrix
  };

  template <bool kAligned>
  static __device__ __forceinline__ void load_frags(Frags& f, const __half* A, const __half* B, int64_t m, int64_t n,
                                                    int64_t k, int64_t row0, int64_t col0, int64_t k0, int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
      const int64_t kq = k0 + kb * 32;
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        f.a[kb][mi][0] = load8<kAligned>(A, m, k, row0 + mi * 16 + g, kq + 8 * t);
        f.a[kb][mi][1] = load8<kAligned>(A, m, k, row0 + mi * 16 + g + 8, kq + 8 * t);
      }
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        if constexpr (kTN) {
          f.b[kb][ni] = load8<kAligned>(B, n, k, col0 + ni * 8 + g, kq + 8 * t);
        } else {
          // Row-major B: lane (g,t) loads the 8x8 block X[j][c] = B[kq + 8(j/2) + j%2 + e][col + c]
          // at its (row g, columns 2t,2t+1); movmatrix later hands lane (g,t) X[2t..2t+1][g] =
          // B[kq + 8t + e .. +1][col + g], the permuted k pair it needs. 4-byte loads, no smem.
          uint32_t w[4];
#pragma unroll
          for (int e = 0; e < 4; ++e)
            w[e] = load2<kAligned>(B, k, n, kq + 8 * (g >> 1) + (g & 1) + 2 * e, col0 + ni * 8 + 2 * t);
          f.b[kb][ni] = make_uint4(w[0], w[1], w[2], w[3]);
        }
      }
    }
  }

  static __device__ __forceinline__ uint32_t word(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
  }

  static __device__ __forceinline__ void compute(const Frags& f, Acc<kF16> (&acc)[MI][NI]) {
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
      uint4 b[NI];
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        b[ni] = f.b[kb][ni];
        if constexpr (!kTN)
          b[ni] = make_uint4(movmatrix_trans(b[ni].x), movmatrix_trans(b[ni].y), movmatrix_trans(b[ni].z),
                             movmatrix_trans(b[ni].w));
      }
#pragma unroll
      for (int step = 0; step < 2; ++step)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
          const uint32_t a[4] = {word(f.a[kb][mi][0], 2 * step), word(f.a[kb][mi][1], 2 * step),
                                 word(f.a[kb][mi][0], 2 * step + 1), word(f.a[kb][mi][1], 2 * step + 1)};
#pragma unroll
          for (int ni = 0; ni < NI; ++ni) acc[mi][ni].mma(a, word(b[ni], 2 * step), word(b[ni], 2 * step + 1));
        }
    }
  }

  struct Params {
    const __half* A;
    const __half* B;
    __half* C;
    int64_t m, n, k;
    bool c_vec;
  };
};

// The kernel reads the configuration through local constants, so its body is the code of the
// macro-configured header it replaced (and compiles to the same PTX).
template <class Cfg, bool kAligned>
__global__ void __launch_bounds__(Tile<Cfg>::kThreads, 1) tiny_gemm_kernel(const typename Tile<Cfg>::Params p) {
  using T = Tile<Cfg>;
  using Frags = typename T::Frags;
  constexpr bool kF16 = T::kF16;
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, WM = T::WM, WN = T::WN, KW = T::KW;
  constexpr int WTM = T::WTM, WTN = T::WTN, MI = T::MI, NI = T::NI;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kw = warp / (WM * WN), pw = warp % (WM * WN);  // K slice; warp within the M x N plane
  const int wm = pw / WN, wn = pw % WN;
  const int64_t row0 = int64_t(blockIdx.y) * BM + wm * WTM, col0 = int64_t(blockIdx.x) * BN + wn * WTN;
  const int64_t iters = (p.k + BK - 1) / BK;

  Acc<kF16> acc[MI][NI];
  // K iterations kw, kw+KW, ...: the next iteration's loads are issued before this one's mma.
  // The checked path (unaligned rows) keeps one buffer: its element loads need the registers.
  if constexpr (!kAligned) {
    for (int64_t it = kw; it < iters; it += KW) {
      Frags f;
      T::template load_frags<kAligned>(f, p.A, p.B, p.m, p.n, p.k, row0, col0, it * BK, lane);
      T::compute(f, acc);
    }
  } else if (kw < iters) {
    Frags cur;
    T::template load_frags<kAligned>(cur, p.A, p.B, p.m, p.n, p.k, row0, col0, int64_t(kw) * BK, lane);
    for (int64_t it = kw + KW; it < iters; it += KW) {
      Frags nxt;
      T::template load_frags<kAligned>(nxt, p.A, p.B, p.m, p.n, p.k, row0, col0, it * BK, lane);
      T::compute(cur, acc);
      cur = nxt;
    }
    T::compute(cur, acc);
  }

  float4 out[MI][NI];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) out[mi][ni] = acc[mi][ni].get();

  if constexpr (KW > 1) {
    // Slices 1..KW-1 hand their sums to slice 0, which adds them in slice order (deterministic).
    __shared__ float4 red[KW - 1][WM * WN][MI * NI][32];
    if (kw > 0)
#pragma unroll
      for (int j = 0; j < MI * NI; ++j) red[kw - 1][pw][j][lane] = out[j / NI][j % NI];
    __syncthreads();
    if (kw > 0) return;
#pragma unroll
    for (int s = 0; s < KW - 1; ++s)
#pragma unroll
      for (int j = 0; j < MI * NI; ++j) out[j / NI][j % NI] = out[j / NI][j % NI] + red[s][pw][j][lane];
  }

  const int64_t r = row0 + (lane >> 2), c = col0 + (lane & 3) * 2;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) store_c(p.C, p.m, p.n, r + mi * 16, c + ni * 8, out[mi][ni], p.c_vec);
}

// The host side of configuration Cfg: the kernel C ABI (cudal2_kernel_shim.h).
template <class Cfg>
struct Gemm {
  using T = Tile<Cfg>;
  using Params = typename T::Params;
  static constexpr bool kTN = T::kTN;
  static constexpr int BM = T::BM, BN = T::BN, BK = T::BK, kThreads = T::kThreads;

  static plan::Grid grid_of(const cudal2_gemm_args& a) { return plan::grid(a.m, a.n, a.k, BM, BN, BK, 1); }

  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    if (a.raster != 0 || a.swizzle != 1 || a.decomposition != 0)
      return "tiny kernels take only raster=0 swizzle=1 decomposition=0";
    if (a.splits != 1) return "tiny kernels take only splits=1 (K is split across a CTA's warps: kwarps)";
    if (!plan::grid_fits(grid_of(a))) return "too many M tiles for the grid (at most 65535)";
    return nullptr;
  }

  // 16-byte fragment loads need 16-byte aligned rows of A (and of B when it is K-contiguous);
  // row-major B is read 4 bytes at a time, which N % 8 == 0 also keeps aligned.
  static bool aligned(const cudal2_gemm_args& a) { return cudal2_shim::rows_16b_aligned(a, kTN); }

  template <bool kAligned>
  static cudaError_t launch(const Params& p, const plan::Grid& g, cudaStream_t s) {
    tiny_gemm_kernel<Cfg, kAligned><<<dim3(unsigned(g.x), unsigned(g.y), 1), kThreads, 0, s>>>(p);
    return cudaGetLastError();
  }

  static size_t workspace_size(const cudal2_gemm_args&) { return 0; }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    if (const char* why = refusal(a)) return why;
    Params p;
    p.A = static_cast<const __half*>(a.A);
    p.B = static_cast<const __half*>(a.B);
    p.C = static_cast<__half*>(a.C);
    p.m = a.m, p.n = a.n, p.k = a.k;
    p.c_vec = a.n % 2 == 0 && reinterpret_cast<uintptr_t>(a.C) % 4 == 0;
    auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = aligned(a) ? launch<true>(p, grid_of(a), s) : launch<false>(p, grid_of(a), s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace
}  // namespace cudal2_tiny
