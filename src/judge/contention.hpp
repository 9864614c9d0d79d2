#pragma once
// Contention seen while it happens (docs/threat-model.md, "Contention"). The judge checks the GPU
// after every request to an untrusted runner: a trusted probe (a CUDA graph of short spin kernels,
// timed by its own events and by the judge's wall clock) shows another context's time slices, and
// NVML, where the driver offers it, names the processes that held a context on the GPU or used its
// SMs since the last check. A measurement during which anything else used the GPU is recorded as
// gpu-disturbed (measured again after a backoff, never charged to the candidate, never rewarded);
// a probe held up while NVML lists no process but the judge's own, with one runner alive, is that
// runner's work outliving its answer, which is the candidate's.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "judge/contention_rules.hpp"

namespace cudal2 {

class CallGraph;

class ContentionMonitor {
 public:
  // The judge process's monitor, calibrated on first use (on the current CUDA device).
  static ContentionMonitor& get();
  ~ContentionMonitor();
  ContentionMonitor(const ContentionMonitor&) = delete;
  ContentionMonitor& operator=(const ContentionMonitor&) = delete;

  // Runners of ours, whose use of the GPU is no contention. Kept after they end (NVML's samples of
  // a runner just gone still come in for a while); `live` counts those not ended.
  void runner_started(pid_t pid) {
    ours_.insert(static_cast<unsigned>(pid));
    live_.insert(static_cast<unsigned>(pid));
  }
  void runner_ended(pid_t pid) { live_.erase(static_cast<unsigned>(pid)); }

  struct Seen {
    contention::Finding finding = contention::Finding::Clean;
    std::string what;  // "" when clean
  };
  // The GPU now (the probe) and since the last check (NVML).
  Seen check();
  // What the monitor can see with, for the record ("probe; NVML processes and utilization").
  const std::string& means() const { return means_; }

 private:
  ContentionMonitor();
  contention::ProbeTimes probe();
  contention::NvmlView nvml_view();
  // Counts as ours every process in v that descends from the judge, or has ended.
  void adopt_descendants(const contention::NvmlView& v);

  void* stream_ = nullptr;  // cudaStream_t
  std::unique_ptr<CallGraph> probe_;
  contention::ProbeTimes idle_;
  std::unique_ptr<Nvml> nvml_;
  bool comparable_ = false;
  std::set<unsigned> ours_, live_;
  unsigned long long last_us_ = 0;  // NVML's utilization window starts here
  std::string means_;
};

}  // namespace cudal2
