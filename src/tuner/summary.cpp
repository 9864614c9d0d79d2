// What `cudal2 tune` prints when it is done: counts by outcome, compile and measure time, each
// shape's best candidate, and candidates per minute per GPU lane.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "tuner/tune.hpp"

namespace cudal2::tuner {

void print_tune_summary(const std::vector<CandidateOutcome>& outcomes) {
  std::map<std::string, int> by_status;
  double compile_s = 0, measure_s = 0;
  std::map<std::string, std::pair<double, std::string>> best;  // shape -> (us, spec)
  for (const auto& o : outcomes) {
    ++by_status[std::string(to_string(o.status))];
    compile_s += o.compile_seconds;
    measure_s += o.measure_seconds;
    for (const auto& [shape, us] : o.graph_us)
      if (!best.count(shape) || us < best[shape].first) best[shape] = {us, o.spec_text};
  }
  std::printf("%zu candidate(s):", outcomes.size());
  for (const auto& [st, n] : by_status) std::printf(" %s %d", st.c_str(), n);
  std::printf("\ncompile time %.0f s (summed over parallel compiles), measure time %.0f s\n", compile_s, measure_s);
  for (const auto& [shape, b] : best) std::printf("  %-20s %9.2f us  %s\n", shape.c_str(), b.first, b.second.c_str());
}

void print_tune_summary(const TuneResult& r) {
  print_tune_summary(r.outcomes);
  if (r.search_seconds <= 0 || r.outcomes.empty()) return;
  auto per_min = [](double n, double s) { return s > 0 ? 60.0 * n / s : 0.0; };
  if (r.lanes.size() > 1 || (r.lanes.size() == 1 && !r.lanes[0].device.empty()))
    for (const auto& l : r.lanes)
      std::printf("  gpu %d (CUDA_VISIBLE_DEVICES=%s): %d candidate(s) in %.0f s busy, %.1f per minute\n", l.ordinal,
                  l.device.empty() ? "inherited" : l.device.c_str(), l.candidates, l.busy_seconds,
                  per_min(l.candidates, l.busy_seconds));
  int n = 0;
  for (const auto& l : r.lanes) n += l.candidates;
  std::printf("throughput: %d candidate(s) in %.0f s on %zu GPU(s): %.1f per minute (%.1f per minute per GPU)\n", n,
              r.search_seconds, r.lanes.size(), per_min(n, r.search_seconds),
              per_min(n, r.search_seconds) / static_cast<double>(std::max<size_t>(1, r.lanes.size())));
}

}  // namespace cudal2::tuner
