#pragma once
// The GPU's read limit, measured by the product itself once per bench run: how fast the device
// streams bytes it only reads (a read-only kernel with 16-byte loads that skip L1, over a buffer
// several times the L2), and what a call costs cold (an empty kernel after an L2 flush and an idle
// gap, as server mode times every call). A bandwidth-bound problem's limit (core/roofline.hpp
// ReadLimit::limit_us) is its operand bytes at that rate, plus the cold floor in server mode.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/roofline.hpp"
#include "measure/device.hpp"

namespace cudal2 {

// flusher: the L2 flush server mode uses (null: one is made for the measurement). Takes about
// 50 ms and 8 x L2 (at least 1 GiB) of device memory while it runs.
ReadLimit measure_read_limit(cudaStream_t s, size_t l2_bytes, L2Flusher* flusher);

// The same read kernel over exactly [p, p + bytes) (bytes rounded down to 16): the fastest a
// kernel that must read those bytes can take, with the ramp and tail of one launch of that size
// included (the whole-GPU rate above amortizes them over a GiB). warm_us: per read of a graph of
// back-to-back reads (the bench's graph timer; what stays in L2 between reads is read from there,
// as for a GEMM replayed back to back); cold_us: one read after an L2 flush and an idle gap,
// launch included (server mode). Medians of `samples` replays.
struct ReadTime {
  double warm_us = 0, cold_us = 0;
  bool measured = false;
};
ReadTime time_reads(const void* p, size_t bytes, cudaStream_t s, L2Flusher& flusher, int samples);

}  // namespace cudal2
