#include "search/reward.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace cudal2::search {

namespace {

// Cheating or broken results cost the most; faults and deaths almost as much (a fault may be an
// attack that did not land); build failures little (free-form proposals fail to compile often
// and learning not to is cheap); a kernel refusing a shape it cannot run is barely a failure.
constexpr std::array<std::pair<std::string_view, double>, 19> kFailureRewards{{
    {"wrong-result", -1.0},
    {"out-of-bounds", -1.0},
    {"input-modified", -1.0},
    {"timing-mismatch", -1.0},
    {"inconsistent-time", -1.0},
    {"implausible-time", -1.0},
    {"host-thread", -1.0},
    {"protocol-error", -1.0},
    {"illegal-address", -0.8},
    {"device-assert", -0.8},
    {"illegal-instruction", -0.8},
    {"cuda-fatal", -0.8},
    {"crash", -0.8},
    {"hang", -0.8},
    {"exited", -0.8},
    {"error", -0.5},
    {"compile-timeout", -0.3},
    {"compile-error", -0.2},
    {"unsupported", -0.1},
}};

}  // namespace

double failure_reward(std::string_view kind) {
  for (const auto& [k, r] : kFailureRewards)
    if (k == kind) return r;
  return failure_reward("error");
}

double deviation_penalty(std::optional<double> rel_err) {
  if (!rel_err || !(*rel_err > kTypicalRelErr)) return 0;  // NaN never reaches an "ok" row
  return std::min(kRelErrMaxPenalty, kRelErrWeight * std::log2(*rel_err / kTypicalRelErr));
}

double length_penalty(std::size_t source_bytes) {
  if (source_bytes <= kFreeSourceBytes) return 0;
  const double kib = static_cast<double>(source_bytes - kFreeSourceBytes) / 1024.0;
  return std::min(kSourceMaxPenalty, kSourceWeightPerKiB * kib);
}

std::optional<double> reward(const RewardInput& in) {
  if (in.status == "not-run" || in.status == "not-capturable") return std::nullopt;
  if (in.status != "ok") return failure_reward(in.status);
  if (!(in.time_us > 0)) return failure_reward("error");
  const double speedup = in.baseline_us > 0 ? in.baseline_us / in.time_us : 1.0;
  // Never below 0: every correct kernel, however slow, outranks every failure.
  return std::max(0.0, speedup - deviation_penalty(in.rel_err) - length_penalty(in.source_bytes));
}

}  // namespace cudal2::search
