#pragma once
// Off-table M by bucket. A model's linear layers have a few (N, K) and any M (the tokens of a
// batch), so `cudal2 tune --model` tunes each (N, K) at M = 1, 2, 4, ... (and the M the user
// names); a call whose M falls between two tuned M of its (N, K) runs what was chosen at one of
// them. The rule decides which one:
//   up       the smallest tuned M' >= M: a configuration chosen for M' covers M's rows with the
//            same tiles, split-K and cluster, at most half of them idle
//   down     the largest tuned M' <= M
//   nearest  the tuned M' closest in log(M'/M)
//   off      none: the shape goes on to the neighbour rule and cuBLASLt
// Only M' within a factor 2 of M count (neighbouring buckets of powers of two), so a sparse set
// of tuned M (the grid's 64..16384) is not stretched to M = 1. Which rule the runtime uses is
// measured (docs/runtime.md).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cudal2::rt {

enum class BucketRule { Off, Up, Down, Nearest };

inline std::optional<BucketRule> parse_bucket_rule(std::string_view s) {
  if (s == "off") return BucketRule::Off;
  if (s == "up") return BucketRule::Up;
  if (s == "down") return BucketRule::Down;
  if (s == "nearest") return BucketRule::Nearest;
  return std::nullopt;
}

// ms: the tuned M of one (accumulator, layout, N, K), ascending, distinct. Returns the index of
// the one the rule picks for m, or -1.
inline int pick_bucket(const std::vector<std::int64_t>& ms, std::int64_t m, BucketRule rule) {
  auto within = [m](std::int64_t t) { return t < 2 * m && m < 2 * t; };
  int up = -1, down = -1;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i] >= m && up < 0) up = static_cast<int>(i);
    if (ms[i] <= m) down = static_cast<int>(i);
  }
  if (up >= 0 && !within(ms[up])) up = -1;
  if (down >= 0 && !within(ms[down])) down = -1;
  switch (rule) {
    case BucketRule::Off:
      return -1;
    case BucketRule::Up:
      return up;
    case BucketRule::Down:
      return down;
    case BucketRule::Nearest:
      if (up < 0 || down < 0) return up < 0 ? down : up;
      // Ties (M exactly between in log) go up, the rule that never leaves rows uncovered.
      return std::log(double(ms[up]) / double(m)) <= std::log(double(m) / double(ms[down])) ? up : down;
  }
  return -1;
}

}  // namespace cudal2::rt
