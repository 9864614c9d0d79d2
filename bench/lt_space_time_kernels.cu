// Device helpers of bench/lt_space_time.cpp (nvcc 13 cannot compile its C++20 host code).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {
__global__ void fill_normal(__half* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    // Box-Muller on a hashed counter.
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
    const float u1 = ((x & 0xffffffu) + 1) / 16777217.0f, u2 = ((x >> 24) & 0xffffffu) / 16777216.0f;
    p[i] = __float2half(sqrtf(-2.f * logf(u1)) * cosf(6.2831853f * u2));
  }
}

// B row-major K x N -> column-major (N x K row-major).
__global__ void transpose(const __half* b, __half* bt, int64_t k, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < k * n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / n, c = i % n;
    bt[c * k + r] = b[i];
  }
}

__global__ void compare(const __half* c, const __half* ref, size_t n, unsigned long long* bad, float* maxerr) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float x = __half2float(c[i]), r = __half2float(ref[i]);
    const float e = fabsf(x - r);
    if (!(e <= 4e-3f * fabsf(r) + 2e-2f)) atomicAdd(bad, 1ull);  // NaN counts as bad
    if (e == e) atomicMax(reinterpret_cast<int*>(maxerr), __float_as_int(e));
  }
}

}  // namespace

void lt_fill_normal(void* p, size_t n, uint64_t seed, cudaStream_t s) {
  fill_normal<<<1024, 256, 0, s>>>(static_cast<__half*>(p), n, seed);
}
void lt_transpose(const void* b, void* bt, int64_t k, int64_t n, cudaStream_t s) {
  transpose<<<1024, 256, 0, s>>>(static_cast<const __half*>(b), static_cast<__half*>(bt), k, n);
}
void lt_compare(const void* c, const void* ref, size_t n, unsigned long long* bad, float* maxerr, cudaStream_t s) {
  compare<<<1024, 256, 0, s>>>(static_cast<const __half*>(c), static_cast<const __half*>(ref), n, bad, maxerr);
}
