// Host-side planning of the stream_sweep family (src/kernels/stream_sweep_gemm.cuh), shared by the
// kernel's launch (its cluster), the runtime's rule (which of its sweep kernels runs a shape:
// src/runtime/stream_rule.hpp) and the CPU tests. Plain C++17, no CUDA.
#ifndef CUDAL2_STREAM_SWEEP_PLAN_H
#define CUDAL2_STREAM_SWEEP_PLAN_H
#include <cstdint>

namespace cudal2_sweep_plan {

constexpr int kStepK = 32;      // K elements a warp step covers (4 lanes x 8)
constexpr int kMaxCluster = 8;  // CTAs splitting one row tile's K (a portable cluster)

// CTAs a cluster for `tiles` row tiles on `slots` resident CTAs (SMs x CTAs an SM holds): the most
// of 1, 2, 4, 8 with which every tile's cluster fits in half the slots (room for the scheduler)
// and every one of the cluster's `warps` x CTAs warps keeps two steps of K.
constexpr int cluster(int64_t tiles, int64_t slots, int warps, int64_t k) {
  const int64_t steps = (k + kStepK - 1) / kStepK;
  int c = 1;
  while (c < kMaxCluster && tiles * c * 2 <= slots && int64_t(warps) * c * 2 <= steps) c *= 2;
  return c;
}

// The weight bytes the busiest SM streams, in row tiles: a launch of tiles x c CTAs of 1/c of a
// tile's K each, dealt over sms SMs, ends when the SM dealt the most CTAs does, whatever the others.
constexpr double busiest_sm_tiles(int64_t tiles, int c, int sms) {
  const int64_t ctas = tiles * c, most = (ctas + sms - 1) / sms;  // CTAs of the busiest SM
  return static_cast<double>(most) / c;
}

}  // namespace cudal2_sweep_plan

#endif  // CUDAL2_STREAM_SWEEP_PLAN_H
