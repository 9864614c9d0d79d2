#include "eval/checks.hpp"

#include <cuda_fp16.h>

#include <cstring>

namespace cudal2 {

namespace {

constexpr int kCounters = 6;  // unwritten, nonfinite, mismatched, first_bad, got bits, want bits

__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void compare_kernel(const uint16_t* C, const uint16_t* R, size_t n, float rel, float abs_tol,
                               uint16_t poison, unsigned long long* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint16_t cb = C[i];
    const float c = __half2float(__ushort_as_half(cb)), r = __half2float(__ushort_as_half(R[i]));
    int kind = -1;
    if (cb == poison)
      kind = 0;
    else if (!isfinite(c))
      kind = isfinite(r) || c != r ? 1 : -1;  // an overflow both agree on is not a defect
    else if (!(fabsf(c - r) <= rel * fabsf(r) + abs_tol))
      kind = 2;
    if (kind < 0) continue;
    atomicAdd(&out[kind], 1ull);
    if (atomicMin(&out[3], static_cast<unsigned long long>(i)) > i) {
      out[4] = cb;
      out[5] = R[i];
    }
  }
}

__global__ void checksum_kernel(const unsigned char* p, size_t bytes, unsigned long long key, unsigned long long* out) {
  unsigned long long acc = 0;
  const size_t words = bytes / 8;
  const auto* w = reinterpret_cast<const unsigned long long*>(p);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words; i += size_t{gridDim.x} * blockDim.x)
    acc += mix64(w[i] ^ mix64(key ^ i));
  const size_t tail = bytes % 8;
  if (blockIdx.x == 0 && threadIdx.x == 0 && tail) {
    unsigned long long v = 0;
    for (size_t b = 0; b < tail; ++b) v |= static_cast<unsigned long long>(p[words * 8 + b]) << (8 * b);
    acc += mix64(v ^ mix64(key ^ words));
  }
  atomicAdd(out, acc);
}

__global__ void band_kernel(const unsigned char* p, size_t n, unsigned char fill, unsigned long long* out) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    bad += p[i] != fill;
  if (bad) atomicAdd(out, bad);
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

unsigned blocks(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 4096)); }

}  // namespace

void launch_spin(cudaStream_t s, unsigned long long ns) {
  spin_kernel<<<1, 1, 0, s>>>(ns);
  CUDAL2_CUDA(cudaGetLastError());
}

DeviceChecker::DeviceChecker() {
  CUDAL2_CUDA(cudaMalloc(&dev_, kCounters * sizeof(unsigned long long)));
  CUDAL2_CUDA(cudaMallocHost(&host_, kCounters * sizeof(unsigned long long)));
}

DeviceChecker::~DeviceChecker() {
  cudaFree(dev_);
  cudaFreeHost(host_);
}

OutputCheck DeviceChecker::compare(const void* C, const void* ref, size_t n, ElementTolerance tol, uint16_t poison,
                                   cudaStream_t s) {
  const unsigned long long init[kCounters] = {0, 0, 0, ~0ull, 0, 0};
  CUDAL2_CUDA(cudaMemcpyAsync(dev_, init, sizeof init, cudaMemcpyHostToDevice, s));
  if (n) {
    compare_kernel<<<blocks(n), 256, 0, s>>>(static_cast<const uint16_t*>(C), static_cast<const uint16_t*>(ref), n,
                                             static_cast<float>(tol.rel), static_cast<float>(tol.abs), poison, dev_);
    CUDAL2_CUDA(cudaGetLastError());
  }
  CUDAL2_CUDA(cudaMemcpyAsync(host_, dev_, sizeof init, cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  OutputCheck r;
  r.unwritten = static_cast<int64_t>(host_[0]);
  r.nonfinite = static_cast<int64_t>(host_[1]);
  r.mismatched = static_cast<int64_t>(host_[2]);
  if (!r.ok()) {
    r.first_bad = static_cast<int64_t>(host_[3]);
    r.first_got = __half2float(__ushort_as_half(static_cast<uint16_t>(host_[4])));
    r.first_want = __half2float(__ushort_as_half(static_cast<uint16_t>(host_[5])));
  }
  return r;
}

uint64_t DeviceChecker::checksum(const void* p, size_t bytes, uint64_t key, cudaStream_t s) {
  CUDAL2_CUDA(cudaMemsetAsync(dev_, 0, sizeof(unsigned long long), s));
  if (bytes) {
    checksum_kernel<<<blocks(bytes / 8 + 1), 256, 0, s>>>(static_cast<const unsigned char*>(p), bytes, key, dev_);
    CUDAL2_CUDA(cudaGetLastError());
  }
  CUDAL2_CUDA(cudaMemcpyAsync(host_, dev_, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  return host_[0];
}

int64_t DeviceChecker::guard_damage(const GuardedBuffer& b, cudaStream_t s) {
  if (!b.base()) return 0;
  CUDAL2_CUDA(cudaMemsetAsync(dev_, 0, sizeof(unsigned long long), s));
  const auto* base = static_cast<const unsigned char*>(b.base());
  const size_t head = b.guard();
  const size_t tail_start = head + b.bytes(), tail = b.alloc_bytes() - tail_start;
  band_kernel<<<blocks(head), 256, 0, s>>>(base, head, GuardedBuffer::guard_byte(), dev_);
  band_kernel<<<blocks(tail), 256, 0, s>>>(base + tail_start, tail, GuardedBuffer::guard_byte(), dev_);
  CUDAL2_CUDA(cudaGetLastError());
  CUDAL2_CUDA(cudaMemcpyAsync(host_, dev_, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  return static_cast<int64_t>(host_[0]);
}

}  // namespace cudal2
