#include "judge/time_floor.hpp"

#include "core/stats.hpp"

namespace cudal2 {

std::optional<FloorBreach> below_floor(const std::vector<std::pair<std::string, std::vector<double>>>& timers,
                                       const std::vector<double>& single, double floor_us) {
  for (const auto& [name, v] : timers)
    if (!v.empty() && percentile(v, 50) < floor_us) return FloorBreach{name, percentile(v, 50)};
  if (!single.empty() && percentile(single, 50) < floor_us) return FloorBreach{"single-call", percentile(single, 50)};
  return std::nullopt;
}

}  // namespace cudal2
