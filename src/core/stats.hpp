#pragma once
// Sample statistics for timings. Percentiles use linear interpolation between order
// statistics (numpy's default), so p50 of an even-sized sample is the mean of the middle two.
#include <cstddef>
#include <vector>

namespace cudal2 {

struct Summary {
  size_t n = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0;
};

double percentile(std::vector<double> values, double q);   // q in [0, 100]; throws on empty
Summary summarize(const std::vector<double>& values);      // throws on empty
double geometric_mean(const std::vector<double>& values);  // throws on empty or non-positive

}  // namespace cudal2
