#pragma once
// The verdicts a GPU shared with another process can give an honest candidate: a fault that
// poisons a context (a neighbour's teardown), a result a lost launch gives (wrong-result), and
// every timing verdict (another context's time slices land inside or around the timed work). The
// judge records such a verdict as gpu-disturbed when it saw the GPU used by someone else while the
// candidate was measured (judge/contention.hpp); attribution asks the canary about the rest
// (tuner/attribution.hpp). C++17: beside protocol/outcome.hpp.
#include "protocol/outcome.hpp"

namespace cudal2 {

constexpr bool disturbance_can_cause(FailureKind k) {
  return is_fatal_fault(k) || k == FailureKind::WrongResult || k == FailureKind::ImplausibleTime ||
         k == FailureKind::InconsistentTime || k == FailureKind::TimingMismatch;
}

// Whether an untrusted method's result is recorded as gpu-disturbed: the judge saw another process
// use the GPU while measuring it, and it passed (an ok measured beside a neighbour is not a clean
// measurement: never rewarded) or failed in a way contention can cause. Anything else stands.
constexpr bool recorded_as_disturbed(bool seen, Status status, FailureKind kind) {
  return seen && (status == Status::Ok || (status == Status::Failed && disturbance_can_cause(kind)));
}

}  // namespace cudal2
