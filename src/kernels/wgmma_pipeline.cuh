// The stage pipeline both wgmma kernels run (wgmma_gemm.cuh, wgmma_swapab.cuh): a ring of
// `kStages` shared-memory stages, each an A tile and a B tile guarded by two mbarriers. The
// producer (one thread) waits until a stage is empty, arms its full barrier with the stage's bytes
// and fills it with TMA loads; the consumer warpgroups wait until it is full, issue their wgmmas on
// it, and hand it back once those have read it, keeping one stage's wgmmas in flight. The kernels
// bring what differs: what a stage's loads and wgmmas are, who releases a stage (one arrival, or
// one per CTA of a cluster), and what shared memory and barriers they need besides the ring. Each
// kernel initializes the ring's barriers itself (full: the producer's one arrival, with its bytes;
// empty: one per reading consumer warpgroup): through a shared function the same instructions
// came out with another register allocation. sm_90a.
#pragma once
#include <cstdint>

#include "wgmma_ptx.cuh"

namespace cudal2_wgmma_pipeline {
namespace {
using namespace cudal2_wgmma_ptx;

// Position in the ring: the stage index and the parity of its current use (what mbarrier waits
// compare against).
template <int kStages>
struct StageRing {
  int s = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void next() {
    if (++s == kStages) s = 0, phase ^= 1;
  }
  // n steps at once (ping-pong: the stages of the other consumer's tile).
  __device__ __forceinline__ void advance(int64_t n) {
    const int64_t t = s + n;
    s = static_cast<int>(t % kStages);
    phase ^= static_cast<uint32_t>((t / kStages) & 1);
  }
};

// Shared memory from a 1024-aligned base (the 128-byte swizzle atom): the stages' A tiles, their B
// tiles, kOwnBytes the kernel uses besides the ring (epilogue buffers, a reduction tile), then the
// barriers: full[kStages], empty[kStages] and the kernel's own after them.
template <int kStageCount, int kABytes, int kBBytes, int kOwnBytes>
struct StageSmem {
  static constexpr int kStages = kStageCount;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kBars = kStages * kStageBytes + kOwnBytes;
  uint32_t base;
  __device__ __forceinline__ uint32_t a(int s) const { return base + s * kABytes; }
  __device__ __forceinline__ uint32_t b(int s) const { return base + kStages * kABytes + s * kBBytes; }
  __device__ __forceinline__ uint32_t own() const { return base + kStages * kStageBytes; }
  __device__ __forceinline__ uint32_t full(int s) const { return base + kBars + s * 8; }
  __device__ __forceinline__ uint32_t empty(int s) const { return base + kBars + (kStages + s) * 8; }
  // The kernel's barrier i, after the ring's.
  __device__ __forceinline__ uint32_t own_bar(int i) const { return base + kBars + (2 * kStages + i) * 8; }
};

// The 1024-aligned shared address at or after p (dynamic shared memory, sized with the slack).
__device__ __forceinline__ uint32_t align_1024(const void* p) { return (smem_u32(p) + 1023u) & ~1023u; }

// Producer: K tiles [begin, end) into the ring, each stage once its consumers have released it,
// armed with the stage's bytes (the zero-filled bytes of edge boxes count too) and filled by
// load(stage, k0, full barrier).
template <int kTileK, class Smem, class Ring, class Load>
__device__ __forceinline__ void produce_stages(const Smem& sm, Ring& ring, int64_t begin, int64_t end,
                                               const Load& load) {
  for (int64_t kt = begin; kt < end; ++kt, ring.next()) {
    const int k0 = static_cast<int>(kt * kTileK);
    mbar_wait(sm.empty(ring.s), ring.phase ^ 1);
    mbar_expect_tx(sm.full(ring.s), Smem::kStageBytes);
    load(ring.s, k0, sm.full(ring.s));
  }
}

// Producer, done: waits until every stage has been released for the last time (a cluster's CTA may
// leave only when no peer consumer will arrive on its barriers any more).
template <class Smem, class Ring>
__device__ __forceinline__ void wait_stages_released(const Smem& sm, Ring& ring) {
  for (int s = 0; s < Smem::kStages; ++s, ring.next()) mbar_wait(sm.empty(ring.s), ring.phase ^ 1);
}

// Consumer warpgroup: K tiles [begin, end) from the ring. Per stage, stage_mma(stage) takes the
// stage's operand addresses and returns the callable that issues its wgmmas (K tile kt) between a
// wgmma fence and their commit; fence_acc() around them keeps the accumulators from moving across.
// (The addresses come before the fences, which are asm volatile and so keep their place: where
// the address arithmetic sits changes the register allocation.) One stage's wgmmas stay in flight;
// the stage before it, whose wgmmas are then done reading it, goes back through release(stage).
// Returns the last stage, not yet released (-1 for an empty range): the caller waits for its
// wgmmas and releases it if anything follows.
template <class Smem, class Ring, class FenceAcc, class StageMma, class Release>
__device__ __forceinline__ int consume_stages(const Smem& sm, Ring& ring, int64_t begin, int64_t end,
                                              const FenceAcc& fence_acc, const StageMma& stage_mma,
                                              const Release& release) {
  int prev = -1;
  for (int64_t kt = begin; kt < end; ++kt, ring.next()) {
    mbar_wait(sm.full(ring.s), ring.phase);
    const auto mma = stage_mma(ring.s);
    fence_acc();
    wgmma_fence();
    mma(kt);
    wgmma_commit();
    fence_acc();
    wgmma_wait<1>();
    if (prev >= 0) release(prev);
    prev = ring.s;
  }
  return prev;
}

}  // namespace
}  // namespace cudal2_wgmma_pipeline
