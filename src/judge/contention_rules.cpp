#include "judge/contention_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cudal2::contention {

std::string probe_finding(const ProbeTimes& idle, const ProbeTimes& now) {
  if (now.span_us > kSpanFactor * idle.span_us + kSpanSlackUs)
    return fmt::format("the trusted probe took {:.0f} us on the GPU where an idle GPU takes {:.0f} us", now.span_us,
                       idle.span_us);
  if (now.wall_us > idle.wall_us + kWallSlackUs)
    return fmt::format("the trusted probe waited {:.0f} us for the GPU where an idle GPU answers in {:.0f} us",
                       now.wall_us, idle.wall_us);
  return "";
}

std::string foreign_use(const NvmlView& v, const std::set<unsigned>& ours) {
  if (v.have_util) {
    std::map<unsigned, unsigned> busiest;  // pid -> highest SM utilization in the window
    for (const auto& s : v.util)
      if (!ours.count(s.pid) && s.sm_percent > 0) busiest[s.pid] = std::max(busiest[s.pid], s.sm_percent);
    std::string who;
    for (const auto& [pid, pct] : busiest)
      who += fmt::format("{}pid {} ({}% of the SMs)", who.empty() ? "" : ", ", pid, pct);
    return who.empty() ? "" : "another process used the GPU: " + who;
  }
  if (v.have_processes) {
    std::string who;
    for (const auto& p : v.processes)
      if (!ours.count(p.pid))
        who += fmt::format("{}pid {} ({:.0f} MiB)", who.empty() ? "" : ", ", p.pid, p.used_bytes / 1048576.0);
    return who.empty() ? "" : "another process holds a context on the GPU: " + who;
  }
  return "";
}

bool pids_comparable(const NvmlView& v, unsigned judge_pid) {
  return v.have_processes &&
         std::any_of(v.processes.begin(), v.processes.end(), [&](const GpuProcess& p) { return p.pid == judge_pid; });
}

bool descends_from(unsigned pid, unsigned ancestor, const std::function<unsigned(unsigned)>& parent_of) {
  for (int i = 0; i < 64 && pid > 1; ++i) {
    if (pid == ancestor) return true;
    pid = parent_of(pid);
  }
  return pid == ancestor;
}

Finding classify(const std::string& probe, const std::string& foreign, bool nvml_comparable, const NvmlView& v,
                 const std::set<unsigned>& ours) {
  if (nvml_comparable && !foreign.empty()) return Finding::Foreign;
  if (probe.empty()) return Finding::Clean;
  // Held up with nobody else on the GPU: only our own processes can have done it, and the judge
  // waits while the runner answers, so the runner's work outlived its answer.
  if (nvml_comparable && v.have_processes &&
      std::all_of(v.processes.begin(), v.processes.end(), [&](const GpuProcess& p) { return ours.count(p.pid) > 0; }))
    return Finding::Own;
  return Finding::Foreign;
}

}  // namespace cudal2::contention
