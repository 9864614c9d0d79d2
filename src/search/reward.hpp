#pragma once
// The reward of one measurement: the one place it is computed (docs/tuning.md, "Reward"). Every
// policy learns from it, the store keeps it with each measurement, and nothing else scores.
// Pure arithmetic: no CUDA, no store.
#include <cstddef>
#include <optional>

#include "protocol/outcome.hpp"

namespace cudal2::search {

struct RewardInput {
  Outcome status;                 // ok, unsupported, not-capturable, not-run or a failure kind
  double time_us = 0;             // the candidate's median (status ok)
  double baseline_us = 0;         // the best baseline of the same job, same mode and timer (0: none)
  std::optional<double> rel_err;  // normal-distribution relative error (verification)
  std::size_t source_bytes = 0;   // free-form candidates' source length; 0 for generated sources
};

// Typical relative error of an fp32-accumulating HGEMM on the normal inputs; deviation above it
// is penalised (log2 of the excess).
inline constexpr double kTypicalRelErr = 2e-4;
inline constexpr double kRelErrWeight = 0.05;  // per doubling of rel_err above kTypicalRelErr
inline constexpr double kRelErrMaxPenalty = 0.5;
inline constexpr std::size_t kFreeSourceBytes = 8192;  // free-form sources up to this long cost nothing
inline constexpr double kSourceWeightPerKiB = 0.01;    // per KiB beyond that
inline constexpr double kSourceMaxPenalty = 0.25;

// The fixed reward of a failure kind (docs/tuning.md lists them); a check name counts as its kind
// (kind_of_check), None as error.
double failure_reward(FailureKind kind);
inline constexpr double kUnsupportedReward = -0.1;  // the kernel refused every shape it was given

// status ok: speedup over the baseline (baseline_us / time_us; 1.0 when there is no baseline)
// minus the deviation and length penalties, at least 0 (a correct kernel outranks every failure);
// unsupported: kUnsupportedReward; a failure: failure_reward(kind). not-run (the budget ran out
// first) and not-capturable (that timer cannot time this kernel) are not failures of the
// candidate: nothing (nullopt).
std::optional<double> reward(const RewardInput& in);

// The penalties on their own (>= 0), for tests and for printing.
double deviation_penalty(std::optional<double> rel_err);
double length_penalty(std::size_t source_bytes);

}  // namespace cudal2::search
