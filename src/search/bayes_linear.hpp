#pragma once
// The rl policy's cost model (search/rl_policy.hpp): a Bayesian linear regression over sparse
// features, with the posterior draws Thompson sampling takes and the quadratic forms the
// zero-shot rule (search/zero_shot.hpp) needs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "search/features.hpp"

namespace cudal2::search {

inline double dot(const SparseVec& x, const std::vector<double>& w) {
  double s = 0;
  for (const auto& [i, v] : x) s += i < static_cast<int>(w.size()) ? w[i] * v : 0.0;
  return s;
}

// Bayesian linear regression y = w.x + e, e ~ N(0, s^2), w ~ N(0, s^2 / prior I). The posterior
// precision A = prior I + X'X is kept dense (an observation adds its sparse outer product,
// O(nnz^2)) together with its Cholesky factor A = U'U (U upper triangular, row major). The factor
// follows lazily: a few new observations by rank-one updates (O(d^2) each), many (a policy file's
// replay, a round measured on a thousand shapes) by refactoring A (O(d^3 / 3) once).
class BayesLinear {
 public:
  explicit BayesLinear(double prior = 1.0) : prior_(prior) {}
  int dim() const { return d_; }
  int64_t count() const { return n_; }

  void grow(int d) {
    if (d <= d_) return;
    auto extend = [&](std::vector<double>& m, double diag) {
      std::vector<double> out(size_t(d) * d, 0.0);
      for (int i = 0; i < d_; ++i)
        for (int j = 0; j < d_; ++j) out[size_t(i) * d + j] = m[size_t(i) * d_ + j];
      for (int i = d_; i < d; ++i) out[size_t(i) * d + i] = diag;
      m = std::move(out);
    };
    // New features were 0 in every observation so far: their block is the prior alone.
    extend(a_, prior_);
    extend(u_, std::sqrt(prior_));
    b_.resize(d, 0.0);
    d_ = d;
    dirty_ = true;
  }

  void add(const SparseVec& x, double y) {
    int top = 0;
    for (const auto& [i, v] : x) top = std::max(top, i + 1);
    grow(top);
    for (const auto& [i, xi] : x) {
      b_[i] += xi * y;
      double* row = &a_[size_t(i) * d_];
      for (const auto& [j, xj] : x) row[j] += xi * xj;
    }
    pending_.push_back(x);
    yy_ += y * y;
    ++n_;
    dirty_ = true;
  }

  const std::vector<double>& mean() {
    refresh();
    return mean_;
  }
  double sigma() {
    refresh();
    return sigma_;
  }
  // A draw from the posterior: mean + scale * sigma * U^-1 z, z ~ N(0, I).
  std::vector<double> sample(std::mt19937_64& rng, double scale) {
    refresh();
    std::normal_distribution<double> g;
    std::vector<double> z(d_);
    for (auto& e : z) e = g(rng);
    back_solve(z);
    for (int i = 0; i < d_; ++i) z[i] = mean_[i] + scale * sigma_ * z[i];
    return z;
  }
  void set_noise_prior(double s0) {
    s0_ = s0;
    dirty_ = true;
  }
  // The posterior variance of w.v in units of sigma^2: v' A^-1 v = |t|^2 with U' t = v.
  double quad_inv(std::vector<double> v) {
    refresh();
    v.resize(d_, 0.0);
    int k0 = 0;
    while (k0 < d_ && v[k0] == 0) ++k0;
    double q = 0;
    for (int k = k0; k < d_; ++k) {
      const double* row = &u_[size_t(k) * d_];
      const double t = v[k] / row[k];
      q += t * t;
      for (int i = k + 1; i < d_; ++i) v[i] -= row[i] * t;
    }
    return q;
  }

 private:
  // Solves U x = z in place.
  void back_solve(std::vector<double>& z) const {
    for (int i = d_ - 1; i >= 0; --i) {
      const double* row = &u_[size_t(i) * d_];
      double s = z[i];
      for (int j = i + 1; j < d_; ++j) s -= row[j] * z[j];
      z[i] = s / row[i];
    }
  }
  // U'U += x x' (LINPACK dchud).
  void rank_one(const SparseVec& x) {
    std::vector<double> v(d_, 0.0);
    int first = d_;
    for (const auto& [i, xv] : x) v[i] += xv, first = std::min(first, i);
    for (int k = first; k < d_; ++k) {
      if (v[k] == 0) continue;
      double* row = &u_[size_t(k) * d_];
      const double r = std::hypot(row[k], v[k]);
      const double c = r / row[k], s = v[k] / row[k];
      row[k] = r;
      for (int i = k + 1; i < d_; ++i) {
        row[i] = (row[i] + s * v[i]) / c;
        v[i] = c * v[i] - s * row[i];
      }
    }
  }
  // U from A (right-looking Cholesky over rows).
  void factor() {
    u_.assign(a_.size(), 0.0);
    for (int i = 0; i < d_; ++i)
      for (int j = i; j < d_; ++j) u_[size_t(i) * d_ + j] = a_[size_t(i) * d_ + j];
    for (int k = 0; k < d_; ++k) {
      double* rk = &u_[size_t(k) * d_];
      rk[k] = std::sqrt(std::max(rk[k], 1e-300));
      for (int j = k + 1; j < d_; ++j) rk[j] /= rk[k];
      for (int i = k + 1; i < d_; ++i) {
        const double f = rk[i];
        if (f == 0) continue;
        double* ri = &u_[size_t(i) * d_];
        for (int j = i; j < d_; ++j) ri[j] -= f * rk[j];
      }
    }
  }
  void refresh() {
    if (!dirty_) return;
    if (static_cast<int>(pending_.size()) * 3 > d_) {
      factor();
    } else {
      for (const auto& x : pending_) rank_one(x);
    }
    pending_.clear();
    // A mean = b: U' t = b (forward, column-oriented over U's rows), then U mean = t.
    std::vector<double> t = b_;
    for (int k = 0; k < d_; ++k) {
      const double* row = &u_[size_t(k) * d_];
      t[k] /= row[k];
      for (int i = k + 1; i < d_; ++i) t[i] -= row[i] * t[k];
    }
    back_solve(t);
    mean_ = std::move(t);
    // Residual sum of squares of the ridge fit: y'y - mean'b - prior |mean|^2; blended with the
    // prior noise (5 pseudo-observations) so a handful of points cannot claim certainty.
    double mb = 0, mm = 0;
    for (int i = 0; i < d_; ++i) {
      mb += mean_[i] * b_[i];
      mm += mean_[i] * mean_[i];
    }
    const double rss = std::max(0.0, yy_ - mb - prior_ * mm);
    constexpr double kPseudo = 5;
    sigma_ = std::sqrt((kPseudo * s0_ * s0_ + rss) / (kPseudo + double(n_)));
    dirty_ = false;
  }

  double prior_;
  double s0_ = 0.3;
  int d_ = 0;
  int64_t n_ = 0;
  double yy_ = 0;
  std::vector<double> a_, u_, b_, mean_;
  std::vector<SparseVec> pending_;  // added to A, not yet to U
  double sigma_ = 0.3;
  bool dirty_ = true;
};

}  // namespace cudal2::search
