#pragma once
// How methods are measured: the settings that a tuner's evaluation request (tuner::EvalRequest),
// the judge's job (protocol::EvalJob, on the wire) and the judge's bench (BenchOptions) all carry.
// Each of the three is a MeasureSettings, so a hop hands them on in one assignment
// (`to.measure_settings() = from.measure_settings()`), and a setting added here travels the whole
// way without a field copy to forget. Each carrier keeps its own defaults where they differ (the
// bench's: more samples and a larger verification budget, for a person's one-off run).
#include <vector>

#include "protocol/modes.hpp"

namespace cudal2::protocol {

struct MeasureSettings {
  std::vector<Mode> modes{Mode::Offline};
  TimerSet timers = kDefaultTimers;        // by TimerKind
  int reps = 20;                           // samples per timer, method and mode
  double qps = 200;                        // server mode: mean idle gap 1/qps seconds
  double verify_budget = double(1 << 28);  // multiply-adds per reference before sampling
  // Offline graph and eager batches of untrusted methods are chains: every call on inputs of its
  // own, every output verified (measure/interlude.hpp, docs/threat-model.md). false only to
  // measure what chains cost: back-to-back batches on one set of inputs, gameable by reuse.
  bool interleave = true;

  bool operator==(const MeasureSettings&) const = default;
  MeasureSettings& measure_settings() { return *this; }
  const MeasureSettings& measure_settings() const { return *this; }
};

}  // namespace cudal2::protocol
