#include "measure/interlude.hpp"

#include <cuda_fp16.h>

#include <algorithm>

#include "measure/device.hpp"

namespace cudal2 {

namespace {

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  return h ^ (h >> 16);
}

// Element `logical` (row-major index) of operand `which` (0: A, 1: B) of one call: a function of
// the call's key alone, so the judge regenerates exactly what the interlude wrote. 32-bit mixing
// (four 32-bit multiplies an element): the interlude writes every input of every call, and 64-bit
// multiplies would make it compute-bound on large operands.
__device__ __forceinline__ __half value(unsigned long long call_key, int which, int64_t logical) {
  const auto idx = static_cast<uint32_t>(logical) ^ (static_cast<uint32_t>(logical >> 32) * 0x9E3779B9u);
  const uint32_t h = fmix32(static_cast<uint32_t>(call_key) ^
                            fmix32(2u * idx + static_cast<uint32_t>(which) + static_cast<uint32_t>(call_key >> 32)));
  return __float2half_rn(static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
}

__device__ __forceinline__ unsigned long long call_key(unsigned long long seed, int call) {
  return mix(seed ^ mix(0xC4A1ull + static_cast<unsigned long long>(call)));
}

// Writes one call's A (mk elements) and B (kn) at storage index j of the concatenation.
__device__ __forceinline__ void write_input(__half* A, __half* B, unsigned long long key, int64_t j, int64_t mk,
                                            int64_t n, int64_t k, bool col_major) {
  if (j < mk) {
    A[j] = value(key, 0, j);
    return;
  }
  const int64_t b = j - mk;
  // Column-major storage holds logical (row b % k, column b / k); in 32 bits where B fits (64-bit
  // division costs several times as much, for every element of every call).
  int64_t logical = b;
  if (col_major) {
    if (k * n <= int64_t{UINT32_MAX}) {
      const auto b32 = static_cast<uint32_t>(b), k32 = static_cast<uint32_t>(k);
      logical = static_cast<int64_t>(b32 % k32) * n + b32 / k32;
    } else {
      logical = (b % k) * n + b / k;
    }
  }
  B[b] = value(key, 1, logical);
}

__global__ void cudal2_chain_interlude(InterludeArgs a, int call) {
  const int64_t mn = a.m * a.n, mk = a.m * a.k, kn = a.k * a.n;
  const bool keep = call > 0 && a.slots != nullptr;
  const int64_t copy = keep ? mn : 0, total = copy + mk + kn;
  const unsigned long long key = call_key(*a.seed, call);
  const auto* C = static_cast<const __half*>(a.C);
  __half* slot = keep ? static_cast<__half*>(a.slots) + static_cast<int64_t>(call - 1) * mn : nullptr;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < total; j += int64_t{gridDim.x} * blockDim.x) {
    if (j < copy)
      slot[j] = C[j];
    else
      write_input(static_cast<__half*>(a.A), static_cast<__half*>(a.B), key, j - copy, mk, a.n, a.k, a.b_col_major);
  }
}

__global__ void cudal2_chain_inputs(unsigned long long seed, int first, __half* A, __half* B, int64_t m, int64_t n,
                                    int64_t k, bool col_major, int64_t a_stride, int64_t b_stride) {
  const int64_t mk = m * k, kn = k * n, total = mk + kn;
  const int i = static_cast<int>(blockIdx.y);
  const unsigned long long key = call_key(seed, first + i);
  __half* Ai = A + i * a_stride;
  __half* Bi = B + i * b_stride;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < total; j += int64_t{gridDim.x} * blockDim.x)
    write_input(Ai, Bi, key, j, mk, n, k, col_major);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 2048)); }

}  // namespace

void launch_interlude(const InterludeArgs& a, int call, cudaStream_t s) {
  const int64_t total = (call > 0 && a.slots ? a.m * a.n : 0) + a.m * a.k + a.k * a.n;
  cudal2_chain_interlude<<<blocks_for(total), 256, 0, s>>>(a, call);
  CUDAL2_CUDA(cudaGetLastError());
}

void generate_call_inputs(unsigned long long seed, int first, int count, void* A, void* B, int64_t m, int64_t n,
                          int64_t k, bool b_col_major, cudaStream_t s, int64_t a_stride, int64_t b_stride) {
  if (count <= 0) return;
  if (a_stride <= 0) a_stride = m * k;
  if (b_stride <= 0) b_stride = k * n;
  const dim3 grid(std::max(1u, blocks_for(m * k + k * n) / 4), static_cast<unsigned>(count));
  cudal2_chain_inputs<<<grid, 256, 0, s>>>(seed, first, static_cast<__half*>(A), static_cast<__half*>(B), m, n, k,
                                           b_col_major, a_stride, b_stride);
  CUDAL2_CUDA(cudaGetLastError());
}

}  // namespace cudal2
