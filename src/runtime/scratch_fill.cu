// Operands for timing candidates in the background (runtime/background_tuner.hpp): fp16 values
// in [-1, 1) from a hash of the index, so the tensor cores see ordinary data (zeros would run
// at a different power, and so a different speed).
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

// (Declared for the host side in runtime/scratch_fill.hpp; device code does not include src/.)

namespace {

__global__ void fill_kernel(__half* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32);
    x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
    p[i] = __float2half(static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}

}  // namespace

namespace cudal2::rt {

cudaError_t fill_scratch(void* p, size_t halves, uint32_t seed, cudaStream_t s) {
  if (halves == 0) return cudaSuccess;
  const size_t blocks = (halves + 255) / 256;
  fill_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(static_cast<__half*>(p), halves,
                                                                                   seed);
  return cudaGetLastError();
}

}  // namespace cudal2::rt
