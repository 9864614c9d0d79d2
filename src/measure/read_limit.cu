// measure_read_limit (measure/read_limit.hpp): a read-only streaming kernel and an empty kernel,
// each timed as a one-call CUDA graph (events inside the graph, as the bench's graph timer).
#include "measure/read_limit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/stats.hpp"
#include "kernels/ld_stream.cuh"
#include "measure/timing.hpp"

namespace cudal2 {

namespace {

using cudal2_ld::ld_stream16;

// Every thread keeps eight 16-byte loads in flight; the XOR of what it read goes to sink only in
// the (never taken) case that it equals a magic word, so the loads cannot be dropped.
__global__ void __launch_bounds__(512) read_stream_kernel(const uint4* __restrict__ p, size_t n16, unsigned* sink) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  constexpr int kInFlight = 8;
  for (; i + (kInFlight - 1) * stride < n16; i += kInFlight * stride) {
    uint4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = ld_stream16(p + i + j * stride);
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < n16; i += stride) {
    const uint4 a = ld_stream16(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

__global__ void empty_kernel() {}

struct DeviceBytes {
  void* p = nullptr;
  explicit DeviceBytes(size_t n) { CUDAL2_CUDA(cudaMalloc(&p, n)); }
  ~DeviceBytes() { cudaFree(p); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

double median_of(std::vector<double> v) { return percentile(std::move(v), 50); }

LaunchFn reader_of(const void* p, size_t bytes, unsigned* sink, int sms) {
  const auto* q = static_cast<const uint4*>(p);
  const size_t n16 = bytes / 16;
  return [q, n16, sink, sms](cudaStream_t st) { read_stream_kernel<<<4 * sms, 512, 0, st>>>(q, n16, sink); };
}

// What server mode does before every sampled call (flush, idle gap), then one replay of g.
double cold_us(CallGraph& g, L2Flusher& flusher, cudaStream_t s, int samples) {
  std::vector<double> v;
  for (int i = 0; i < samples; ++i) {
    flusher.flush(s);
    CUDAL2_CUDA(cudaStreamSynchronize(s));
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    v.push_back(g.replay_us(s));
  }
  return median_of(v);
}

int sm_count() {
  int dev = 0, sms = 0;
  CUDAL2_CUDA(cudaGetDevice(&dev));
  CUDAL2_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace

ReadTime time_reads(const void* p, size_t bytes, cudaStream_t s, L2Flusher& flusher, int samples) {
  ReadTime r;
  if (bytes < 16 || samples < 1) return r;
  DeviceBytes sink(64);
  const LaunchFn read = reader_of(p, bytes, static_cast<unsigned*>(sink.p), sm_count());
  // Back to back: enough reads a replay for ~200 us of device time at about 4 TB/s, and at least
  // four (each read then follows another, as in the graph timer's steady state).
  const double est_us = std::max(1.0, static_cast<double>(bytes) / 4e6);
  const int calls = static_cast<int>(std::clamp(200.0 / est_us, 4.0, 64.0));
  CallGraph warm(read, s, calls);
  CallGraph one(read, s, 1);
  if (!warm.ok() || !one.ok()) return r;
  std::vector<double> t;
  for (int i = 0; i < samples + 2; ++i) t.push_back(warm.replay_us(s));
  t.erase(t.begin(), t.begin() + 2);  // warm-up
  r.warm_us = median_of(t);
  r.cold_us = cold_us(one, flusher, s, samples);
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  r.measured = r.warm_us > 0 && r.cold_us > 0;
  return r;
}

ReadLimit measure_read_limit(cudaStream_t s, size_t l2_bytes, L2Flusher* flusher) {
  const int sms = sm_count();
  const size_t bytes = std::max<size_t>(size_t(1) << 30, 8 * l2_bytes) / 64 * 64;
  DeviceBytes buf(bytes), sink(64);
  CUDAL2_CUDA(cudaMemsetAsync(buf.p, 0xa5, bytes, s));
  auto* out = static_cast<unsigned*>(sink.p);
  auto reader = [&](size_t n) { return reader_of(buf.p, n, out, sms); };
  std::unique_ptr<L2Flusher> own;
  if (!flusher) flusher = (own = std::make_unique<L2Flusher>(l2_bytes)).get();

  ReadLimit r;
  // Four reads back to back a replay: the streaming rate, the launch's ramp amortized.
  CallGraph warm(reader(bytes), s, 4);
  std::vector<double> t;
  for (int i = 0; i < 10; ++i) t.push_back(warm.replay_us(s));
  t.erase(t.begin(), t.begin() + 2);  // warm-up
  r.warm_tbps = double(bytes) / median_of(t) * 1e-6;

  // Cold: what server mode does before every sampled call (flush, idle gap), then one call.
  auto cold = [&](CallGraph& g) { return cold_us(g, *flusher, s, 9); };
  CallGraph empty([](cudaStream_t st) { empty_kernel<<<1, 32, 0, st>>>(); }, s, 1);
  r.cold_floor_us = cold(empty);
  const size_t cold_bytes = std::min<size_t>(bytes, size_t(64) << 20);
  CallGraph cold_read(reader(cold_bytes), s, 1);
  r.cold_64mb_us = cold(cold_read);
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  r.measured = warm.ok() && empty.ok() && r.warm_tbps > 0;
  return r;
}

}  // namespace cudal2
