#include "measure/device.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

#include <fmt/format.h>
#include <atomic>

#include "measure/verify.hpp"

namespace cudal2 {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw CudaError(fmt::format("{} failed: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e)));
}

FailureKind fatal_error_kind(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
      return FailureKind::IllegalAddress;
    case cudaErrorAssert:
      return FailureKind::DeviceAssert;
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
      return FailureKind::IllegalInstruction;
    default:
      return FailureKind::CudaFatal;
  }
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = fmt::format("no CUDA GPU available ({})", cudaGetErrorString(e));
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA GPU available (0 devices)";
    return false;
  }
  return true;
}

void require_gpu() {
  std::string why;
  if (!gpu_available(&why)) throw NoGpuError(why);
}

LocalGpus local_gpus() {
  LocalGpus g;
  if (!gpu_available(&g.why_none)) return g;
  int count = 0;
  CUDAL2_CUDA(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    CUDAL2_CUDA(cudaGetDeviceProperties(&p, d));
    g.names.emplace_back(p.name);
  }
  return g;
}

GpuInfo query_gpu(int device) {
  GpuInfo g;
  g.device = device;
  cudaDeviceProp p{};
  CUDAL2_CUDA(cudaGetDeviceProperties(&p, device));
  g.name = p.name;
  g.sm_count = p.multiProcessorCount;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  g.total_mem = p.totalGlobalMem;
  int khz = 0;
  CUDAL2_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  g.max_sm_clock_mhz = khz / 1000;
  CUDAL2_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device));
  g.mem_clock_mhz = khz / 1000;
  CUDAL2_CUDA(cudaDeviceGetAttribute(&g.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDAL2_CUDA(cudaDriverGetVersion(&g.driver_api));
  CUDAL2_CUDA(cudaRuntimeGetVersion(&g.runtime_api));
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  g.cublas_version = major * 10000 + minor * 100 + patch;
  g.cublaslt_version = cublasLtGetVersion();
  g.driver = ClockReader().driver_version();
  return g;
}

// ---- NVML, loaded at run time ----
namespace {
using nvmlInit_t = int (*)();
using nvmlGetHandle_t = int (*)(unsigned, void**);
using nvmlDriverVersion_t = int (*)(char*, unsigned);
constexpr int kNvmlClockSm = 1;
}  // namespace

ClockReader::ClockReader() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<nvmlInit_t>(dlsym(lib_, "nvmlInit_v2"));
  auto handle = reinterpret_cast<nvmlGetHandle_t>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
  clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
  if (!init || !handle || !clock_ || init() != 0) {
    clock_ = nullptr;
    return;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  if (handle(static_cast<unsigned>(dev), &dev_) != 0) clock_ = nullptr;
}

int ClockReader::sm_mhz() const {
  unsigned mhz = 0;
  if (!clock_ || clock_(dev_, kNvmlClockSm, &mhz) != 0) return -1;
  return static_cast<int>(mhz);
}

std::string ClockReader::driver_version() const {
  if (!lib_) return "unknown";
  auto f = reinterpret_cast<nvmlDriverVersion_t>(dlsym(lib_, "nvmlSystemGetDriverVersion"));
  char buf[96] = {};
  if (!f || f(buf, sizeof buf) != 0) return "unknown";
  return buf;
}

// ---- guarded buffers ----
namespace {
std::atomic<uint8_t> g_guard_byte{kGuardByte};
}
void GuardedBuffer::set_guard_byte(uint8_t b) { g_guard_byte = b; }
uint8_t GuardedBuffer::guard_byte() { return g_guard_byte; }

GuardedBuffer::GuardedBuffer(size_t bytes, size_t guard) : bytes_(bytes), guard_((guard + 255) / 256 * 256) {
  const size_t padded = (bytes + 255) / 256 * 256;
  const size_t total = guard_ + padded + guard_;
  const cudaError_t e = cudaMalloc(&base_, total);
  if (e != cudaSuccess) {
    cudaGetLastError();
    base_ = nullptr;
    throw CudaError(fmt::format("cudaMalloc of {:.1f} MiB failed: {}", total / 1048576.0, cudaGetErrorString(e)));
  }
  // Whole allocation to the guard byte, payload included; callers fill the payload. cudaMemset
  // runs on the default stream, which work on a non-blocking stream does not wait for: without
  // the wait, a caller's first writes on its own stream could land before the fill and be
  // overwritten by it (found on the H100: a chained batch's fp32 reference, computed into a
  // freshly allocated scratch buffer, read back as the guard byte's NaN and blamed the candidate).
  CUDAL2_CUDA(cudaMemset(base_, guard_byte(), total));
  CUDAL2_CUDA(cudaStreamSynchronize(nullptr));
}

GuardedBuffer::~GuardedBuffer() {
  if (base_) cudaFree(base_);
}
GuardedBuffer::GuardedBuffer(GuardedBuffer&& o) noexcept : base_(o.base_), bytes_(o.bytes_), guard_(o.guard_) {
  o.base_ = nullptr;
}
GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& o) noexcept {
  if (this != &o) {
    if (base_) cudaFree(base_);
    base_ = o.base_;
    bytes_ = o.bytes_;
    guard_ = o.guard_;
    o.base_ = nullptr;
  }
  return *this;
}

void GuardedBuffer::reset_guards(cudaStream_t s) {
  char* b = static_cast<char*>(base_);
  CUDAL2_CUDA(cudaMemsetAsync(b, guard_byte(), guard_, s));
  // the tail band starts right after the payload: padding bytes count as guard too
  CUDAL2_CUDA(cudaMemsetAsync(b + guard_ + bytes_, guard_byte(), (bytes_ + 255) / 256 * 256 - bytes_ + guard_, s));
}

GuardedBuffer::Damage GuardedBuffer::guard_damage(cudaStream_t s) const {
  const size_t tail = (bytes_ + 255) / 256 * 256 - bytes_ + guard_;
  std::vector<uint8_t> head(guard_), back(tail);
  const char* b = static_cast<const char*>(base_);
  CUDAL2_CUDA(cudaMemcpyAsync(head.data(), b, guard_, cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaMemcpyAsync(back.data(), b + guard_ + bytes_, tail, cudaMemcpyDeviceToHost, s));
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  return {count_guard_damage(head.data(), head.size(), guard_byte()),
          count_guard_damage(back.data(), back.size(), guard_byte())};
}

// ---- fills ----
namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_normal_kernel(__half* p, size_t n, uint64_t seed, float mean, float sigma) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t r = splitmix64(seed ^ splitmix64(i));
    // Box-Muller from two 32-bit uniforms in (0, 1].
    const float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((r >> 8) & 0xFFFFFF) * (1.0f / 16777216.0f);
    p[i] = __float2half_rn(mean + sigma * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

__global__ void fill_uniform_kernel(__half* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t r = splitmix64(seed ^ splitmix64(i));
    p[i] = __float2half_rn(lo + (hi - lo) * static_cast<float>(r >> 40) * (1.0f / 16777216.0f));
  }
}

__global__ void fill_binary_kernel(__half* p, size_t n, uint64_t seed, int ones_every) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t r = splitmix64(seed ^ splitmix64(i));
    p[i] = __float2half_rn((r % static_cast<uint64_t>(ones_every)) == 0 ? 1.0f : 0.0f);
  }
}

__global__ void fill_u16_kernel(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) p[i] = v;
}

// 32x32 tiles through shared memory so both the read and the write are coalesced.
__global__ void transpose_kernel(const __half* src, __half* dst, int64_t k, int64_t n) {
  __shared__ __half tile[32][33];
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * 32, k0 = static_cast<int64_t>(blockIdx.y) * 32;
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const int64_t kk = k0 + dy, nn = n0 + threadIdx.x;
    if (kk < k && nn < n) tile[dy][threadIdx.x] = src[kk * n + nn];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const int64_t nn = n0 + dy, kk = k0 + threadIdx.x;
    if (kk < k && nn < n) dst[nn * k + kk] = tile[threadIdx.x][dy];
  }
}

unsigned blocks_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 65536)); }

}  // namespace

void fill_normal_f16(void* p, size_t n, uint64_t seed, cudaStream_t s, float mean, float sigma) {
  if (n == 0) return;
  fill_normal_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<__half*>(p), n, seed, mean, sigma);
  CUDAL2_CUDA(cudaGetLastError());
}

void fill_uniform_f16(void* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s) {
  if (n == 0) return;
  fill_uniform_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<__half*>(p), n, seed, lo, hi);
  CUDAL2_CUDA(cudaGetLastError());
}

void fill_binary_f16(void* p, size_t n, uint64_t seed, int ones_every, cudaStream_t s) {
  if (n == 0) return;
  fill_binary_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<__half*>(p), n, seed, ones_every);
  CUDAL2_CUDA(cudaGetLastError());
}

void fill_u16(void* p, size_t n, uint16_t value, cudaStream_t s) {
  if (n == 0) return;
  fill_u16_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<uint16_t*>(p), n, value);
  CUDAL2_CUDA(cudaGetLastError());
}

void transpose_f16(const void* src, void* dst, int64_t k, int64_t n, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((k + 31) / 32));
  if (grid.y > 65535) throw CudaError("transpose_f16: K too large");
  transpose_kernel<<<grid, dim3(32, 8), 0, s>>>(static_cast<const __half*>(src), static_cast<__half*>(dst), k, n);
  CUDAL2_CUDA(cudaGetLastError());
}

// ---- L2 flush ----
L2Flusher::L2Flusher(size_t l2_bytes) : bytes_(std::max<size_t>(2 * l2_bytes, size_t{1} << 20)) {
  CUDAL2_CUDA(cudaMalloc(&buf_, bytes_));
}
L2Flusher::~L2Flusher() {
  if (buf_) cudaFree(buf_);
}
void L2Flusher::flush(cudaStream_t s) {
  value_ = (value_ + 1) & 0xFF;
  CUDAL2_CUDA(cudaMemsetAsync(buf_, value_, bytes_, s));
}

std::vector<uint16_t> to_host_u16(const void* p, size_t n) {
  std::vector<uint16_t> h(n);
  CUDAL2_CUDA(cudaMemcpy(h.data(), p, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace cudal2
