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
constexpr std::array<std::pair<FailureKind, double>, 18> kFailureRewards{{
    {FailureKind::WrongResult, -1.0},
    {FailureKind::OutOfBounds, -1.0},
    {FailureKind::InputModified, -1.0},
    {FailureKind::TimingMismatch, -1.0},
    {FailureKind::InconsistentTime, -1.0},
    {FailureKind::ImplausibleTime, -1.0},
    {FailureKind::HostThread, -1.0},
    {FailureKind::ProtocolError, -1.0},
    {FailureKind::IllegalAddress, -0.8},
    {FailureKind::DeviceAssert, -0.8},
    {FailureKind::IllegalInstruction, -0.8},
    {FailureKind::CudaFatal, -0.8},
    {FailureKind::Crash, -0.8},
    {FailureKind::Hang, -0.8},
    {FailureKind::Exited, -0.8},
    {FailureKind::Error, -0.5},
    {FailureKind::CompileTimeout, -0.3},
    {FailureKind::CompileError, -0.2},
}};
// (unsupported, -0.1: kUnsupportedReward, a status rather than a failure kind.)

}  // namespace

double failure_reward(FailureKind kind) {
  const FailureKind k = kind_of_check(kind);
  for (const auto& [f, r] : kFailureRewards)
    if (f == k) return r;
  return failure_reward(FailureKind::Error);  // not reached: every kind is in the table
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
  if (in.status == Status::NotRun || in.status == Status::NotCapturable || in.status == Status::GpuDisturbed)
    return std::nullopt;
  if (in.status == Status::Unsupported) return kUnsupportedReward;
  if (in.status != Status::Ok) return failure_reward(in.status.kind);
  if (!(in.time_us > 0)) return failure_reward(FailureKind::Error);
  const double speedup = in.baseline_us > 0 ? in.baseline_us / in.time_us : 1.0;
  // Never below 0: every correct kernel, however slow, outranks every failure.
  return std::max(0.0, speedup - deviation_penalty(in.rel_err) - length_penalty(in.source_bytes));
}

}  // namespace cudal2::search
