#include "search/features.hpp"

#include <algorithm>
#include <cmath>

#include "core/roofline.hpp"

namespace cudal2::search {

namespace {

double log2d(double x) { return std::log2(std::max(x, 1.0)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<double> shape_features(const Problem& p, const FeatureOptions& o) {
  const Shape& s = p.shape;
  const double ai = flops(s) / min_bytes(s);  // flop per byte at the ideal traffic
  const bool a16 = s.m % 8 == 0 && s.n % 8 == 0 && s.k % 8 == 0;
  const bool a128 = s.n % 64 == 0 && s.k % 64 == 0;
  return {1.0,
          log2d(double(s.m)) / 16,
          log2d(double(s.n)) / 16,
          log2d(double(s.k)) / 16,
          log2d(ai) / 12,
          min_bytes(s) <= o.l2_bytes ? 1.0 : 0.0,
          a16 ? 1.0 : 0.0,
          a128 ? 1.0 : 0.0,
          p.layout == Layout::TN ? 1.0 : 0.0,
          p.accum == Accum::F16 ? 1.0 : 0.0};
}

std::vector<double> cross_features(const Problem& p) {
  const Shape& s = p.shape;
  const bool a16 = s.m % 8 == 0 && s.n % 8 == 0 && s.k % 8 == 0;
  return {1.0,
          log2d(double(s.m)) / 16,
          log2d(double(s.n)) / 16,
          log2d(double(s.k)) / 16,
          a16 ? 1.0 : 0.0,
          p.layout == Layout::TN ? 1.0 : 0.0};
}

Waves waves_of(const Shape& sh, const KernelSpec& s, int sm_count) {
  const int64_t tm = std::max(1, s.tile_m), tn = std::max(1, s.tile_n);
  const int64_t splits = std::max(1, s.splits);
  const int64_t ctas = ceil_div(sh.m, tm) * ceil_div(sh.n, tn) * splits;
  return {ctas, ceil_div(ctas, std::max(1, sm_count))};
}

std::vector<double> fit_features(const Problem& p, const KernelSpec& s, const FeatureOptions& o) {
  const Shape& sh = p.shape;
  const int64_t tm = std::max(1, s.tile_m), tn = std::max(1, s.tile_n), tk = std::max(1, s.tile_k);
  const int64_t splits = std::max(1, s.splits);
  const int64_t tiles_m = ceil_div(sh.m, tm), tiles_n = ceil_div(sh.n, tn);
  const auto [ctas, waves] = waves_of(sh, s, o.sm_count);
  const double sms = std::max(1, o.sm_count);
  const int64_t k_per = ceil_div(sh.k, splits);
  const int64_t k_iters = ceil_div(k_per, tk);
  const int64_t cm = std::max(1, s.cluster_m), cn = std::max(1, s.cluster_n);
  const double cluster_pad =
      double(tiles_m) / double(ceil_div(tiles_m, cm) * cm) * double(tiles_n) / double(ceil_div(tiles_n, cn) * cn);
  // Partial sums written and read back once per extra split, relative to the ideal traffic.
  const double reduction =
      splits > 1 ? std::log2(1.0 + double(splits) * double(sh.m) * double(sh.n) * 4.0 / min_bytes(sh)) / 4 : 0.0;
  return {std::log(double(ctas) / (double(waves) * sms)),
          std::log(std::min(1.0, double(ctas) / sms)),
          log2d(double(waves)) / 8,
          std::log(double(sh.m) / double(tiles_m * tm)),
          std::log(double(sh.n) / double(tiles_n * tn)),
          std::log(double(k_per) / double(k_iters * tk)),
          log2d(double(k_iters)) / 8,
          log2d(double(splits)) / 5,
          std::log(cluster_pad),
          reduction,
          log2d(double(tm * tn)) / 16};
}

std::vector<std::string> spec_tokens(const KernelSpec& s) {
  std::vector<std::string> out;
  const std::string& f = s.family;
  out.push_back(f);
  const std::string text = s.text();
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (word.find('=') != std::string::npos) out.push_back(f + "." + word);
    i = j + 1;
  }
  out.push_back(f + ".tile_m=" + std::to_string(s.tile_m));
  out.push_back(f + ".tile_n=" + std::to_string(s.tile_n));
  out.push_back(f + ".tile_k=" + std::to_string(s.tile_k));
  return out;
}

int FeatureMap::intern(const std::string& token) {
  auto [it, added] = index_.emplace(token, static_cast<int>(tokens_.size()));
  if (added) tokens_.push_back(token);
  return it->second;
}

std::vector<int> FeatureMap::token_ids(const KernelSpec& s) {
  std::vector<int> ids;
  for (const auto& t : spec_tokens(s)) ids.push_back(intern(t));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

SparseVec FeatureMap::features(const Problem& p, const KernelSpec& s) {
  const auto ids = token_ids(s);
  return features(shape_features(p, opt_), cross_features(p), fit_features(p, s, opt_), ids);
}

SparseVec FeatureMap::features(const std::vector<double>& shape, const std::vector<double>& cross,
                               const std::vector<double>& fit, const std::vector<int>& token_ids) const {
  SparseVec x;
  x.reserve(shape.size() + (fit.size() + token_ids.size()) * cross.size());
  for (int i = 0; i < kShapeFeatures; ++i)
    if (shape[i] != 0) x.emplace_back(i, shape[i]);
  for (int j = 0; j < kFitFeatures; ++j)
    if (fit[j] != 0)
      for (int c = 0; c < kCrossFeatures; ++c)
        if (cross[c] != 0) x.emplace_back(fit_offset() + j * kCrossFeatures + c, fit[j] * cross[c]);
  for (int t : token_ids)
    for (int c = 0; c < kCrossFeatures; ++c)
      if (cross[c] != 0) x.emplace_back(token_offset() + t * kCrossFeatures + c, cross[c]);
  return x;
}

}  // namespace cudal2::search
