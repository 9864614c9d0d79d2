#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace cudal2 {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  if (!(q >= 0 && q <= 100)) throw std::invalid_argument("percentile outside [0, 100]");
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

Summary summarize(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("summary of an empty sample");
  Summary s;
  s.n = v.size();
  s.median = percentile(v, 50);
  s.p10 = percentile(v, 10);
  s.p90 = percentile(v, 90);
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  s.min = *mn;
  s.max = *mx;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

double geometric_mean(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("geometric mean of an empty sample");
  double acc = 0;
  for (double x : v) {
    if (!(x > 0)) throw std::invalid_argument("geometric mean needs positive values");
    acc += std::log(x);
  }
  return std::exp(acc / static_cast<double>(v.size()));
}

}  // namespace cudal2
