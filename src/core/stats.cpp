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

std::optional<std::pair<double, double>> median_interval(std::vector<double> v, double confidence) {
  const size_t n = v.size();
  if (n == 0 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  // P(Binomial(n, 1/2) <= i), summed term by term (C(n, i) / 2^n, in logs: no overflow at any n)
  std::vector<double> cdf(n + 1);
  double acc = 0;
  for (size_t i = 0; i <= n; ++i) {
    const double log_term = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                            std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0);
    acc += std::exp(log_term);
    cdf[i] = acc;
  }
  size_t j = 0;  // 1-based rank of the lower bound; 0: none covers enough
  for (size_t r = 1; 2 * r <= n + 1; ++r)
    if (1 - 2 * cdf[r - 1] >= confidence) j = r;
  if (j == 0) return std::nullopt;
  std::sort(v.begin(), v.end());
  return std::make_pair(v[j - 1], v[n - j]);
}

}  // namespace cudal2
