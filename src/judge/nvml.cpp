// NVML through dlopen (judge/nvml.hpp): the declarations are NVML's C ABI, so that neither nvml.h
// nor libnvidia-ml is needed to build, and a machine without the driver runs without it.
#include "judge/nvml.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>

namespace cudal2 {

namespace {

// nvmlReturn_t values used here.
constexpr int kSuccess = 0, kNotFound = 6, kInsufficientSize = 7;

// nvmlProcessInfo_t (the v2 layout, returned by the _v3 query) and nvmlProcessUtilizationSample_t.
struct ProcessInfo {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
struct UtilSample {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};

}  // namespace

struct Nvml::Api {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_bus_id)(const char*, void**) = nullptr;
  int (*procs)(void*, unsigned*, ProcessInfo*) = nullptr;
  int (*graphics)(void*, unsigned*, ProcessInfo*) = nullptr;  // optional: a graphics context time-slices too
  int (*util)(void*, UtilSample*, unsigned*, unsigned long long) = nullptr;
  ~Api() {
    if (shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

std::unique_ptr<Nvml> Nvml::open(const std::string& pci_bus_id, std::string* why) {
  auto api = std::make_unique<Api>();
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    *why = fmt::format("libnvidia-ml.so.1 not loaded ({})", dlerror());
    return nullptr;
  }
  auto sym = [&](const char* name) { return dlsym(api->lib, name); };
  api->init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  api->by_bus_id = reinterpret_cast<int (*)(const char*, void**)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  api->procs =
      reinterpret_cast<int (*)(void*, unsigned*, ProcessInfo*)>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
  api->graphics =
      reinterpret_cast<int (*)(void*, unsigned*, ProcessInfo*)>(sym("nvmlDeviceGetGraphicsRunningProcesses_v3"));
  api->util = reinterpret_cast<int (*)(void*, UtilSample*, unsigned*, unsigned long long)>(
      sym("nvmlDeviceGetProcessUtilization"));
  if (!api->init || !api->by_bus_id || !api->procs || !api->util) {
    *why = "libnvidia-ml.so.1 lacks the queries used (a driver older than 510?)";
    return nullptr;
  }
  if (const int e = api->init(); e != kSuccess) {
    *why = fmt::format("nvmlInit failed ({})", e);
    return nullptr;
  }
  api->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  std::unique_ptr<Nvml> n(new Nvml());
  if (const int e = api->by_bus_id(pci_bus_id.c_str(), &n->device_); e != kSuccess) {
    *why = fmt::format("NVML does not know the GPU at {} ({})", pci_bus_id, e);
    return nullptr;
  }
  n->api_ = std::move(api);
  return n;
}

Nvml::~Nvml() = default;

namespace {

// One of NVML's process lists, appended to out; false when NVML cannot say.
bool list(int (*query)(void*, unsigned*, ProcessInfo*), void* device, std::vector<GpuProcess>* out) {
  std::vector<ProcessInfo> info(64);
  for (int tries = 0; tries < 3; ++tries) {
    auto n = static_cast<unsigned>(info.size());
    const int e = query(device, &n, info.data());
    if (e == kInsufficientSize) {
      info.resize(n + 16);
      continue;
    }
    if (e != kSuccess) return false;
    for (unsigned i = 0; i < n && i < info.size(); ++i) out->push_back({info[i].pid, info[i].usedGpuMemory});
    return true;
  }
  return false;
}

}  // namespace

bool Nvml::processes(std::vector<GpuProcess>* out) const {
  out->clear();
  if (!list(api_->procs, device_, out)) return false;
  // Graphics contexts take time slices as compute ones do; a driver that cannot list them (a
  // compute-only GPU answers "not supported") leaves the compute list as the answer.
  if (api_->graphics) {
    std::vector<GpuProcess> g;
    if (list(api_->graphics, device_, &g))
      for (const auto& p : g)
        if (std::none_of(out->begin(), out->end(), [&](const GpuProcess& q) { return q.pid == p.pid; }))
          out->push_back(p);
  }
  return true;
}

bool Nvml::utilization(unsigned long long since_us, std::vector<GpuUtilSample>* out) const {
  out->clear();
  std::vector<UtilSample> s(256);
  auto n = static_cast<unsigned>(s.size());
  const int e = api_->util(device_, s.data(), &n, since_us);
  if (e == kNotFound) return true;  // no sample since then
  if (e != kSuccess) return false;
  for (unsigned i = 0; i < n && i < s.size(); ++i) out->push_back({s[i].pid, s[i].timeStamp, s[i].smUtil});
  return true;
}

}  // namespace cudal2
