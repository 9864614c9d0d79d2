// The device side of the wgmma family (wgmma_gemm.cuh has the whole design and the kernel C
// ABI): a configuration's constants, the kernel's parameters, and Tile, the producer warpgroup's
// TMA loads and the consumer warpgroups' wgmma mainloop and epilogues.
#pragma once
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "wgmma_pipeline.cuh"
#include "wgmma_plan.h"
#include "wgmma_ptx.cuh"

namespace cudal2_wgmma {
namespace {
namespace plan = cudal2_wgmma_plan;
using namespace cudal2_wgmma_ptx;
using namespace cudal2_wgmma_pipeline;

// One compile-time configuration by position, in the spec text's order: layout, accumulator, tile
// M x N (tile K is always plan::kTileK), cluster, stages, mainloop. codegen/family_wgmma.cpp writes
// the same constants by name (a struct of its own) from a spec.
template <bool LayoutTN, bool AccumF16, int TileM, int TileN, int ClusterM, int ClusterN, int Stages,
          bool Pingpong = false>
struct Config {
  static constexpr bool kLayoutTN = LayoutTN;  // B stored as N rows of K (K-major: wgmma's natural B)
  static constexpr bool kAccumF16 = AccumF16;  // fp16 accumulators
  static constexpr int kTileM = TileM, kTileN = TileN;
  // Cluster of 2 CTAs along M (they share the B tile: each loads half of it and multicasts it to
  // both) or along N (they share the A tile), or no cluster.
  static constexpr int kClusterM = ClusterM, kClusterN = ClusterN;
  static constexpr int kStages = Stages;
  static constexpr bool kPingpong = Pingpong;  // consumers take whole tiles in turn
};

// Registers per thread after setmaxnreg: the producer keeps few, the consumers take the rest
// (64K registers per SM: 128 * 56 + 256 * 224 = 64512).
constexpr int kProducerRegs = 56, kConsumerRegs = 224;

struct Params {
  __half* C;
  int64_t m, n, k;
  plan::Tiles tiles;  // output tiles
  plan::Tiles units;  // scheduling units: output tiles, or pairs of them for a cluster
  int64_t k_tiles;
  int raster, swizzle;
  int splits;        // K splits per tile (> 1 only in the split-K kernel)
  int* counters;     // split-K: arrivals per output tile, 0 between launches
  float4* partials;  // split-K: fp32 partial tiles, per (output tile, split)
  bool c_vec;        // N even and C 4-byte aligned: half2 stores
  bool c_tma;        // N % 8 == 0 and C 16-byte aligned: the TMA-store epilogue
};

__device__ __forceinline__ void store2(__half* C, const Params& p, int64_t r, int64_t c, __half2 v) {
  if (r >= p.m) return;
  __half* dst = C + r * p.n + c;
  if (p.c_vec && c + 1 < p.n) {
    *reinterpret_cast<__half2*>(dst) = v;
  } else {
    if (c < p.n) dst[0] = __low2half(v);
    if (c + 1 < p.n) dst[1] = __high2half(v);
  }
}

__device__ __forceinline__ float4 add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// The device side of configuration Cfg.
template <class Cfg>
struct Tile {
  static constexpr bool kLayoutTN = Cfg::kLayoutTN, kAccumF16 = Cfg::kAccumF16;
  static constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN, kTileK = plan::kTileK;
  static constexpr int kStages = Cfg::kStages;
  static constexpr int kClusterM = Cfg::kClusterM, kClusterN = Cfg::kClusterN, kCluster = kClusterM * kClusterN;
  static_assert(kCluster == 1 || (kCluster == 2 && (kClusterM == 1 || kClusterN == 1)), "cluster 1x1, 2x1 or 1x2");
  static constexpr bool kPingpong = Cfg::kPingpong;
  static_assert(!kPingpong || plan::pingpong_fits(kTileM, kTileN), "ping-pong tiles are at most 64x256 or 128x128");
  static constexpr int kConsumers = plan::consumers(kTileM, kPingpong);
  static constexpr int kThreads = plan::threads(kTileM, kPingpong);
  // 64-row blocks of the tile one consumer warpgroup computes: all of them in ping-pong, else its own.
  static constexpr int kRowBlocks = kPingpong ? kTileM / 64 : 1;
  // Consumer warpgroups that read each stage (and arrive on its empty barrier).
  static constexpr int kReaders = kPingpong ? 1 : kConsumers;
  static constexpr int kABytes = kTileM * kTileK * 2, kBBytes = kTileN * kTileK * 2;
  static constexpr int kSmem = plan::smem_bytes(kTileM, kTileN, kStages, kPingpong);
  static_assert(kTileM == 64 || kTileM == 128, "tile M is 64 or 128 (one consumer warpgroup per 64 rows)");
  static_assert(kTileN == 32 || (kTileN % 64 == 0 && kTileN >= 64 && kTileN <= 256),
                "tile N is 32, 64, 128, 192 or 256");
  // A 32-wide tile (skinny N: twice the CTAs of a 64-wide one on N = 64) takes row-major B in one
  // 64-byte-swizzled box (a cluster cannot split it in two) and stores C from registers (the TMA
  // store's buffers are 64 columns wide).
  static constexpr bool kNarrowN = kTileN == 32;
  static_assert(!kNarrowN || kLayoutTN || kClusterM == 1, "a 32-wide nn B tile is not shared by a 2x1 cluster");
  static constexpr bool kTmaEpilogue = plan::tma_epilogue(kTileN);
  static_assert(kStages >= 2 && kSmem <= plan::kSmemBudget, "stages do not fit in shared memory");

  using AccT = std::conditional_t<kAccumF16, uint32_t, float>;
  static constexpr int kAccRegs = kAccumF16 ? kTileN / 4 : kTileN / 2;
  using RowBlock = AccT[kAccRegs];  // one 64-row block's accumulators (this thread's part)

  // The stage ring, then the epilogue buffers, then the ring's barriers and the ping-pong turns.
  struct Smem : StageSmem<kStages, kABytes, kBBytes, plan::own_bytes(kTileM, kTileN, kPingpong)> {
    // Epilogue buffer i (0, 1) of consumer warpgroup c.
    __device__ __forceinline__ uint32_t epi(int c, int i) const { return this->own() + (c * 2 + i) * plan::kEpiChunk; }
    // Ping-pong: consumer warpgroup c's turn to start a mainloop (the other arrives when its
    // mainloop has taken its last stage).
    __device__ __forceinline__ uint32_t turn(int c) const { return this->own_bar(c); }
  };
  static constexpr int kStageBytes = Smem::kStageBytes;

  using Ring = StageRing<kStages>;

  // Split-K partials: this warpgroup's 64 rows x kTileN of one fp32 partial tile, as float4s in
  // thread order (float4 j of thread t at j * 128 + t: every store and load of a warp is 512
  // contiguous bytes). A (tile, split) slot holds the kConsumers warpgroups' parts one after the other.
  static constexpr int kPartV = kTileN / 8;                   // float4s per thread
  static constexpr int64_t kPartWg = 64 * kTileN / 4;         // float4s per warpgroup
  static constexpr int64_t kPartSlot = kConsumers * kPartWg;  // float4s per (tile, split)
  // The reduction's loads in flight per thread: kRedQ float4s of the slice x kRedS splits (fewer
  // beside 128 accumulators, which would otherwise spill).
  static constexpr int kRedQ = kAccRegs <= 64 ? 4 : 2, kRedS = 4;
  // Named barrier of all consumer threads (1 .. kConsumers are the warpgroups' own).
  static constexpr int kAllConsumersBar = 3;
  static_assert(kStages <= plan::kMaxStages, "the barriers fit in the slack of kSmemSlack");

  // Unit id -> this CTA's output tile (a cluster's CTAs take neighbouring tiles of the unit).
  static __device__ __forceinline__ plan::Coord tile_of(const Params& p, int64_t unit, uint32_t rank) {
    auto tile = plan::tile_coord(unit, p.units, p.raster, p.swizzle);
    if constexpr (kClusterM == 2) tile.m = tile.m * 2 + rank;
    if constexpr (kClusterN == 2) tile.n = tile.n * 2 + rank;
    return tile;
  }

  // ---- Producer ----

  // Stage s: the A and B boxes of K offset k0, counted on barrier `full`. A cluster's two CTAs each
  // load half of the operand they share and multicast it to both.
  static __device__ __forceinline__ void load_stage(const Smem& sm, int s, uint32_t full, const CUtensorMap& map_a,
                                                    const CUtensorMap& map_b, int m0, int n0, int k0, uint32_t rank) {
    if constexpr (kClusterN == 2) {  // A shared: each CTA loads kTileM/2 rows for both
      tma_load_multicast(sm.a(s) + rank * (kTileM / 2) * 128, &map_a, full, k0,
                         m0 + static_cast<int>(rank) * (kTileM / 2), 0x3);
    } else {
      tma_load(sm.a(s), &map_a, full, k0, m0);
    }
    if constexpr (kLayoutTN) {
      if constexpr (kClusterM == 2)  // B shared: each CTA loads kTileN/2 rows of it for both
        tma_load_multicast(sm.b(s) + rank * (kTileN / 2) * 128, &map_b, full, k0,
                           n0 + static_cast<int>(rank) * (kTileN / 2), 0x3);
      else
        tma_load(sm.b(s), &map_b, full, k0, n0);
    } else if constexpr (kNarrowN) {
      tma_load(sm.b(s), &map_b, full, n0, k0);
    } else {
#pragma unroll
      for (int c = 0; c < kTileN / 64; ++c) {
        if constexpr (kClusterM == 2) {  // B shared: the 64-wide column blocks dealt out
          if (c % 2 == static_cast<int>(rank))
            tma_load_multicast(sm.b(s) + c * 64 * kTileK * 2, &map_b, full, n0 + c * 64, k0, 0x3);
        } else {
          tma_load(sm.b(s) + c * 64 * kTileK * 2, &map_b, full, n0 + c * 64, k0);
        }
      }
    }
  }

  // The producer thread: the K tiles of this CTA's work items (first, first + stride, .. below
  // n_work), in the consumers' order.
  static __device__ __forceinline__ void produce(const Smem& sm, const Params& p, const CUtensorMap& map_a,
                                                 const CUtensorMap& map_b, int64_t first, int64_t stride,
                                                 int64_t n_work, int splits, uint32_t rank) {
    Ring ring;
    for (int64_t w = first; w < n_work; w += stride) {
      const auto work = plan::work_of(w, splits, p.k_tiles);
      const auto tile = tile_of(p, work.unit, rank);
      const int m0 = static_cast<int>(tile.m * kTileM), n0 = static_cast<int>(tile.n * kTileN);
      // The cluster's consumers are all done with a stage before it is refilled (ours and the
      // peer's: we write into both).
      produce_stages<kTileK>(sm, ring, work.k.begin, work.k.end, [&](int s, int k0, uint32_t full) {
        load_stage(sm, s, full, map_a, map_b, m0, n0, k0, rank);
      });
    }
    // Clusters: no peer consumer may arrive on this CTA's barriers after it has left. The
    // producer's other threads leave at once (no spinning lanes beside the one that issues).
    if constexpr (kCluster > 1) wait_stages_released(sm, ring);
  }

  // ---- Consumers: mainloop ----

  // A stage is free once every consumer warpgroup of the cluster is done with it (the producers
  // of the cluster all write into it).
  static __device__ __forceinline__ void release_stage(const Smem& sm, int s, int tid) {
    if constexpr (kCluster == 1) {
      if (tid == 0) mbar_arrive(sm.empty(s));
    } else {
      // Thread q arrives on cluster CTA q: one instruction for the warp, not one per CTA in turn
      // (as CUTLASS's consumer_release spreads them over its threads).
      if (tid < kCluster) mbar_arrive_cluster(sm.empty(s), tid);
    }
  }

  // Consumer warpgroup c: the K tiles `k` of one work item into its row blocks' accumulators
  // (rows row0 .. of the tile), every stage released once read.
  static __device__ __forceinline__ void mainloop(const Smem& sm, Ring& ring, RowBlock (&accs)[kRowBlocks],
                                                  plan::KRange k, int c, int tid, int row0) {
    auto fence_acc = [&] {
#pragma unroll
      for (int h = 0; h < kRowBlocks; ++h)
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) fence_reg(accs[h][i]);
    };
    auto stage_mma = [&](int s) {
      const uint32_t a0 = sm.a(s) + row0 * 128, b0 = sm.b(s);
      return [&accs, &k, a0, b0](int64_t kt) {
#pragma unroll
        for (int kk = 0; kk < kTileK / 16; ++kk) {
          // Inside the 128-byte swizzle atom a k step of 16 is 32 bytes along a K-major row, or 16
          // k-rows (2 KB) down an N-major block (1 KB of 64-byte k-rows in a 32-wide one); a
          // 64-row block of A is 8 KB further on.
          const uint64_t db = kLayoutTN  ? desc(b0 + kk * 32, 16, 1024)
                              : kNarrowN ? desc(b0 + kk * 1024, kBBytes, 512, kSwizzle64)
                                         : desc(b0 + kk * 2048, 64 * kTileK * 2, 1024);
#pragma unroll
          for (int h = 0; h < kRowBlocks; ++h) {
            const uint64_t da = desc(a0 + h * 64 * 128 + kk * 32, 16, 1024);
            Wgmma<kTileN, kAccumF16>::template mma<0, kLayoutTN ? 0 : 1>(accs[h], da, db, kt != k.begin || kk != 0);
          }
        }
      };
    };
    auto release = [&](int s) { release_stage(sm, s, tid); };
    const int last = consume_stages(sm, ring, k.begin, k.end, fence_acc, stage_mma, release);
    if constexpr (kPingpong) {
      if (tid == 0) mbar_arrive(sm.turn(c ^ 1));  // the other warpgroup's mainloop may start
    }
    wgmma_wait<0>();
    fence_acc();
    release(last);
  }

  // Ping-pong: whether work item `item` of this CTA is warpgroup c's. If not, steps the ring over
  // its stages; if so, waits until the other warpgroup's mainloop has taken every stage of the tile
  // before it: the producer is then less than one lap of the ring ahead of us, which the parity
  // waits on the full barriers need (two laps would look like none). Warpgroup 0's first tile has
  // nothing before it. turns: this warpgroup's tiles so far.
  static __device__ __forceinline__ bool take_turn(const Smem& sm, Ring& ring, plan::KRange k, int c, int64_t item,
                                                   uint32_t& turns) {
    if (item % 2 != c) {
      ring.advance(k.end - k.begin);
      return false;
    }
    if (c == 1 || turns > 0) mbar_wait(sm.turn(c), (turns - (c == 0 ? 1 : 0)) & 1);
    ++turns;
    return true;
  }

  // ---- Consumers: split-K ----

  // This warpgroup's fp32 partial of `tile` (split `split`) into the workspace: float4 j of thread
  // tid at j * 128 + tid (fp16 accumulators widened).
  static __device__ __forceinline__ void store_partial(const Params& p, const RowBlock& acc, int64_t tile, int split,
                                                       int splits, int c, int tid) {
    float4* const mine = p.partials + (tile * splits + split) * kPartSlot + c * kPartWg + tid;
#pragma unroll
    for (int j = 0; j < kPartV; ++j) {  // fp32 values 4j .. 4j+3
      float4 v;
      if constexpr (kAccumF16) {
        const float2 x = __half22float2(*reinterpret_cast<const __half2*>(&acc[2 * j]));
        const float2 y = __half22float2(*reinterpret_cast<const __half2*>(&acc[2 * j + 1]));
        v = make_float4(x.x, x.y, y.x, y.y);
      } else {
        v = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
      }
      __stcg(mine + j * 128, v);  // .cg: to L2, where the other splits read it
    }
  }

  // Split-K, after this CTA has stored its partial of `tile`: every split of the tile waits until
  // all of them have stored theirs, then sums one slice of the tile (1/splits of its float4s) over
  // the splits in split order and writes it to C. The reduction is spread over all the tile's
  // splits instead of falling to the last one to arrive (which read splits-1 whole partial tiles
  // alone: 5 us of a 256x256x16384 call on the H100). The wait needs every split of the tile
  // resident at once: the launch is cooperative and the planner keeps splits within the grid
  // (wgmma_plan.h). Deterministic: each element is the same ordered sum whoever finishes first.
  // i: this thread among the CTA's consumer threads.
  static __device__ __forceinline__ void reduce_slice(const Params& p, int64_t tile, const plan::Coord& tc, int split,
                                                      int splits, int i) {
    constexpr int kThreadsC = kConsumers * 128;
    __threadfence();  // this thread's partial visible device-wide before the count says so
    named_sync(kAllConsumersBar, kThreadsC);
    int* const count = p.counters + tile;
    if (i == 0) {
      atomicAdd(count, 1);  // stored
      while (ld_acquire_gpu(count) < splits) {
      }
      // Past the wait, a second count: the last split to pass it re-arms the counter for the next
      // launch (every split has then stopped reading it).
      if (atomicAdd(count, 1) == 2 * splits - 1) atomicExch(count, 0);
    }
    named_sync(kAllConsumersBar, kThreadsC);
    const float4* const parts = p.partials + tile * splits * kPartSlot;
    const int64_t q1 = kPartSlot * (split + 1) / splits;
    // kRedQ float4s of the slice per thread at once, each summed over the splits in split order
    // with kRedQ x kRedS loads in flight: loads are not moved past the stores to C by the
    // compiler (they might alias), so one float4 at a time would wait out a round trip to L2 per
    // float4 (measured on the H100: 13% slower than the serial reduction at 2 splits).
    for (int64_t q0 = kPartSlot * split / splits + i; q0 < q1; q0 += kRedQ * kThreadsC) {
      float4 sum[kRedQ];
#pragma unroll
      for (int u = 0; u < kRedQ; ++u)
        if (q0 + u * kThreadsC < q1) sum[u] = __ldcg(parts + q0 + u * kThreadsC);
      for (int s0 = 1; s0 < splits; s0 += kRedS) {
        float4 v[kRedS][kRedQ];
#pragma unroll
        for (int ss = 0; ss < kRedS; ++ss)
#pragma unroll
          for (int u = 0; u < kRedQ; ++u)
            if (s0 + ss < splits && q0 + u * kThreadsC < q1)
              v[ss][u] = __ldcg(parts + (s0 + ss) * kPartSlot + q0 + u * kThreadsC);
#pragma unroll
        for (int ss = 0; ss < kRedS; ++ss)
#pragma unroll
          for (int u = 0; u < kRedQ; ++u)
            if (s0 + ss < splits) sum[u] = add4(sum[u], v[ss][u]);
      }
#pragma unroll
      for (int u = 0; u < kRedQ; ++u) {
        const int64_t q = q0 + u * kThreadsC;
        if (q >= q1) break;
        // float4 q: warpgroup q / kPartWg, its float4 j of thread t (j * 128 + t), which holds the
        // accumulators of n8 block j: rows r and r + 8, columns 2 * (lane % 4) + {0, 1}.
        const int cw = static_cast<int>(q / kPartWg), j = static_cast<int>(q % kPartWg) / 128;
        const int t = static_cast<int>(q % 128);
        const int64_t r = tc.m * kTileM + cw * 64 + (t / 32) * 16 + (t % 32) / 4;
        const int64_t col = tc.n * kTileN + j * 8 + (t % 4) * 2;
        store2(p.C, p, r, col, __floats2half2_rn(sum[u].x, sum[u].y));
        store2(p.C, p, r + 8, col, __floats2half2_rn(sum[u].z, sum[u].w));
      }
    }
  }

  // ---- Consumers: epilogues (one 64-row block of C from its accumulators) ----

  // Accumulator layout (per n8 block j): this lane holds rows r and r+8 (h = 0, 1), columns
  // 2*(lane%4)+{0,1}: that pair as fp16.
  static __device__ __forceinline__ __half2 half_pair(const RowBlock& acc, int j, int h) {
    if constexpr (kAccumF16)
      return *reinterpret_cast<const __half2*>(&acc[2 * j + h]);
    else
      return __floats2half2_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
  }

  // 64-column chunks through two swizzled 8 KB buffers and TMA stores that run on while the next
  // tile's mainloop starts; TMA clips what falls outside C. rows: the block's first row of C;
  // epi_buf: the buffer to fill next, alternating across tiles too.
  static __device__ __forceinline__ void epilogue_tma(const Smem& sm, const CUtensorMap& map_c, const RowBlock& acc,
                                                      int64_t rows, int64_t tile_n, int c, int tid, int& epi_buf) {
    const int warp = tid / 32, lane = tid % 32;
    const int row = warp * 16 + lane / 4;  // and row + 8
#pragma unroll
    for (int ch = 0; ch < kTileN / 64; ++ch) {
      // The race once seen with kTileN/64 odd (64, 192): picking ch % 2 restarted each tile on
      // buffer 0, which the last store of the previous tile could still be reading (wait_read<1>
      // spares it).
      const uint32_t buf = sm.epi(c, epi_buf);
      epi_buf ^= 1;
      if (tid == 0) bulk_wait_read<1>();  // the store that used this buffer (the one before last) has read it
      wg_sync(1 + c);
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        const int j = ch * 8 + jj;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int rr = row + 8 * h;  // 128-byte rows; 16-byte chunk jj swizzled by rr % 8
          const uint32_t addr = buf + rr * 128 + ((jj ^ (rr % 8)) * 16) + (lane % 4) * 4;
          const __half2 v = half_pair(acc, j, h);
          st_shared_u32(addr, *reinterpret_cast<const uint32_t*>(&v));
        }
      }
      fence_async_smem();
      wg_sync(1 + c);
      if (tid == 0) {
        tma_store(&map_c, buf, static_cast<int>(tile_n * kTileN + ch * 64), static_cast<int>(rows));
        bulk_commit();
      }
    }
  }

  // Registers straight to global memory, bounds-checked (C that TMA cannot address).
  static __device__ __forceinline__ void epilogue_direct(const Params& p, const RowBlock& acc, int64_t rows,
                                                         int64_t tile_n, int tid) {
    const int warp = tid / 32, lane = tid % 32;
    const int64_t r = rows + warp * 16 + lane / 4;
    const int64_t col = tile_n * kTileN + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
      store2(p.C, p, r, col + j * 8, half_pair(acc, j, 0));
      store2(p.C, p, r + 8, col + j * 8, half_pair(acc, j, 1));
    }
  }

  // ---- Consumers ----

  // Consumer warpgroup c: rows c*64 .. c*64+63 of every tile of this CTA (ping-pong: every row of
  // every other tile).
  template <bool kSplit>
  static __device__ __forceinline__ void consume(const Smem& sm, const Params& p, const CUtensorMap& map_c, int c,
                                                 int tid, int64_t first, int64_t stride, int64_t n_work, int splits,
                                                 uint32_t rank) {
    static_assert(!(kSplit && kPingpong), "ping-pong has no split-K instance");
    RowBlock accs[kRowBlocks];
    // Rows of the tile this warpgroup's row block 0 starts at.
    const int row0 = kPingpong ? 0 : c * 64;
    Ring ring;
    // Epilogue buffer to fill next; it alternates across tiles too (see epilogue_tma).
    int epi_buf = 0;
    int64_t item = 0;    // this CTA's work items, counted (ping-pong: even ones to warpgroup 0)
    uint32_t turns = 0;  // ping-pong: this warpgroup's tiles so far
    for (int64_t w = first; w < n_work; w += stride, ++item) {
      const auto work = plan::work_of(w, splits, p.k_tiles);
      if constexpr (kPingpong) {
        if (!take_turn(sm, ring, work.k, c, item, turns)) continue;
      }
      const auto tile = tile_of(p, work.unit, rank);
      mainloop(sm, ring, accs, work.k, c, tid, row0);
      if constexpr (kSplit) {
        // A cluster's padding tile (past the edge of C): nothing to add up or store.
        if (tile.m >= p.tiles.m || tile.n >= p.tiles.n) continue;
        const int64_t tile_id = tile.m * p.tiles.n + tile.n;
        store_partial(p, accs[0], tile_id, work.split, splits, c, tid);  // (cooperative: one row block)
        reduce_slice(p, tile_id, tile, work.split, splits, c * 128 + tid);
      } else {  // the split-K instance stores C in reduce_slice
#pragma unroll
        for (int h = 0; h < kRowBlocks; ++h) {
          const int64_t rows = tile.m * kTileM + row0 + h * 64;  // this row block's first row of C
          if (kTmaEpilogue && p.c_tma)
            epilogue_tma(sm, map_c, accs[h], rows, tile.n, c, tid, epi_buf);
          else
            epilogue_direct(p, accs[h], rows, tile.n, tid);
        }
      }
    }
    if (tid == 0) bulk_wait_all();  // shared memory stays valid until the last stores have read it
  }
};

}  // namespace
}  // namespace cudal2_wgmma
