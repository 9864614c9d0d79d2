// core/stats: percentiles (numpy's linear interpolation), summaries, geometric mean, the median's
// confidence interval.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <filesystem>
#include <fstream>
#include <set>
#include "core/csv.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "core/stats.hpp"

namespace cudal2 {
namespace {

// Expected values below are numpy.percentile(x, q) (method='linear'), worked out by hand:
// position = q/100 * (n-1) into the sorted sample, interpolate between its neighbours.

TEST(StatsPercentile, FourValuesByHand) {
  const std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);   // pos 1.5
  EXPECT_DOUBLE_EQ(percentile(v, 10), 1.3);   // pos 0.3
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);   // pos 2.7
  EXPECT_DOUBLE_EQ(percentile(v, 25), 1.75);  // pos 0.75
  EXPECT_DOUBLE_EQ(percentile(v, 75), 3.25);  // pos 2.25
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4.0);
}

TEST(StatsPercentile, UnsortedInputIsSortedFirst) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 10), 1.3);
  EXPECT_DOUBLE_EQ(percentile({50, 10, 40, 20, 30}, 10), 14.0);  // pos 0.4: 10 + 0.4*10
  EXPECT_DOUBLE_EQ(percentile({50, 10, 40, 20, 30}, 90), 46.0);  // pos 3.6: 40 + 0.6*10
  EXPECT_DOUBLE_EQ(percentile({50, 10, 40, 20, 30}, 50), 30.0);  // odd size: the middle one
}

TEST(StatsPercentile, UnevenGapsAndNegatives) {
  // sorted {-10, 0, 1, 100}: p50 pos 1.5 -> 0.5; p90 pos 2.7 -> 1 + 0.7*99 = 70.3
  const std::vector<double> v{100, -10, 1, 0};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 0.5);
  EXPECT_NEAR(percentile(v, 90), 70.3, 1e-12);
  EXPECT_NEAR(percentile(v, 10), -7.0, 1e-12);  // pos 0.3: -10 + 0.3*10
  EXPECT_DOUBLE_EQ(percentile({-3, -1}, 50), -2.0);
}

TEST(StatsPercentile, RepeatsAndSingleElement) {
  EXPECT_DOUBLE_EQ(percentile({5, 5, 5}, 37), 5.0);
  for (double q : {0.0, 10.0, 50.0, 90.0, 100.0}) EXPECT_DOUBLE_EQ(percentile({7.25}, q), 7.25) << q;
  EXPECT_DOUBLE_EQ(percentile({2, 2, 8}, 75), 5.0);  // pos 1.5 between 2 and 8
}

TEST(StatsPercentile, DoesNotModifyCallersVector) {
  const std::vector<double> v{3, 1, 2};
  auto copy = v;
  (void)percentile(copy, 50);
  EXPECT_EQ(copy, v);
}

TEST(StatsPercentile, EmptyThrows) { EXPECT_THROW(percentile({}, 50), std::invalid_argument); }

TEST(StatsPercentile, OutOfRangeQThrows) {
  const std::vector<double> v{1, 2, 3};
  EXPECT_THROW(percentile(v, -1), std::invalid_argument);
  EXPECT_THROW(percentile(v, -1e-9), std::invalid_argument);
  EXPECT_THROW(percentile(v, 100.0001), std::invalid_argument);
  EXPECT_THROW(percentile(v, 1000), std::invalid_argument);
  EXPECT_NO_THROW(percentile(v, 0));
  EXPECT_NO_THROW(percentile(v, 100));
}

TEST(StatsPercentile, MonotoneInQAndWithinRange) {
  std::mt19937 rng(1234);
  std::lognormal_distribution<double> d(0.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> v(1 + trial * 7);
    for (auto& x : v) x = d(rng);
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    double prev = -std::numeric_limits<double>::infinity();
    for (int q = 0; q <= 100; ++q) {
      const double p = percentile(v, q);
      EXPECT_GE(p, prev) << "q=" << q;
      EXPECT_GE(p, lo);
      EXPECT_LE(p, hi);
      prev = p;
    }
    EXPECT_DOUBLE_EQ(percentile(v, 0), lo);
    EXPECT_DOUBLE_EQ(percentile(v, 100), hi);
  }
}

TEST(StatsPercentile, OrderStatisticsHitExactly) {
  // For n = 11, q = 10*j lands exactly on the j-th order statistic.
  std::vector<double> v;
  for (int i = 0; i <= 10; ++i) v.push_back(i * i);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  for (int j = 0; j <= 10; ++j) EXPECT_DOUBLE_EQ(percentile(v, 10.0 * j), j * j) << j;
}

TEST(StatsSummary, FieldsByHand) {
  // sorted 1,3,5,7,9: p10 pos 0.4 -> 1.8; p90 pos 3.6 -> 8.2
  const auto s = summarize({5, 1, 9, 3, 7});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.8);
  EXPECT_DOUBLE_EQ(s.p90, 8.2);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
}

TEST(StatsSummary, SkewedSample) {
  // {1, 2, 3, 10}: median 2.5, mean 4, p10 pos 0.3 -> 1.3, p90 pos 2.7 -> 3 + 0.7*7 = 7.9
  const auto s = summarize({10, 1, 3, 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.3);
  EXPECT_NEAR(s.p90, 7.9, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
}

TEST(StatsSummary, SingleElement) {
  const auto s = summarize({3.5});
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 3.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.5);
  EXPECT_DOUBLE_EQ(s.min, 3.5);
  EXPECT_DOUBLE_EQ(s.max, 3.5);
  EXPECT_DOUBLE_EQ(s.mean, 3.5);
}

TEST(StatsSummary, AgreesWithPercentileOnRandomData) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> d(-5, 5);
  std::vector<double> v(101);
  double sum = 0;
  for (auto& x : v) sum += (x = d(rng));
  const auto s = summarize(v);
  EXPECT_EQ(s.n, v.size());
  EXPECT_DOUBLE_EQ(s.median, percentile(v, 50));
  EXPECT_DOUBLE_EQ(s.p10, percentile(v, 10));
  EXPECT_DOUBLE_EQ(s.p90, percentile(v, 90));
  EXPECT_NEAR(s.mean, sum / 101, 1e-12);
  EXPECT_LE(s.min, s.p10);
  EXPECT_LE(s.p10, s.median);
  EXPECT_LE(s.median, s.p90);
  EXPECT_LE(s.p90, s.max);
}

TEST(StatsSummary, EmptyThrows) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(StatsGeometricMean, ByHand) {
  EXPECT_NEAR(geometric_mean({1, 4}), 2.0, 1e-12);
  EXPECT_NEAR(geometric_mean({2, 8}), 4.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2, 8}), 2.0, 1e-12);  // cube root of 8
  EXPECT_NEAR(geometric_mean({3}), 3.0, 1e-12);
  EXPECT_NEAR(geometric_mean({5, 5, 5, 5}), 5.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.25, 4}), 1.0, 1e-12);
}

TEST(StatsGeometricMean, NoOverflowOnLargeValues) {
  // A product-then-root implementation overflows to Inf here.
  const double g = geometric_mean({1e200, 1e200, 1e200});
  EXPECT_NEAR(g / 1e200, 1.0, 1e-9);
  EXPECT_NEAR(geometric_mean({1e-200, 1e-200}) / 1e-200, 1.0, 1e-9);
}

TEST(StatsGeometricMean, AtMostArithmeticMean) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> d(0.1, 10);
  std::vector<double> v(50);
  double sum = 0;
  for (auto& x : v) sum += (x = d(rng));
  const double g = geometric_mean(v);
  EXPECT_LE(g, sum / 50);
  EXPECT_GE(g, *std::min_element(v.begin(), v.end()));
}

TEST(StatsGeometricMean, ThrowsOnEmptyOrNonPositive) {
  EXPECT_THROW(geometric_mean({}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({1, 0}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({0}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({2, -1}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({-4, -1}), std::invalid_argument);  // product positive, still invalid
  EXPECT_THROW(geometric_mean({1, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
}

}  // namespace
}  // namespace cudal2

// Merged from core_test.cpp (one unit-test file per area); its own namespace keeps its
// helpers apart from this file's.
namespace cudal2 {
namespace core_stats_cases {

TEST(Stats, PercentilesInterpolateLinearly) {
  const std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 10), 1.3);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 90), 7);
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile(v, 101), std::invalid_argument);
}

TEST(Stats, SummaryAndGeometricMean) {
  const auto s = summarize({5, 1, 9, 3, 7});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.p10, 1.8);
  EXPECT_NEAR(geometric_mean({1, 4}), 2.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2, 8}), 2.0, 1e-12);
  EXPECT_THROW(geometric_mean({1, 0}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({}), std::invalid_argument);
}

// The median's confidence interval: order statistics at ranks whose binomial coverage is enough.
TEST(Stats, MedianIntervalTakesTheRanksTheBinomialAllows) {
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);  // unsorted on purpose
  const auto i10 = median_interval(ten);           // 10 samples: x(2)..x(9), 97.9% (x(3)..x(8) is 89%)
  ASSERT_TRUE(i10.has_value());
  EXPECT_DOUBLE_EQ(i10->first, 2);
  EXPECT_DOUBLE_EQ(i10->second, 9);
  const auto i10_80 = median_interval(ten, 0.8);  // x(3)..x(8) covers 89%, x(4)..x(7) 66%
  EXPECT_DOUBLE_EQ(i10_80->first, 3);
  EXPECT_DOUBLE_EQ(i10_80->second, 8);
  std::vector<double> thirty;
  for (int i = 1; i <= 30; ++i) thirty.push_back(i);
  const auto i30 = median_interval(thirty);  // x(10)..x(21): 95.7%; x(11)..x(20) is 90.1%
  EXPECT_DOUBLE_EQ(i30->first, 10);
  EXPECT_DOUBLE_EQ(i30->second, 21);
  // 6 samples: only the extremes, 96.9%; 5: even they cover 93.8%, none
  EXPECT_EQ(median_interval({3, 1, 2, 6, 5, 4}), std::make_optional(std::make_pair(1.0, 6.0)));
  EXPECT_FALSE(median_interval({1, 2, 3, 4, 5}).has_value());
  EXPECT_FALSE(median_interval({}).has_value());
  EXPECT_FALSE(median_interval(ten, 1.0).has_value());
  // the interval holds the median
  EXPECT_LE(i30->first, percentile(thirty, 50));
  EXPECT_GE(i30->second, percentile(thirty, 50));
}

}  // namespace core_stats_cases
}  // namespace cudal2
