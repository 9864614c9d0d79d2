#pragma once
// Device plumbing shared by the evaluator and the baselines: error checking, GPU identity,
// guarded buffers, input fills, L2 flushing, clock readings.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/local_gpus.hpp"
#include "protocol/outcome.hpp"

namespace cudal2 {

// A CUDA runtime call failed. The message names the call and CUDA's own error string.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t e, const char* what);
// Errors after which a CUDA context is unusable, and the failure kind each one is recorded as
// (illegal-address, device-assert, illegal-instruction, cuda-fatal).
FailureKind fatal_error_kind(cudaError_t e);
#define CUDAL2_CUDA(call) ::cudal2::cuda_check((call), #call)

// Throws NoGpuError with the reason when no CUDA device can be used.
void require_gpu();
bool gpu_available(std::string* why = nullptr);
// Every device this process sees, by name (why_none when there is none): what the tuning loop is
// given instead of calling CUDA itself.
LocalGpus local_gpus();

struct GpuInfo {
  int device = 0;
  std::string name;
  int sm_count = 0, cc_major = 0, cc_minor = 0;
  size_t l2_bytes = 0, total_mem = 0;
  int max_sm_clock_mhz = 0;  // from cudaDevAttrClockRate
  int mem_clock_mhz = 0, mem_bus_bits = 0;
  int driver_api = 0, runtime_api = 0;
  std::string driver;  // NVML driver version string when NVML is there
  int cublas_version = 0;
  size_t cublaslt_version = 0;
};
GpuInfo query_gpu(int device = 0);

// Reads the SM clock through NVML, loaded at run time (no link dependency: CI machines have no
// driver). Returns -1 where NVML is missing.
class ClockReader {
 public:
  ClockReader();
  int sm_mhz() const;
  std::string driver_version() const;

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
};

// Device allocation with guard bands before and after the payload, so a write outside
// [data, data+bytes) is visible afterwards. Payload is 256-byte aligned. The band byte is
// kGuardByte unless the judge set another for the process (set_guard_byte, drawn per job).
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  explicit GuardedBuffer(size_t bytes, size_t guard = kDefaultGuard);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&&) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&&) noexcept;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return base_ ? static_cast<char*>(base_) + guard_ : nullptr; }
  void* base() const { return base_; }  // the allocation itself (what CUDA IPC exports)
  size_t alloc_bytes() const { return base_ ? 2 * guard_ + (bytes_ + 255) / 256 * 256 : 0; }
  size_t bytes() const { return bytes_; }
  size_t guard() const { return guard_; }
  void reset_guards(cudaStream_t s);
  // Bytes of either guard band no longer intact (copies the bands back; synchronizes s).
  struct Damage {
    int64_t before = 0, after = 0;
  };
  Damage guard_damage(cudaStream_t s) const;

  static constexpr size_t kDefaultGuard = size_t{1} << 20;
  static void set_guard_byte(uint8_t b);
  static uint8_t guard_byte();

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0, guard_ = 0;
};

// Input fills, all on the device (fresh seed each call from the caller).
void fill_normal_f16(void* p, size_t n, uint64_t seed, cudaStream_t s, float mean = 0.f,
                     float sigma = 1.f);  // N(mean, sigma^2) rounded to fp16
void fill_uniform_f16(void* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);
// Each element 1 with probability 1/ones_every, else 0 (paper: 1/2, or 1/3 when max dim > 8192).
void fill_binary_f16(void* p, size_t n, uint64_t seed, int ones_every, cudaStream_t s);
void fill_u16(void* p, size_t n, uint16_t value, cudaStream_t s);
// dst (column-major K x N, ld K) = src (row-major K x N, ld N).
void transpose_f16(const void* src, void* dst, int64_t k, int64_t n, cudaStream_t s);

// Evicts the L2 for server-mode timing by writing a buffer twice the L2's size.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t s);

 private:
  void* buf_ = nullptr;
  size_t bytes_ = 0;
  int value_ = 0;
};

// Host copy of a device buffer.
std::vector<uint16_t> to_host_u16(const void* p, size_t n);

}  // namespace cudal2
