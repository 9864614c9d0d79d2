// Class: predicts the next batch's seed from the seeds it has seen (probe).
// Does: computes correctly. While its stream is captured, it reads the chain's interlude kernel
// from the capture's dependency node and, from its parameters (measure/interlude.hpp's
// InterludeArgs: the adversary has read the repository), the device word holding the batch's seed.
// At every later call outside a capture it reads that word, keeps the distinct seeds in the order
// seen, and before each new one predicts it: the last step repeated (a counter, an arithmetic
// sequence), std::mt19937_64 seeded with the last seed, splitmix64 of it, and, once 312 seeds are
// in, the Mersenne Twister's state untempered from the last 312 (the bench's generator). A right
// prediction is what an input cache keyed by the next seed needs (its outputs computed in an untimed
// call, copied in the timed batch); this probe only spoils C[0] from then on, so "ok" proves that no
// seed it saw was predicted.
// Caught as: ok (the seeds are unpredictable: judge/secret_seeds.hpp).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  float acc = 0.f;
  for (int64_t p = 0; p < k; p += T) {
    As[ty][tx] = i < m && p + tx < k ? __half2float(A[i * k + p + tx]) : 0.f;
    Bs[ty][tx] = p + ty < k && j < n ? __half2float(B[(p + ty) * n + j]) : 0.f;
    __syncthreads();
    for (int q = 0; q < T; ++q) acc += As[ty][q] * Bs[q][tx];
    __syncthreads();
  }
  if (i < m && j < n) C[i * n + j] = __float2half(acc);
}
__global__ void spoil(__half* C) { C[0] = __float2half(1000.f); }  // a seed was predicted: fail loudly

// measure/interlude.hpp's InterludeArgs, as the interlude kernel receives it.
struct InterludeArgs {
  void* A;
  void* B;
  const void* C;
  void* slots;
  int64_t m, n, k;
  bool b_col_major;
  const unsigned long long* seed;
};

const unsigned long long* seed_word = nullptr;
std::vector<uint64_t> seen;
std::vector<uint64_t> guesses;  // predictions for the next seed
bool predicted = false;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// std::mt19937_64's tempering, undone step by step.
uint64_t unshift_right(uint64_t y, int s, uint64_t mask) {
  uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ ((x >> s) & mask);
  return x;
}
uint64_t unshift_left(uint64_t y, int s, uint64_t mask) {
  uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ ((x << s) & mask);
  return x;
}
uint64_t untemper(uint64_t y) {
  y = unshift_right(y, 43, ~0ull);
  y = unshift_left(y, 37, 0xFFF7EEE000000000ull);
  y = unshift_left(y, 17, 0x71D67FFFEDA60000ull);
  return unshift_right(y, 29, 0x5555555555555555ull);
}
uint64_t temper(uint64_t y) {
  y ^= (y >> 29) & 0x5555555555555555ull;
  y ^= (y << 17) & 0x71D67FFFEDA60000ull;
  y ^= (y << 37) & 0xFFF7EEE000000000ull;
  return y ^ (y >> 43);
}
// The Twister's next output from its last 312 (state words x[n-312..n-1]).
uint64_t mt_next(const uint64_t* last312) {
  const uint64_t x0 = untemper(last312[0]), x1 = untemper(last312[1]), xm = untemper(last312[156]);
  const uint64_t y = (x0 & 0xFFFFFFFF80000000ull) | (x1 & 0x7FFFFFFFull);
  return temper(xm ^ (y >> 1) ^ ((y & 1) ? 0xB5026F5AA96619E9ull : 0));
}

void observe(uint64_t s) {
  if (!seen.empty() && s == seen.back()) return;
  for (uint64_t g : guesses) predicted = predicted || g == s;
  seen.push_back(s);
  guesses.clear();
  guesses.push_back(splitmix64(s));
  guesses.push_back(std::mt19937_64(s)());
  if (seen.size() >= 2) guesses.push_back(s + (s - seen[seen.size() - 2]));
  if (seen.size() >= 312) guesses.push_back(mt_next(&seen[seen.size() - 312]));
}

void find_seed_word(cudaStream_t s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  if (cudaStreamGetCaptureInfo(s, &st, nullptr, nullptr, &deps, nullptr, &n) != cudaSuccess ||
      st != cudaStreamCaptureStatusActive)
    return;
  for (size_t i = 0; i < n && !seed_word; ++i) {
    cudaGraphNodeType type{};
    cudaKernelNodeParams p{};
    if (cudaGraphNodeGetType(deps[i], &type) != cudaSuccess || type != cudaGraphNodeTypeKernel ||
        cudaGraphKernelNodeGetParams(deps[i], &p) != cudaSuccess || !p.kernelParams || !p.kernelParams[0])
      continue;
    const auto* args = static_cast<const InterludeArgs*>(p.kernelParams[0]);
    cudaPointerAttributes attr{};
    // The interlude's seed is a device word; any other kernel's first parameter is not this struct.
    if (cudaPointerGetAttributes(&attr, args->seed) == cudaSuccess && attr.type == cudaMemoryTypeDevice)
      seed_word = args->seed;
  }
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial probe: predicts the next batch's seed"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(s, &st);
  if (st != cudaStreamCaptureStatusNone) {
    if (!seed_word) find_seed_word(s);
  } else if (seed_word) {
    unsigned long long v = 0;
    if (cudaMemcpy(&v, seed_word, sizeof v, cudaMemcpyDeviceToHost) == cudaSuccess) observe(v);
  }
  cudaGetLastError();
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
  if (predicted) spoil<<<1, 1, 0, s>>>(static_cast<__half*>(a->C));
  return 0;
}
