#pragma once
// Random fp16 operands on the device for the background tuner (runtime/scratch_fill.cu).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudal2::rt {

// `halves` fp16 values in [-1, 1) at p, on stream s.
cudaError_t fill_scratch(void* p, size_t halves, uint32_t seed, cudaStream_t s);

}  // namespace cudal2::rt
