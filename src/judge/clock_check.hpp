#pragma once
// The judge's wall-clock cross-check of a runner's times (docs/threat-model.md, "Time only what
// the call does"), as a plain function so that its rule is tested without a GPU
// (tests/unit/clock_check_test.cpp). Per request, excess = the judge's wall time less what the
// runner claimed and the calibrated request overhead. One median over every request would let a
// candidate hide work in one kind of request (its eager batches, say) behind the clean medians of
// the others; so the rule holds per kind of request (graph, eager, host, chain, single), and over
// all of them.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudal2 {

struct ExcessFinding {
  std::string kind;  // the request kind whose median excess is too high, or "all"
  double median_us = 0;
  size_t requests = 0;
};

// Requests a median needs before it is judged: a single slow request is host noise.
inline constexpr size_t kMinExcessSamples = 3;
// A kind's median comes from a few requests (one per round), so it is noisier than the median over
// all: each kind is allowed this many margins. Measured on an H200: an honest kernel's graph
// requests once had a median excess of 203 us against a margin of 202 us (5 requests), its
// median over all requests 180 us.
inline constexpr double kPerKindMargins = 2;

// The first kind (in name order) whose median excess exceeds kPerKindMargins x margin_us, else
// "all" when the median over all requests exceeds margin_us, else nullopt.
std::optional<ExcessFinding> excess_beyond(const std::map<std::string, std::vector<double>>& by_kind,
                                           const std::vector<double>& all, double margin_us);

}  // namespace cudal2
