#pragma once
// Features the learned policies (src/search/rl_policy.hpp) see: what a shape looks like, what a
// spec is made of, and how the two fit together. No CUDA, no store: plain arithmetic on values.
//
// A (problem, spec) pair becomes a sparse vector over four blocks:
//   shape       shape_features(p)                  the same for every spec of one problem
//   fit         fit_features(p, s) x cross(p)      tile padding, waves on the GPU, K iterations...
//   rank        [s is the heuristic's top-1] x cross(p)   where the problem's space is ranked
//               (cublaslt: cuBLASLt's heuristic lists its suggestions first, best first; the
//               policy knows which spec is its top-1 from the space's order, src/search/rl_policy.cpp)
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

// The CTA tile (M, N, K) and cluster a spec runs, in our orientation (M rows of row-major C):
// tile_m/n/k and cluster_m/n, or for cublaslt the sizes its tile and stages ids name
// (cublasLtMatmulTile_t: TILE_128x256 = 23, ...; cublasLtMatmulStages_t: STAGES_64xAUTO = 35,
// ...: the K step), swapped from cuBLASLt's orientation (its M is our N:
// src/codegen/family_cublaslt.hpp). 0 where unknown (undefined or an id the table lacks; cluster:
// auto).
struct CtaTile {
  int64_t m = 0, n = 0, k = 0;
  int64_t cluster_m = 0, cluster_n = 0;
};
CtaTile cta_tile(const KernelSpec& s);

// How the spec's tiles cover the problem: log wave efficiency (CTAs / (waves x SMs)), log
// occupancy of a partial first wave, log2 waves, log padding efficiency along M, N and K (per
// split), log2 K iterations per CTA, log2 splits, log cluster padding, split-K reduction traffic,
// log2 tile area. Every family is described through cta_tile, cluster and splits.
inline constexpr int kFitFeatures = 11;
std::vector<double> fit_features(const Problem& p, const KernelSpec& s, const FeatureOptions& o = {});
// CTAs the spec launches on the problem (tiles x splits) and waves of them on the GPU.
struct Waves {
  int64_t ctas = 0, waves = 0;
};
Waves waves_of(const Shape& sh, const KernelSpec& s, int sm_count);

// The spec's decisions as tokens, each prefixed by its family: "sm90_cutlass", and for every
// "key=value" word of its canonical text "sm90_cutlass.key=value", plus the CTA tile's parts
// ("sm90_cutlass.tile_m=128", ...: cta_tile). Generic over families: a new field becomes a new token.
std::vector<std::string> spec_tokens(const KernelSpec& s);

using SparseVec = std::vector<std::pair<int, double>>;

// The feature layout and the token vocabulary (tokens get indices in first-seen order; the
// vocabulary only grows, so a model's weights stay valid when new tokens appear).
class FeatureMap {
 public:
  explicit FeatureMap(FeatureOptions o = {}) : opt_(o) {}
  const FeatureOptions& options() const { return opt_; }
  int dim() const { return token_offset() + kCrossFeatures * vocab_size(); }
  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // The token's index, adding it when new.
  int intern(const std::string& token);
  // Indices of the spec's tokens (interned).
  std::vector<int> token_ids(const KernelSpec& s);
  // The full sparse vector of (p, s); top1: s is the heuristic's top-1 of p's ranked space.
  SparseVec features(const Problem& p, const KernelSpec& s, bool top1 = false);
  // The same from precomputed parts (the hot path: tokens are shape-independent).
  SparseVec features(const std::vector<double>& shape, const std::vector<double>& cross, const std::vector<double>& fit,
                     const std::vector<int>& token_ids, bool top1 = false) const;
  // Offsets of the blocks.
  static constexpr int fit_offset() { return kShapeFeatures; }
  static constexpr int rank_offset() { return kShapeFeatures + kFitFeatures * kCrossFeatures; }
  static constexpr int token_offset() { return rank_offset() + kCrossFeatures; }

 private:
  FeatureOptions opt_;
  std::vector<std::string> tokens_;
  std::map<std::string, int> index_;
};

}  // namespace cudal2::search
