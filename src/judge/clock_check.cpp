#include "judge/clock_check.hpp"

#include "core/stats.hpp"

namespace cudal2 {

std::optional<ExcessFinding> excess_beyond(const std::map<std::string, std::vector<double>>& by_kind,
                                           const std::vector<double>& all, double margin_us) {
  for (const auto& [kind, v] : by_kind)
    if (v.size() >= kMinExcessSamples && percentile(v, 50) > kPerKindMargins * margin_us)
      return ExcessFinding{kind, percentile(v, 50), v.size()};
  if (all.size() >= kMinExcessSamples && percentile(all, 50) > margin_us)
    return ExcessFinding{"all", percentile(all, 50), all.size()};
  return std::nullopt;
}

}  // namespace cudal2
