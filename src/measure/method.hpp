#pragma once
// The one interface every method of a bench is timed and verified through (`Method`): cuBLAS and
// cuBLASLt baselines, torch.matmul, the runtime, and candidates (each through its runner process,
// judge/runner_proxy.hpp, or in the judge for a cublaslt spec). Not to be confused with the runner
// process itself (`cudal2 runner`, runner/runner.hpp).
#include <cuda_runtime.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/problem.hpp"
#include "measure/device.hpp"
#include "protocol/outcome.hpp"

namespace cudal2 {

// Device pointers a method computes with. B is stored in the method's layout.
struct Operands {
  const void* A = nullptr;  // row-major M x K fp16
  const void* B = nullptr;  // K x N fp16, row-major (NN) or column-major (TN)
  void* C = nullptr;        // row-major M x N fp16
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  // The guarded allocations behind A, B and C, for a runner in another process (CUDA IPC
  // exports whole allocations).
  const GuardedBuffer* bufA = nullptr;
  const GuardedBuffer* bufB = nullptr;
  const GuardedBuffer* bufC = nullptr;
};

class SampleTimer;
struct TimingConfig;
class L2Flusher;

class Method {
 public:
  virtual ~Method() = default;
  virtual std::string name() const = 0;
  virtual Layout layout() const = 0;
  virtual Accum accum() const = 0;
  // Bind to one problem and its operands; may choose an algorithm by timing (auto-tuning), in
  // which case it runs on s. Throws MethodUnsupported when the problem is not supported.
  virtual void prepare(const Shape& shape, const Operands& ops, cudaStream_t s) = 0;
  // Enqueue one C = A*B on s with the bound operands. No allocation, free or synchronization:
  // it must be capturable in a CUDA graph.
  virtual void run(cudaStream_t s) = 0;
  // What was chosen and why (algorithm ids, how many candidates were seen, ...), for the CSV.
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
  // Device buffers the runner owns (e.g. a kernel's private workspace), each inside guard bands
  // that verification resets before a run and checks after it, like the bench's own buffers.
  virtual std::vector<std::pair<std::string, GuardedBuffer*>> private_buffers() { return {}; }
  // Trusted runners (the baselines) run in this process. An untrusted one (a candidate, run in a
  // confined process of its own) gets the judge's checks after every run it makes.
  virtual bool trusted() const { return true; }
  // The timer of this runner (default: MethodTimer, in this process).
  virtual std::unique_ptr<SampleTimer> make_timer(cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher);
  // Untrusted runners: "" or what the runner left behind that it must not have (threads,
  // processes), checked after each shape.
  virtual std::string leftovers() { return ""; }
};

using MethodPtr = std::unique_ptr<Method>;

}  // namespace cudal2
