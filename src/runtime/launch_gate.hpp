#pragma once
// A gate that holds a stream until the host opens it, for timing candidates without CUDA graphs:
// calls queued behind a closed gate start back to back on the GPU once it opens, however slowly the
// host launched them, as a graph's calls do. The tuner cannot capture graphs: while any stream of
// the context captures, CUDA refuses a device-wide synchronization in every thread
// (cudaDeviceSynchronize returns cudaErrorStreamCaptureUnsupported), so a program syncing its
// device while the runtime tuned in the background got that error (H200,
// bench/results/h200/tuning/capture/).
#include <cuda_runtime.h>

namespace cudal2::rt {

// The gate's kernel on s (runtime/launch_gate.cu): one thread waiting until flag[0] == gen, or
// timeout_ns have passed (then it sets flag[1] = gen).
cudaError_t launch_gate_kernel(unsigned* flag, unsigned gen, unsigned long long timeout_ns, cudaStream_t s);

class LaunchGate {
 public:
  LaunchGate();  // two words of mapped host memory; ok() false if they cannot be had
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;
  ~LaunchGate();
  bool ok() const { return host_ != nullptr; }
  // Queues a closed gate on s: the stream's later work waits until open(), or until timeout_ms
  // has passed (a host that could not queue its calls in time: the launch queue full, the thread
  // descheduled).
  cudaError_t close(cudaStream_t s, unsigned timeout_ms);
  void open();
  // After the stream has passed the gate: whether it gave up waiting (the calls behind it then
  // started at the host's launch rate, and their timing is not the GPU's).
  bool timed_out() const;

 private:
  volatile unsigned* host_ = nullptr;  // [0] the opened generation, [1] the last that timed out
  unsigned* device_ = nullptr;
  unsigned gen_ = 0;
};

}  // namespace cudal2::rt
