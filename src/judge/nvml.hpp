#pragma once
// The few NVML queries the judge's contention monitor needs (judge/contention.hpp): which
// processes hold a context on the judge's GPU, and how busy each kept it since a moment. NVML
// (libnvidia-ml, part of the driver) is loaded with dlopen, so a machine without it, a CPU-only one
// included, still runs the judge: open() then says why it is not there and the monitor relies on
// its probe alone. The declarations below are NVML's stable C ABI (nvml.h, not needed to build).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cudal2 {

struct GpuProcess {
  unsigned pid = 0;
  unsigned long long used_bytes = 0;
};

struct GpuUtilSample {
  unsigned pid = 0;
  unsigned long long time_us = 0;  // wall clock (microseconds since the epoch), as NVML stamps it
  unsigned sm_percent = 0;
};

class Nvml {
 public:
  // NVML on the GPU with this PCI bus id (cudaDeviceGetPCIBusId), or nullptr with *why set.
  static std::unique_ptr<Nvml> open(const std::string& pci_bus_id, std::string* why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  // Processes with a compute (or, where NVML lists them, graphics) context on the GPU; false when
  // NVML cannot say.
  bool processes(std::vector<GpuProcess>* out) const;
  // Per-process utilization samples stamped after since_us; false when NVML cannot say (a
  // virtualised GPU may not support it). No sample since then is true with an empty list.
  bool utilization(unsigned long long since_us, std::vector<GpuUtilSample>* out) const;

 private:
  Nvml() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
};

}  // namespace cudal2
