#include "runtime/launch_gate.hpp"

#include <atomic>

namespace cudal2::rt {

LaunchGate::LaunchGate() {
  void* p = nullptr;
  if (cudaHostAlloc(&p, 2 * sizeof(unsigned), cudaHostAllocMapped) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
    cudaGetLastError();
    cudaFreeHost(p);
    return;
  }
  host_ = static_cast<volatile unsigned*>(p);
  host_[0] = 0;
  host_[1] = 0;
  device_ = static_cast<unsigned*>(d);
}

LaunchGate::~LaunchGate() {
  if (host_) cudaFreeHost(const_cast<unsigned*>(host_));
}

cudaError_t LaunchGate::close(cudaStream_t s, unsigned timeout_ms) {
  return launch_gate_kernel(device_, ++gen_, static_cast<unsigned long long>(timeout_ms) * 1000000ULL, s);
}

void LaunchGate::open() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  host_[0] = gen_;
}

bool LaunchGate::timed_out() const { return host_[1] == gen_; }

}  // namespace cudal2::rt
