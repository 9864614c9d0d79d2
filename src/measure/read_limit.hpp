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

}  // namespace cudal2
