#pragma once
// The rl policy's zero-shot rule (search/rl_policy.hpp: best_guess, rank, and the first proposal
// for a problem nothing is measured of). Where the problem's space is ranked (cublaslt), its first spec is cuBLASLt's
// heuristic top-1: a strong prior (cuBLASLt's own model of its kernels), and the spec a user gets without tuning. The
// pick deviates from it only when the cost model is confident the deviation pays: for each other spec i, gain_i = mean
// of w.(x_i - x_top1) (predicted log speedup over the top-1) and sd_i = sigma sqrt((x_i - x_top1)' A^-1 (x_i - x_top1))
// (its posterior std); the pick is the spec with the largest lower bound gain_i - kappa sd_i when that bound exceeds
// the margin tau, else the top-1. kappa and tau are chosen by K-fold cross-validation over the training problems (folds
// by shape): for each fold, the model fitted on the other folds picks among the specs measured on the fold's problems,
// and the pair with the best mean log(best measured / pick) wins; ties go to the more conservative pair (larger tau,
// then larger kappa). Before there is enough to validate on, the rule keeps the top-1 (tau = infinity). Without a
// ranked space the pick is the mean's argmax.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "search/features.hpp"

namespace cudal2::search {

struct ZeroShotRule {
  bool calibrated = false;
  double kappa = 0;
  double tau = std::numeric_limits<double>::infinity();
  size_t at = 0;     // ok observations it was calibrated on
  int problems = 0;  // problems cross-validated
  // Cross-validated mean log(best / pick): the rule, always the top-1, always the mean's argmax.
  double cv_rule = 0, cv_top1 = 0, cv_argmax = 0;
};
constexpr int kZeroShotFolds = 5;
// Recalibrated (zero-shot picks, save) once the ok observations grew by 5%: a policy file carries a
// calibration on at least 95% of its observations, and a warm-started run's few new observations
// do not cross-validate again (one calibration: ~5 s for 25,000 observations).
constexpr double kZeroShotRecalibrate = 1.05;

// One ok observation the rule is validated on: its problem (key, and the shape whose text picks its
// fold), its features, the learned target, and whether its spec is the problem's top-1.
struct ZeroShotSample {
  std::string problem;
  std::string shape;
  SparseVec x;
  double y = 0;
  bool top1 = false;
};

// The cross-validation above over `samples` (features of dimension `dim`, models with this prior
// and noise prior); `at`: the ok observations the rule is calibrated on.
ZeroShotRule calibrate_zero_shot(const std::vector<ZeroShotSample>& samples, int dim, double prior, double noise,
                                 size_t at);

}  // namespace cudal2::search
