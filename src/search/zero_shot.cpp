// The zero-shot rule's cross-validation (search/zero_shot.hpp).
#include "search/zero_shot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "codegen/spec.hpp"
#include "search/bayes_linear.hpp"

namespace cudal2::search {

namespace {
constexpr int kMinProblems = 20;                 // fewer validation problems: keep the top-1
constexpr double kKappas[] = {3, 2, 1, 0.5, 0};  // most conservative first (ties keep it)
constexpr double kTaus[] = {std::numeric_limits<double>::infinity(), 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0};
}  // namespace

ZeroShotRule calibrate_zero_shot(const std::vector<ZeroShotSample>& samples, int dim, double prior, double noise,
                                 size_t at) {
  struct Prob {
    int fold;
    std::vector<const ZeroShotSample*> items;  // in the samples' order
  };
  std::map<std::string, Prob> probs;
  for (const auto& smp : samples) {
    auto [it, added] = probs.try_emplace(smp.problem);
    if (added) it->second.fold = static_cast<int>(fnv1a64(smp.shape) % kZeroShotFolds);
    it->second.items.push_back(&smp);
  }
  // Per validated problem and candidate: predicted gain over the top-1, its posterior std, and
  // the measured log(pick / best) (<= 0).
  struct Scored {
    double gain, sd, regret;
  };
  std::vector<std::vector<Scored>> val;  // one per problem; [0] is the top-1
  for (int f = 0; f < kZeroShotFolds; ++f) {
    BayesLinear m(prior);
    m.set_noise_prior(noise);
    m.grow(dim);
    for (const auto& [key, pr] : probs)
      if (pr.fold != f)
        for (const auto* it : pr.items) m.add(it->x, it->y);
    const auto& w = m.mean();
    const double sigma = m.sigma();
    for (const auto& [key, pr] : probs) {
      if (pr.fold != f || pr.items.size() < 2) continue;
      const auto t = std::find_if(pr.items.begin(), pr.items.end(), [](const ZeroShotSample* it) { return it->top1; });
      if (t == pr.items.end()) continue;
      double ymax = -std::numeric_limits<double>::infinity();
      for (const auto* it : pr.items) ymax = std::max(ymax, it->y);
      std::vector<double> xt(dim, 0.0);
      const ZeroShotSample& top = **t;
      for (const auto& [j, v] : top.x) xt[j] += v;
      const double mt = dot(top.x, w);
      std::vector<Scored> sc{{0.0, 0.0, top.y - ymax}};
      for (const auto* it : pr.items) {
        if (it == &top) continue;
        std::vector<double> diff(xt.size());
        for (size_t j = 0; j < xt.size(); ++j) diff[j] = -xt[j];
        for (const auto& [j, v] : it->x) diff[j] += v;
        sc.push_back({dot(it->x, w) - mt, sigma * std::sqrt(m.quad_inv(std::move(diff))), it->y - ymax});
      }
      val.push_back(std::move(sc));
    }
  }
  ZeroShotRule r;
  r.at = at;
  r.problems = static_cast<int>(val.size());
  auto score = [&](double kappa, double tau) {
    double sum = 0;
    for (const auto& sc : val) {
      size_t best = 0;
      double lcb = -std::numeric_limits<double>::infinity();
      for (size_t i = 1; i < sc.size(); ++i)
        if (sc[i].gain - kappa * sc[i].sd > lcb) lcb = sc[i].gain - kappa * sc[i].sd, best = i;
      sum += lcb > tau ? sc[best].regret : sc[0].regret;
    }
    return val.empty() ? 0.0 : sum / double(val.size());
  };
  r.cv_top1 = score(0, std::numeric_limits<double>::infinity());
  r.cv_argmax = score(0, 0);
  r.cv_rule = r.cv_top1;
  if (r.problems >= kMinProblems) {
    r.calibrated = true;
    for (double tau : kTaus)
      for (double kappa : kKappas) {
        const double v = score(kappa, tau);
        if (v > r.cv_rule + 1e-12) r.cv_rule = v, r.kappa = kappa, r.tau = tau;
      }
  }
  return r;
}

}  // namespace cudal2::search
