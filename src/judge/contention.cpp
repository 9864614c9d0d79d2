#include "judge/contention.hpp"

#include <unistd.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "measure/checks.hpp"
#include "measure/device.hpp"
#include "measure/timing.hpp"

namespace cudal2 {

namespace {

// The probe: 16 spin kernels of 4 us in one graph, about 70 us of device time. Long enough that
// a time slice given to another context often lands inside it, short enough to run after every
// request (a request of an untrusted candidate takes about 1 ms of device time or more).
constexpr int kProbeKernels = 16;
constexpr unsigned long long kProbeNs = 4000;
constexpr int kCalibrationReplays = 9;

// $CUDAL2_CONTENTION_LOG: a file the monitor appends its means and every finding to (for the
// contention measurements, bench/evaluator/contention_call.sh); unset, nothing is written.
void log_line(const std::string& line) {
  const char* path = std::getenv("CUDAL2_CONTENTION_LOG");
  if (!path || !*path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%d %s\n", static_cast<int>(getpid()), line.c_str());
    std::fclose(f);
  }
}

// The parent of pid from /proc/PID/stat (0 when it cannot be read).
unsigned parent_of(unsigned pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  unsigned ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

unsigned long long now_us() {
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

ContentionMonitor& ContentionMonitor::get() {
  // Never destroyed: its CUDA objects would outlive the runtime's teardown at exit.
  static auto* m = new ContentionMonitor();  // NOLINT(cppcoreguidelines-owning-memory)
  return *m;
}

ContentionMonitor::ContentionMonitor() {
  cudaStream_t s = nullptr;
  CUDAL2_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
  probe_ = std::make_unique<CallGraph>([](cudaStream_t st) { launch_spin(st, kProbeNs); }, s, kProbeKernels);
  if (!probe_->ok()) throw CudaError("the contention probe could not be captured: " + probe_->error());
  // The least of several replays: what an idle GPU gives (a neighbour that takes every replay's
  // time slices is still seen by NVML, and by the probes after requests as they differ).
  idle_ = {1e300, 1e300};
  for (int i = 0; i < kCalibrationReplays; ++i) {
    const auto p = probe();
    idle_.span_us = std::min(idle_.span_us, p.span_us);
    idle_.wall_us = std::min(idle_.wall_us, p.wall_us);
  }
  ours_ = {static_cast<unsigned>(getpid()), static_cast<unsigned>(getppid())};
  char bus[32] = {};
  int dev = 0;
  std::string why;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess)
    nvml_ = Nvml::open(bus, &why);
  else
    why = "no PCI bus id for the device";
  cudaGetLastError();
  last_us_ = now_us();
  if (nvml_) {
    const auto v = nvml_view();
    comparable_ = contention::pids_comparable(v, static_cast<unsigned>(getpid()));
    means_ = fmt::format("probe (idle: {:.0f} us span, {:.0f} us wall); NVML processes {}, utilization {}{}",
                         idle_.span_us, idle_.wall_us, v.have_processes ? "yes" : "no", v.have_util ? "yes" : "no",
                         comparable_ ? "" : " (its pids are not this process's: probe only)");
  } else {
    means_ =
        fmt::format("probe (idle: {:.0f} us span, {:.0f} us wall); no NVML: {}", idle_.span_us, idle_.wall_us, why);
  }
  log_line("monitor: " + means_);
}

ContentionMonitor::~ContentionMonitor() {
  probe_.reset();
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

contention::ProbeTimes ContentionMonitor::probe() {
  const auto s = static_cast<cudaStream_t>(stream_);
  const auto t0 = std::chrono::steady_clock::now();
  const double per_call = probe_->replay_us(s);
  const double wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return {per_call * kProbeKernels, wall};
}

void ContentionMonitor::adopt_descendants(const contention::NvmlView& v) {
  std::vector<unsigned> pids;
  for (const auto& p : v.processes) pids.push_back(p.pid);
  for (const auto& u : v.util) pids.push_back(u.pid);
  const auto me = static_cast<unsigned>(getpid());
  for (unsigned pid : pids) {
    if (ours_.count(pid)) continue;
    std::error_code ec;
    // Gone already: NVML's last samples of a process that ended (a runner's, most often); nothing
    // can say whose it was, and a neighbour that used the GPU long enough is seen while it lives.
    if (!std::filesystem::exists(fmt::format("/proc/{}", pid), ec) || contention::descends_from(pid, me, parent_of))
      ours_.insert(pid);
  }
}

contention::NvmlView ContentionMonitor::nvml_view() {
  contention::NvmlView v;
  if (!nvml_) return v;
  const unsigned long long now = now_us();
  v.have_processes = nvml_->processes(&v.processes);
  // Samples stamped since the last check, less a little for the driver's stamping of the sample
  // that was being taken then.
  v.have_util = nvml_->utilization(last_us_ > 200000 ? last_us_ - 200000 : 0, &v.util);
  std::erase_if(v.util, [&](const GpuUtilSample& s) { return s.time_us + 200000 < last_us_; });
  last_us_ = now;
  return v;
}

ContentionMonitor::Seen ContentionMonitor::check() {
  Seen out;
  std::string probe_says;
  try {
    // The judge's own work first: the probe must find nothing of ours queued before it.
    CUDAL2_CUDA(cudaDeviceSynchronize());
    probe_says = contention::probe_finding(idle_, probe());
  } catch (const std::exception& e) {
    // The judge's own trusted work failed: a neighbour's teardown took the launch with it.
    cudaGetLastError();
    probe_says = std::string("the trusted probe failed: ") + e.what();
  }
  const contention::NvmlView v = nvml_view();
  adopt_descendants(v);
  const std::string foreign = comparable_ ? contention::foreign_use(v, ours_) : "";
  out.finding = contention::classify(probe_says, foreign, comparable_, v, ours_);
  // With several runners alive (a job of several candidates) the work is one of theirs, but
  // whose is not known: contention for this one, which is measured again alone.
  if (out.finding == contention::Finding::Own && live_.size() > 1) {
    out.finding = contention::Finding::Foreign;
    probe_says += fmt::format(" (work of one of the job's {} runners)", live_.size());
  }
  if (out.finding == contention::Finding::Foreign)
    out.what = !foreign.empty() ? foreign + (probe_says.empty() ? "" : "; " + probe_says) : probe_says;
  else if (out.finding == contention::Finding::Own)
    out.what = probe_says + ", and no other process has a context on the GPU";
  if (out.finding != contention::Finding::Clean)
    log_line(fmt::format("{}: {}", out.finding == contention::Finding::Own ? "own" : "foreign", out.what));
  return out;
}

}  // namespace cudal2
