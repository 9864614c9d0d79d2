#pragma once
// What the judge's contention monitor concludes from what it saw (judge/contention.hpp), as plain
// functions of numbers and process lists, so that the rules are tested without a GPU
// (tests/unit/contention_rules_test.cpp). docs/threat-model.md, "Contention", says why each holds.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "judge/nvml.hpp"

namespace cudal2::contention {

// One replay of the trusted probe (a graph of short spin kernels): its device span between the
// graph's own events, and the judge's wall clock from launch to completion.
struct ProbeTimes {
  double span_us = 0;
  double wall_us = 0;
};

// Another context's time slice that lands inside the probe stretches its span; one the probe had
// to wait for at submission stretches its wall time. Thresholds above what an idle GPU shows:
// twice the idle span plus 50 us, and the idle wall time plus 1 ms (a host that stalls a thread
// that long is rare; a time slice is about 2 ms).
inline constexpr double kSpanFactor = 2, kSpanSlackUs = 50, kWallSlackUs = 1000;

// "" when `now` is what an idle GPU gives (idle: the least of each over the monitor's calibration),
// else what stood out.
std::string probe_finding(const ProbeTimes& idle, const ProbeTimes& now);

// What NVML showed over a window: the processes with a context on the GPU, and the per-process
// utilization samples stamped in the window (have_*: whether NVML could say).
struct NvmlView {
  bool have_processes = false;
  std::vector<GpuProcess> processes;
  bool have_util = false;
  std::vector<GpuUtilSample> util;
};

// "" when no process outside `ours` used the GPU in the window, else who. Used means a utilization
// sample above 0% of the SMs; where NVML gives no utilization, a context held by another process
// counts as use (it may be computing: the conservative reading).
std::string foreign_use(const NvmlView& v, const std::set<unsigned>& ours);

// Whether NVML's pids are the judge's own: a judge with a context must be in the list (in a
// container NVML may report the host's pids, which match nothing here).
bool pids_comparable(const NvmlView& v, unsigned judge_pid);

// Whether pid is ancestor or descends from it, following parent_of (0: no parent known) at most 64
// steps. The judge's runners are its descendants, but the process NVML names for a runner can be a
// child of the one the judge started (the sandbox's pid namespace puts an init between them).
bool descends_from(unsigned pid, unsigned ancestor, const std::function<unsigned(unsigned)>& parent_of);

enum class Finding {
  Clean,    // nothing else used the GPU
  Foreign,  // another process (NVML), or something NVML cannot name (the probe alone)
  Own,      // the probe was held up while NVML lists no process but ours: the runner's own work
};

// The verdict of one check: the probe's finding, and NVML's view when its pids are comparable.
Finding classify(const std::string& probe, const std::string& foreign, bool nvml_comparable, const NvmlView& v,
                 const std::set<unsigned>& ours);

}  // namespace cudal2::contention
