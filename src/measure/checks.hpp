#pragma once
// Checks the judge runs on the GPU after every run of an untrusted candidate: the whole output
// against a reference element by element, input checksums keyed by a per-job secret, and guard
// bands. They read device memory in place (no host copy of the buffers), so they are cheap
// enough to follow every timed batch. Each call synchronizes its stream and returns host values.
#include <cuda_runtime.h>

#include <cstdint>

#include "measure/device.hpp"
#include "measure/verify.hpp"

namespace cudal2 {

struct OutputCheck {
  int64_t unwritten = 0;   // still the poison
  int64_t nonfinite = 0;   // NaN/Inf where the reference is finite
  int64_t mismatched = 0;  // |c - r| > rel*|r| + abs
  int64_t first_bad = -1;  // smallest index of any of the above
  float first_got = 0, first_want = 0;
  bool ok() const { return unwritten == 0 && nonfinite == 0 && mismatched == 0; }
};

class DeviceChecker {
 public:
  DeviceChecker();
  ~DeviceChecker();
  DeviceChecker(const DeviceChecker&) = delete;
  DeviceChecker& operator=(const DeviceChecker&) = delete;

  // C and ref: n fp16 values.
  OutputCheck compare(const void* C, const void* ref, size_t n, ElementTolerance tol, uint16_t poison, cudaStream_t s);
  // What scan_output counts (never-written and non-finite outputs), counted in place.
  OutputScan scan(const void* C, size_t n, uint16_t poison, cudaStream_t s);
  // The elements of C (s.m x s.n fp16, row-major) that the sampling checks, gathered on the device
  // and copied back: a few rows and columns instead of the whole output.
  SampledOutput gather(const void* C, const Shape& s, const Sampling& sp, cudaStream_t st);
  // An order-independent sum of splitmix(key, index, 8-byte word): changing any byte changes it
  // unless the writer knows the key.
  uint64_t checksum(const void* p, size_t bytes, uint64_t key, cudaStream_t s);
  // Bytes of b's two guard bands that no longer hold GuardedBuffer::guard_byte().
  int64_t guard_damage(const GuardedBuffer& b, cudaStream_t s);

 private:
  unsigned long long* dev_ = nullptr;   // scratch counters
  unsigned long long* host_ = nullptr;  // pinned copy
};

// A one-block kernel that spins for `ns` nanoseconds of the GPU's global timer: trusted work of a
// known duration, with which the judge calibrates what a runner's round trip costs.
void launch_spin(cudaStream_t s, unsigned long long ns);

}  // namespace cudal2
