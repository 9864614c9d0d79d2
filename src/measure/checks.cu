#include "measure/checks.hpp"

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

// Counters: 0 unwritten, 1 non-finite, 3 first unwritten, 4 first non-finite.
__global__ void scan_kernel(const uint16_t* C, size_t n, uint16_t poison, unsigned long long* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint16_t cb = C[i];
    const int kind = cb == poison ? 0 : (cb & 0x7C00u) == 0x7C00u ? 1 : -1;  // exponent all ones: Inf or NaN
    if (kind < 0) continue;
    atomicAdd(&out[kind], 1ull);
    atomicMin(&out[3 + kind], static_cast<unsigned long long>(i));
  }
}

// out[0, rows*n): the sampled rows; then cols*m: the sampled columns, one after another.
__global__ void gather_kernel(const uint16_t* C, int64_t m, int64_t n, const int64_t* rows, int64_t n_rows,
                              const int64_t* cols, int64_t n_cols, uint16_t* out) {
  const size_t row_part = static_cast<size_t>(n_rows * n), total = row_part + static_cast<size_t>(n_cols * m);
  for (size_t x = blockIdx.x * size_t{blockDim.x} + threadIdx.x; x < total; x += size_t{gridDim.x} * blockDim.x) {
    if (x < row_part) {
      out[x] = C[rows[x / n] * n + static_cast<int64_t>(x % n)];
    } else {
      const size_t y = x - row_part;
      out[x] = C[static_cast<int64_t>(y % m) * n + cols[y / m]];
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

OutputScan DeviceChecker::scan(const void* C, size_t n, uint16_t poison, cudaStream_t s) {
  const unsigned long long init[kCounters] = {0, 0, 0, ~0ull, ~0ull, 0};
  CUDAL2_CUDA(cudaMemcpyAsync(dev_, init, sizeof init, cudaMemcpyHostToDevice, s));
  if (n) {
    scan_kernel<<<blocks(n), 256, 0, s>>>(static_cast<const uint16_t*>(C), n, poison, dev_);
    CUDAL2_CUDA(cudaGetLastError());
  }
  CUDAL2_CUDA(cudaMemcpyAsync(host_, dev_, sizeof init, cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  OutputScan r;
  r.unwritten = static_cast<int64_t>(host_[0]);
  r.nonfinite = static_cast<int64_t>(host_[1]);
  if (r.unwritten) r.first_unwritten = static_cast<int64_t>(host_[3]);
  if (r.nonfinite) r.first_nonfinite = static_cast<int64_t>(host_[4]);
  return r;
}

SampledOutput DeviceChecker::gather(const void* C, const Shape& s, const Sampling& sp, cudaStream_t st) {
  SampledOutput o;
  o.rows.resize(sp.rows.size() * static_cast<size_t>(s.n));
  o.cols.resize(sp.cols.size() * static_cast<size_t>(s.m));
  const size_t total = o.rows.size() + o.cols.size();
  if (!total) return o;
  GuardedBuffer idx((sp.rows.size() + sp.cols.size()) * sizeof(int64_t), 256), out(total * sizeof(uint16_t), 256);
  auto* d_idx = static_cast<int64_t*>(idx.data());
  std::vector<int64_t> h_idx(sp.rows);
  h_idx.insert(h_idx.end(), sp.cols.begin(), sp.cols.end());
  CUDAL2_CUDA(cudaMemcpyAsync(d_idx, h_idx.data(), h_idx.size() * sizeof(int64_t), cudaMemcpyHostToDevice, st));
  auto* d_out = static_cast<uint16_t*>(out.data());
  gather_kernel<<<blocks(total), 256, 0, st>>>(static_cast<const uint16_t*>(C), s.m, s.n, d_idx,
                                               static_cast<int64_t>(sp.rows.size()), d_idx + sp.rows.size(),
                                               static_cast<int64_t>(sp.cols.size()), d_out);
  CUDAL2_CUDA(cudaGetLastError());
  if (!o.rows.empty())
    CUDAL2_CUDA(cudaMemcpyAsync(o.rows.data(), d_out, o.rows.size() * 2, cudaMemcpyDeviceToHost, st));
  if (!o.cols.empty())
    CUDAL2_CUDA(cudaMemcpyAsync(o.cols.data(), d_out + o.rows.size(), o.cols.size() * 2, cudaMemcpyDeviceToHost, st));
  CUDAL2_CUDA(cudaStreamSynchronize(st));
  return o;
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
