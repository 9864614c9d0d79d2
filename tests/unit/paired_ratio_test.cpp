// ShapeResult::paired_ratio and paired_interval: the bench's round-by-round ratio to the fastest
// baseline, and the confidence interval around it.
#include <gtest/gtest.h>

#include <vector>

#include "core/stats.hpp"
#include "judge/bench.hpp"

namespace cudal2 {
namespace {

MethodResult timed(const std::string& name, bool baseline, const std::vector<double>& graph) {
  MethodResult m;
  m.method = name;
  m.baseline = baseline;
  m.timing[Mode::Offline][0] = summarize(graph);
  m.samples[Mode::Offline][0] = graph;
  return m;
}

// Clocks drifting down over the run: both methods slow alike, round by round; ours is 1% faster
// in every round, and the pairing gives exactly that.
TEST(PairedRatio, CancelsDriftThatMovesBothSamplesOfARound) {
  std::vector<double> base, ours;
  for (int r = 0; r < 21; ++r) {
    const double clock = 1.0 + 0.01 * r;  // 20% slower by the end
    base.push_back(100 * clock);
    ours.push_back(99 * clock);
  }
  ShapeResult sr;
  sr.methods = {timed("autotune", true, base), timed("ours", false, ours)};
  const auto p = sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph);
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(*p, 100.0 / 99.0, 1e-12);
  // The fastest baseline against itself is exactly 1.
  EXPECT_DOUBLE_EQ(*sr.paired_ratio(sr.methods[0], Mode::Offline, TimerKind::Graph), 1.0);
}

TEST(PairedRatio, PairsWithTheBaselineOfLowestMedian) {
  ShapeResult sr;
  sr.methods = {timed("slow-baseline", true, {20, 20, 20}), timed("fast-baseline", true, {10, 12, 11}),
                timed("ours", false, {5, 6, 11})};
  // rounds: 10/5 = 2, 12/6 = 2, 11/11 = 1 -> median 2
  EXPECT_DOUBLE_EQ(*sr.paired_ratio(sr.methods[2], Mode::Offline, TimerKind::Graph), 2.0);
  // a method that is not a baseline never serves as the reference, however fast
  sr.methods[2].baseline = false;
  EXPECT_DOUBLE_EQ(*sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph), 1.0);
}

TEST(PairedRatio, NothingWhenTheRoundsDoNotMatchOrNoBaselineRan) {
  ShapeResult sr;
  sr.methods = {timed("baseline", true, {10, 10, 10}), timed("ours", false, {9, 9})};
  EXPECT_FALSE(sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph).has_value());
  // no samples for this timer
  EXPECT_FALSE(sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Eager).has_value());
  // the only baseline failed: nothing to pair with
  sr.methods[1].samples[Mode::Offline][0] = {9, 9, 9};
  sr.methods[0].status = Status::Failed;
  EXPECT_FALSE(sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph).has_value());
  // another mode was not run
  sr.methods[0].status = Status::Ok;
  EXPECT_TRUE(sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph).has_value());
  EXPECT_FALSE(sr.paired_ratio(sr.methods[1], Mode::Server, TimerKind::Graph).has_value());
}

// The interval around the paired ratio: the 2nd and 9th of 10 rounds' ratios. A method behind in
// every round has all of it below 1; one level with the baseline but noisy straddles 1.
TEST(PairedRatio, IntervalSaysWhetherTheRoundsAgree) {
  const std::vector<double> base{100, 100, 100, 100, 100, 100, 100, 100, 100, 100};
  ShapeResult sr;
  sr.methods = {timed("autotune", true, base),
                timed("behind", false, {105, 104, 106, 105, 103, 107, 105, 104, 106, 105}),
                timed("noisy", false, {96, 104, 99, 101, 103, 97, 100, 102, 98, 100})};
  const auto behind = sr.paired_interval(sr.methods[1], Mode::Offline, TimerKind::Graph);
  ASSERT_TRUE(behind.has_value());
  EXPECT_DOUBLE_EQ(behind->first, 100.0 / 106);  // sorted ratios: 100/107, 100/106, ..., 100/104, 100/103
  EXPECT_DOUBLE_EQ(behind->second, 100.0 / 104);
  EXPECT_LT(behind->second, 1.0);
  const auto noisy = sr.paired_interval(sr.methods[2], Mode::Offline, TimerKind::Graph);
  EXPECT_LT(noisy->first, 1.0);
  EXPECT_GT(noisy->second, 1.0);
  EXPECT_GE(*sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph), behind->first);
  EXPECT_LE(*sr.paired_ratio(sr.methods[1], Mode::Offline, TimerKind::Graph), behind->second);
  // fewer than 6 rounds: no 95% interval, though the paired ratio is there
  ShapeResult few;
  few.methods = {timed("autotune", true, {10, 10, 10, 10, 10}), timed("ours", false, {9, 9, 9, 9, 9})};
  EXPECT_TRUE(few.paired_ratio(few.methods[1], Mode::Offline, TimerKind::Graph).has_value());
  EXPECT_FALSE(few.paired_interval(few.methods[1], Mode::Offline, TimerKind::Graph).has_value());
  EXPECT_FALSE(few.paired_interval(few.methods[1], Mode::Server, TimerKind::Graph).has_value());
}

}  // namespace
}  // namespace cudal2
