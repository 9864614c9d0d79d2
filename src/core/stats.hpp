#pragma once
// Sample statistics for timings. Percentiles use linear interpolation between order
// statistics (numpy's default), so p50 of an even-sized sample is the mean of the middle two.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace cudal2 {

struct Summary {
  size_t n = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0;
};

double percentile(std::vector<double> values, double q);   // q in [0, 100]; throws on empty
Summary summarize(const std::vector<double>& values);      // throws on empty
double geometric_mean(const std::vector<double>& values);  // throws on empty or non-positive
// A distribution-free confidence interval for the median: the order statistics x(j) and
// x(n+1-j) of the sorted sample, for the largest j whose coverage 1 - 2 P(Binomial(n, 1/2) < j)
// is at least `confidence` (10 samples: x(2)..x(9), 97.9%; 30: x(10)..x(21), 95.7%). None where
// even the sample's extremes cover less (fewer than 6 samples at 95%).
std::optional<std::pair<double, double>> median_interval(std::vector<double> values, double confidence = 0.95);

}  // namespace cudal2
