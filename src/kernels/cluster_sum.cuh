// The cross-CTA step of our one-launch split-K (families lat and lat_staged): the CTAs of a
// thread-block cluster each hold a partial tile in shared memory, and one entry's sum is read from
// every rank through distributed shared memory and added in rank order, so the bits do not depend
// on which CTA finished first. Every load is issued before the first add (an unrolled, predicated
// loop): a rank pays one distributed-shared-memory latency per entry, not one per rank.
#pragma once
#include <cooperative_groups.h>

#include "mma_common.cuh"

namespace cudal2_cluster_sum {
namespace {

// Entry `entry` of this CTA's partial tile (an address in its shared memory) summed over the
// cluster's first `ranks` CTAs (ranks <= kMaxRanks), in rank order.
template <int kMaxRanks>
__device__ __forceinline__ float4 cluster_sum(cooperative_groups::cluster_group& cluster, float4* entry, int ranks) {
  using cudal2_mma_common::operator+;
  float4 v[kMaxRanks];
#pragma unroll
  for (int q = 0; q < kMaxRanks; ++q)
    if (q < ranks) v[q] = *cluster.map_shared_rank(entry, q);
  float4 s = v[0];
#pragma unroll
  for (int q = 1; q < kMaxRanks; ++q)
    if (q < ranks) s = s + v[q];
  return s;
}

}  // namespace
}  // namespace cudal2_cluster_sum
