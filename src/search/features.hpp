#pragma once
// Features the learned policies (src/search/rl_policy.hpp) see: what a shape looks like, what a
// spec is made of, and how the two fit together. No CUDA, no store: plain arithmetic on values.
//
// A (problem, spec) pair becomes a sparse vector over three blocks:
//   shape       shape_features(p)                  the same for every spec of one problem
//   fit         fit_features(p, s) x cross(p)      tile padding, waves on the GPU, K iterations...
//   tokens      one weight block per spec token    "sm90_cutlass.tile_n=256" x cross(p)
// The token blocks are what makes a spec's decisions learnable across shapes: a token's effect is
// a linear function of the shape's cross features (log sizes, alignment, layout), so what is
// learned on some shapes carries over to shapes never measured.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace cudal2::search {

struct FeatureOptions {
  int sm_count = 132;      // H100 SXM / H200: waves are counted against this many SMs
  double l2_bytes = 50e6;  // H100/H200 L2 (50 MB)
};

// log2 M/N/K, log2 arithmetic intensity, L2 fit, 16- and 128-byte alignment, layout, accumulator.
inline constexpr int kShapeFeatures = 10;
std::vector<double> shape_features(const Problem& p, const FeatureOptions& o = {});
// The part of the shape features each spec token and fit feature is crossed with.
inline constexpr int kCrossFeatures = 6;
std::vector<double> cross_features(const Problem& p);

// How the spec's tiles cover the problem: log wave efficiency (CTAs / (waves x SMs)), log
// occupancy of a partial first wave, log2 waves, log padding efficiency along M, N and K (per
// split), log2 K iterations per CTA, log2 splits, log cluster padding, split-K reduction traffic,
// log2 tile area. Every family is described through tile_m/n/k, cluster and splits.
inline constexpr int kFitFeatures = 11;
std::vector<double> fit_features(const Problem& p, const KernelSpec& s, const FeatureOptions& o = {});
// CTAs the spec launches on the problem (tiles x splits) and waves of them on the GPU.
struct Waves {
  int64_t ctas = 0, waves = 0;
};
Waves waves_of(const Shape& sh, const KernelSpec& s, int sm_count);

// The spec's decisions as tokens, each prefixed by its family: "sm90_cutlass", and for every
// "key=value" word of its canonical text "sm90_cutlass.key=value", plus the tile's parts
// ("sm90_cutlass.tile_m=128", ...). Generic over families: a new field becomes a new token.
std::vector<std::string> spec_tokens(const KernelSpec& s);

using SparseVec = std::vector<std::pair<int, double>>;

// The feature layout and the token vocabulary (tokens get indices in first-seen order; the
// vocabulary only grows, so a model's weights stay valid when new tokens appear).
class FeatureMap {
 public:
  explicit FeatureMap(FeatureOptions o = {}) : opt_(o) {}
  const FeatureOptions& options() const { return opt_; }
  int dim() const { return kShapeFeatures + kFitFeatures * kCrossFeatures + kCrossFeatures * vocab_size(); }
  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // The token's index, adding it when new.
  int intern(const std::string& token);
  // Indices of the spec's tokens (interned).
  std::vector<int> token_ids(const KernelSpec& s);
  // The full sparse vector of (p, s).
  SparseVec features(const Problem& p, const KernelSpec& s);
  // The same from precomputed parts (the hot path: tokens are shape-independent).
  SparseVec features(const std::vector<double>& shape, const std::vector<double>& cross, const std::vector<double>& fit,
                     const std::vector<int>& token_ids) const;
  // Offsets of the blocks.
  static constexpr int fit_offset() { return kShapeFeatures; }
  static constexpr int token_offset() { return kShapeFeatures + kFitFeatures * kCrossFeatures; }

 private:
  FeatureOptions opt_;
  std::vector<std::string> tokens_;
  std::map<std::string, int> index_;
};

}  // namespace cudal2::search
