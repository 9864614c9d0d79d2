#pragma once
// The physical floor on every time a runner reports (docs/threat-model.md, "Physical
// plausibility"), as a plain function so that its rule is tested without a GPU
// (tests/unit/time_floor_test.cpp). Each timer's median, and the fresh single calls' median, must be
// at least what the GPU could do at its peak: the batch-vs-single test trusts the single call, so a
// single call reported faster than the hardware allows (a timer restarted after the work,
// restart_timer.cu; a forged answer) would let a batch that does less work pass beside it.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudal2 {

struct FloorBreach {
  std::string what;  // the timer's name, or "single-call"
  double median_us = 0;
};

// The first of `timers` (name, samples; in order), then the single calls, whose median is below
// floor_us; empty sample lists are skipped.
std::optional<FloorBreach> below_floor(const std::vector<std::pair<std::string, std::vector<double>>>& timers,
                                       const std::vector<double>& single, double floor_us);

}  // namespace cudal2
