#include "search/rl_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "core/atomic_file.hpp"
#include "core/input_file.hpp"
#include "core/roofline.hpp"
#include "search/bayes_linear.hpp"
#include "search/space.hpp"
#include "search/zero_shot.hpp"

namespace cudal2::search {

namespace {

using json = nlohmann::json;

// 2: observations carry "top1" (the spec was the heuristic's top-1 of its problem's ranked space),
// the file carries the zero-shot rule's calibration ("zero_shot").
constexpr int kFileVersion = 2;

std::string problem_key(const Problem& p) {
  return fmt::format("{} {} {}", p.shape.str(), to_string(p.layout), to_string(p.accum));
}

// Field-wise equality (cheap, no text()): decides whether a `space` is the one already cached.
auto fields(const KernelSpec& s) {
  return std::tie(s.family, s.layout, s.accum, s.tile_m, s.tile_n, s.tile_k, s.cluster_m, s.cluster_n, s.mainloop,
                  s.epilogue, s.scheduler, s.stages, s.warps_m, s.warps_n, s.warps_k, s.min_ctas, s.prefetch_ahead,
                  s.pdl_mode, s.split_order, s.pipelined, s.l2_keep, s.raster, s.swizzle, s.decomposition, s.splits,
                  s.lt_algo, s.lt_tile, s.lt_stages, s.lt_reduction, s.lt_swizzle, s.lt_custom, s.lt_inner);
}

bool is_compile_failure(const std::string& status) { return status == "compile-error" || status == "compile-timeout"; }

// A family whose per-problem space is ranked: cublaslt's lists cuBLASLt's heuristic suggestions
// first, best first (src/baselines/cublaslt_space.hpp), so a problem's first cublaslt spec is the
// heuristic's top-1, what cuBLASLt runs untuned. The policy reads the rank from the space's order.
bool ranked_family(const std::string& family) { return needs_gpu_space({family}); }

struct Record {
  Problem problem;
  std::string spec_text;
  std::string status;
  double target = 0;  // ok only
  int top1 = -1;      // ok only: 1 the heuristic's top-1 of the problem's space, 0 not, -1 not known yet
};

}  // namespace

struct RlPolicy::Impl {
  explicit Impl(const RlOptions& o) : opt(o), fmap(o.features), model(o.prior), rng(o.seed) {
    model.set_noise_prior(o.noise);
  }

  struct Entry {
    KernelSpec spec;
    std::string hash;
    std::vector<int> ids;
  };
  // One candidate of one problem: its entry and sparse features.
  struct Cand {
    int entry;
    SparseVec x;
    bool top1 = false;  // the heuristic's top-1 of the problem's ranked space
  };

  RlOptions opt;
  FeatureMap fmap;
  BayesLinear model;
  std::mt19937_64 rng;
  std::vector<std::vector<double>> draws;  // thompson: posterior draws since the last observation
  int64_t draws_at = -1;
  // reinforce: policy weights and the value baseline over shape features.
  std::vector<double> theta;
  std::vector<double> value = std::vector<double>(kShapeFeatures, 0.0);
  double adv_var = 0.25;

  std::vector<Record> records;
  std::map<std::string, std::unordered_set<std::string>> seen;  // problem key -> spec hashes
  std::unordered_set<std::string> broken;                       // specs that failed to compile
  std::unordered_set<std::string> known;                        // every observation learned
  size_t ok_count = 0;
  // The heuristic's top-1 of each problem whose space holds a ranked family: problem key -> spec
  // hash, learned from the spaces the policy is given. An ok observation of a ranked family whose
  // problem's space was never seen (a store replayed before the first proposal) waits here.
  std::unordered_map<std::string, std::string> top1;
  std::map<std::string, std::vector<size_t>> deferred;  // problem key -> indices into records
  ZeroShotRule rule;

  // The spaces seen lately (the loop passes each problem its own: layouts differ, cublaslt's
  // specs are per shape); a space is recognised field by field, without building texts.
  struct CachedSpace {
    std::vector<Entry> entries;
    uint64_t used = 0;
  };
  static constexpr size_t kSpaces = 8;
  std::vector<CachedSpace> spaces;
  uint64_t clock = 0;

  void cache_space(const std::vector<KernelSpec>& space) {
    ++clock;
    for (size_t c = 0; c < spaces.size(); ++c) {
      const auto& e = spaces[c].entries;
      bool same = space.size() == e.size();
      for (size_t i = 0; same && i < space.size(); ++i) same = fields(space[i]) == fields(e[i].spec);
      if (same) {
        spaces[c].used = clock;
        if (c != 0) std::swap(spaces[0], spaces[c]);
        return;
      }
    }
    CachedSpace fresh;
    fresh.used = clock;
    fresh.entries.reserve(space.size());
    for (const auto& s : space) fresh.entries.push_back({s, s.hash(), fmap.token_ids(s)});
    if (spaces.size() >= kSpaces) {
      auto lru = std::min_element(spaces.begin(), spaces.end(), [](auto& a, auto& b) { return a.used < b.used; });
      spaces.erase(lru);
    }
    spaces.insert(spaces.begin(), std::move(fresh));
    model.grow(fmap.dim());
  }
  // The space of the latest cache_space call.
  const std::vector<Entry>& space_entries() const {
    static const std::vector<Entry> none;
    return spaces.empty() ? none : spaces.front().entries;
  }

  std::vector<Cand> candidates(const Problem& p, bool unseen_only) {
    std::vector<Cand> out;
    const auto sf = shape_features(p, fmap.options());
    const auto cf = cross_features(p);
    const std::string key = problem_key(p);
    const auto& entries = space_entries();
    // The first spec of a ranked family for this problem is the heuristic's top-1.
    std::string first;
    for (const auto& e : entries)
      if (e.spec.layout == p.layout && e.spec.accum == p.accum && ranked_family(e.spec.family)) {
        first = e.hash;
        break;
      }
    if (!first.empty()) note_top1(key, first);
    const auto it = seen.find(key);
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.spec.layout != p.layout || e.spec.accum != p.accum) continue;
      if (broken.count(e.hash)) continue;
      if (unseen_only && it != seen.end() && it->second.count(e.hash)) continue;
      if (!shape_refusal(e.spec, p.shape).empty()) continue;
      const bool is_top1 = !first.empty() && e.hash == first;
      out.push_back({static_cast<int>(i),
                     fmap.features(sf, cf, fit_features(p, e.spec, fmap.options()), e.ids, is_top1), is_top1});
    }
    return out;
  }

  // The problem's heuristic top-1 is `hash` (the latest space wins); observations that waited for
  // it are learned now.
  void note_top1(const std::string& key, const std::string& hash) {
    auto [it, added] = top1.emplace(key, hash);
    if (!added) {
      it->second = hash;
      return;
    }
    const auto d = deferred.find(key);
    if (d == deferred.end()) return;
    const auto waiting = std::move(d->second);
    deferred.erase(d);
    for (size_t i : waiting) {
      const KernelSpec spec = parse_spec(records[i].spec_text);  // parsed once already
      fit(i, spec, spec.hash() == hash ? 1 : 0);
    }
  }
  // 1/0: whether spec is the heuristic's top-1 of the problem; -1: its space was not seen yet.
  int top1_flag(const std::string& key, const KernelSpec& spec, const std::string& hash) const {
    if (!ranked_family(spec.family)) return 0;
    const auto it = top1.find(key);
    return it == top1.end() ? -1 : it->second == hash ? 1 : 0;
  }

  std::vector<double> logits(const std::vector<Cand>& cands, double temperature) const {
    std::vector<double> l(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) l[i] = dot(cands[i].x, theta) / temperature;
    return l;
  }

  void reinforce_update(const Problem& p, const KernelSpec& s, double y, const RlOptions& o) {
    // Advantage against the value baseline of the shape, normalised by a running variance.
    const auto sf = shape_features(p, fmap.options());
    double v = 0;
    for (int i = 0; i < kShapeFeatures; ++i) v += value[i] * sf[i];
    const double adv_raw = y - v;
    for (int i = 0; i < kShapeFeatures; ++i) value[i] += 0.1 * adv_raw * sf[i];
    adv_var = 0.98 * adv_var + 0.02 * adv_raw * adv_raw;
    const double adv = adv_raw / std::sqrt(adv_var + 1e-6);
    // grad log pi(a) = (x_a - E_pi[x]) / T, over every valid spec of the problem: in the cached
    // space the action came from.
    const std::string hash = s.hash();
    for (size_t c = 0; c < spaces.size(); ++c) {
      const auto& e = spaces[c].entries;
      if (std::any_of(e.begin(), e.end(),
                      [&](const Entry& x) { return x.hash == hash && x.spec.layout == p.layout; })) {
        if (c != 0) std::swap(spaces[0], spaces[c]);
        break;
      }
    }
    const auto cands = candidates(p, false);
    if (cands.empty()) return;
    theta.resize(fmap.dim(), 0.0);
    const auto l = logits(cands, o.temperature);
    const double mx = *std::max_element(l.begin(), l.end());
    std::vector<double> pr(l.size());
    double z = 0;
    for (size_t i = 0; i < l.size(); ++i) z += pr[i] = std::exp(l[i] - mx);
    // A step that moves the chosen spec's logit by about lr x advantage.
    double norm = 1;
    for (const auto& c : cands)
      if (space_entries()[c.entry].hash == hash) {
        norm = 0;
        for (const auto& [j, xv] : c.x) norm += xv * xv;
      }
    const double step = o.lr * adv * o.temperature / std::max(norm, 1e-3);
    for (size_t i = 0; i < cands.size(); ++i) {
      const double w = -pr[i] / z + (space_entries()[cands[i].entry].hash == hash ? 1.0 : 0.0);
      if (w == 0) continue;
      for (const auto& [j, xv] : cands[i].x) theta[j] += step * w * xv;
    }
  }

  // Remembers the observation (for the policy file), masks its spec for its problem (and for
  // every problem when it failed to compile), and unless masks_only learns from an ok one (once
  // it is known whether the spec is its problem's heuristic top-1). measured_here: the measurement
  // is this run's (the loop's results, the store's rows it replays on start), not a policy file's:
  // a file may come from another GPU (a new GPU's search warm-started from an older one's), whose
  // measurements teach the model but do not make a spec measured here. Compile failures mask
  // everywhere either way: they do not depend on the GPU.
  void learn(const Record& r, const KernelSpec* given, bool masks_only = false, bool measured_here = true) {
    // The loop replays the store's rows on start, which a loaded policy file may already hold:
    // learning a measurement twice would make the model overconfident, so a known one only marks
    // its spec measured here.
    const bool fresh =
        known.insert(fmt::format("{}|{}|{}|{:.17g}", problem_key(r.problem), r.spec_text, r.status, r.target)).second;
    if (!fresh && !measured_here) return;
    if (fresh) records.push_back(r);
    KernelSpec parsed;
    if (!given) {
      try {
        parsed = parse_spec(r.spec_text);
      } catch (const std::exception&) {
        return;  // a family this build does not know: kept in the file, nothing to learn
      }
    }
    const KernelSpec& spec = given ? *given : parsed;
    const std::string hash = spec.hash();
    if (measured_here) seen[problem_key(r.problem)].insert(hash);
    if (!fresh) return;
    if (r.status != "ok") {
      if (is_compile_failure(r.status)) broken.insert(hash);
      return;
    }
    if (masks_only) {
      ++ok_count;
      fmap.token_ids(spec);
      return;
    }
    const std::string key = problem_key(r.problem);
    const int flag = r.top1 >= 0 ? r.top1 : top1_flag(key, spec, hash);
    if (flag < 0) {
      deferred[key].push_back(records.size() - 1);
      return;
    }
    fit(records.size() - 1, spec, flag);
  }
  // Learns records[i] (ok), its spec being its problem's heuristic top-1 or not.
  void fit(size_t i, const KernelSpec& spec, int flag) {
    records[i].top1 = flag;
    ++ok_count;
    const Record& r = records[i];
    if (opt.method == "reinforce") {
      fmap.token_ids(spec);
      reinforce_update(r.problem, spec, r.target, opt);
    } else {
      model.add(fmap.features(r.problem, spec, flag == 1), r.target);
    }
  }

  // Recalibrates the zero-shot rule when the observations outgrew the last calibration.
  void ensure_calibrated() {
    if (opt.method == "reinforce") return;
    if (rule.at > 0 && double(ok_count) < kZeroShotRecalibrate * double(rule.at)) return;
    if (ok_count == 0) return;
    calibrate();
  }

  // ZeroShotRule's cross-validation (search/zero_shot.hpp) over the ok observations whose top-1
  // flag is known.
  void calibrate() {
    std::vector<ZeroShotSample> samples;
    for (const auto& r : records) {
      if (r.status != "ok" || r.top1 < 0) continue;
      KernelSpec spec;
      try {
        spec = parse_spec(r.spec_text);
      } catch (const std::exception&) {
        continue;
      }
      samples.push_back({problem_key(r.problem), r.problem.shape.str(), fmap.features(r.problem, spec, r.top1 == 1),
                         r.target, r.top1 == 1});
    }
    rule = calibrate_zero_shot(samples, fmap.dim(), opt.prior, opt.noise, ok_count);
  }

  // The zero-shot pick among cands (non-empty): ZeroShotRule.
  size_t zero_shot(const std::vector<Cand>& cands) {
    const auto& w = model.mean();
    std::vector<double> mu(cands.size());
    size_t argmax = 0, t = cands.size();
    for (size_t i = 0; i < cands.size(); ++i) {
      mu[i] = dot(cands[i].x, w);
      if (mu[i] > mu[argmax]) argmax = i;
      if (cands[i].top1) t = i;
    }
    if (t == cands.size()) return argmax;
    ensure_calibrated();
    if (!std::isfinite(rule.tau)) return t;
    std::vector<double> xt;
    if (rule.kappa > 0) {
      xt.assign(fmap.dim(), 0.0);
      for (const auto& [j, v] : cands[t].x) xt[j] += v;
    }
    const double sigma = model.sigma();
    size_t best = t;
    double lcb = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < cands.size(); ++i) {
      if (i == t) continue;
      double sd = 0;
      if (rule.kappa > 0) {
        std::vector<double> diff(xt.size());
        for (size_t j = 0; j < xt.size(); ++j) diff[j] = -xt[j];
        for (const auto& [j, v] : cands[i].x) diff[j] += v;
        sd = sigma * std::sqrt(model.quad_inv(std::move(diff)));
      }
      const double b = mu[i] - mu[t] - rule.kappa * sd;
      if (b > lcb) lcb = b, best = i;
    }
    return lcb > rule.tau ? best : t;
  }
};

RlPolicy::RlPolicy(RlOptions o) : impl_(std::make_unique<Impl>(o)), opt_(std::move(o)) {}
RlPolicy::~RlPolicy() = default;
RlPolicy::RlPolicy(RlPolicy&&) noexcept = default;
RlPolicy& RlPolicy::operator=(RlPolicy&&) noexcept = default;

size_t RlPolicy::observations() const { return impl_->ok_count; }

std::vector<KernelSpec> RlPolicy::valid_for(const Problem& p, const std::vector<KernelSpec>& space) {
  impl_->cache_space(space);
  std::vector<KernelSpec> out;
  for (const auto& c : impl_->candidates(p, false)) out.push_back(impl_->space_entries()[c.entry].spec);
  return out;
}

std::vector<Proposal> RlPolicy::propose(const Problem& p, int n, const std::vector<KernelSpec>& space) {
  Impl& m = *impl_;
  m.cache_space(space);
  auto cands = m.candidates(p, true);
  std::vector<Proposal> out;
  if (n <= 0 || cands.empty()) return out;
  n = std::min<int>(n, static_cast<int>(cands.size()));
  std::vector<char> taken(cands.size(), 0);
  auto take = [&](size_t i, const std::string& why) {
    taken[i] = 1;
    out.push_back({m.space_entries()[cands[i].entry].spec, "", why});
  };
  if (opt_.method == "reinforce") {
    // Sampling n without replacement from softmax(logits): the top n of logits + Gumbel noise.
    m.theta.resize(m.fmap.dim(), 0.0);
    auto l = m.logits(cands, opt_.temperature);
    std::uniform_real_distribution<double> u(1e-12, 1.0);
    for (auto& v : l) v -= std::log(-std::log(u(m.rng)));
    std::vector<size_t> order(l.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](size_t a, size_t b) { return l[a] > l[b]; });
    for (int i = 0; i < n; ++i) take(order[i], "rl reinforce sample");
    return out;
  }
  // The first evaluation of a problem nothing is measured of is the zero-shot pick (Impl::zero_shot):
  // the spec the policy would deploy untuned is the one worth knowing first, and with a space of
  // ~15 specs the first evaluation decides whether the search is within 2% after 10% of it.
  int slot = 0;
  if (const auto it = m.seen.find(problem_key(p)); it == m.seen.end() || it->second.empty()) {
    const size_t z = m.zero_shot(cands);
    take(z, cands[z].top1 && !std::isfinite(m.rule.tau) ? "rl zero-shot: the heuristic's top-1" : "rl zero-shot pick");
    slot = 1;
  }
  // Thompson: one posterior draw per slot, its best spec not yet taken; greedy: the mean. A draw
  // is a model, not a choice: slot j of every problem shares draw j until the next observation
  // (the loop proposes for every problem of a round in turn). Past kFreshDraws slots (a round
  // asking for much of the space at once) the last draw orders the rest.
  constexpr int kFreshDraws = 32;
  if (m.draws_at != m.model.count()) m.draws.clear(), m.draws_at = m.model.count();
  std::vector<double> w;
  for (; slot < n; ++slot) {
    if (opt_.method == "greedy") {
      if (w.empty()) w = m.model.mean();
    } else if (slot < kFreshDraws) {
      while (static_cast<int>(m.draws.size()) <= slot) m.draws.push_back(m.model.sample(m.rng, opt_.explore));
      w = m.draws[slot];
    }
    size_t best = cands.size();
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < cands.size(); ++i) {
      if (taken[i]) continue;
      const double s = dot(cands[i].x, w);
      if (s > best_score) best_score = s, best = i;
    }
    if (best == cands.size()) break;
    take(best, fmt::format("rl {}: predicted {:.1f}% of roofline", opt_.method, 100 * std::exp(best_score)));
  }
  return out;
}

void RlPolicy::observe(const std::vector<Observation>& results) {
  for (const auto& r : results) {
    if (r.spec.family == "source" || !r.source.empty()) continue;  // free-form: no spec features
    Record rec{r.problem, r.spec.text(), r.status, 0.0};
    if (r.status == "ok") {
      if (!(r.time_us > 0) || !std::isfinite(r.time_us)) continue;  // nothing to learn from
      rec.target = efficiency_target(r.problem, r.time_us);
    }
    impl_->learn(rec, &r.spec);
  }
}

std::vector<std::pair<KernelSpec, double>> RlPolicy::rank(const Problem& p, const std::vector<KernelSpec>& space,
                                                          int k) {
  Impl& m = *impl_;
  m.cache_space(space);
  const auto cands = m.candidates(p, false);
  if (opt_.method == "reinforce") m.theta.resize(m.fmap.dim(), 0.0);
  const std::vector<double>& w = opt_.method == "reinforce" ? m.theta : m.model.mean();
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < cands.size(); ++i) scored.emplace_back(dot(cands[i].x, w), i);
  k = std::clamp<int>(k, 0, static_cast<int>(scored.size()));
  // The zero-shot pick first (the cost model's argmax, or in a ranked space Impl::zero_shot's
  // choice between the heuristic's top-1 and a confident deviation), then the rest by the mean;
  // ties (an untrained model scores every spec 0) keep space order.
  const size_t first = opt_.method == "reinforce" || cands.empty() ? cands.size() : m.zero_shot(cands);
  std::partial_sort(scored.begin(), scored.begin() + k, scored.end(), [&](const auto& a, const auto& b) {
    if ((a.second == first) != (b.second == first)) return a.second == first;
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<std::pair<KernelSpec, double>> out;
  const double roof = roofline_us(p.shape);
  for (int i = 0; i < k; ++i)
    out.emplace_back(m.space_entries()[cands[scored[i].second].entry].spec,
                     opt_.method == "reinforce" ? 0.0 : roof / std::exp(scored[i].first));
  return out;
}

std::optional<KernelSpec> RlPolicy::best_guess(const Problem& p, const std::vector<KernelSpec>& space) {
  auto top = rank(p, space, 1);
  if (top.empty()) return std::nullopt;
  return top.front().first;
}

std::string RlPolicy::zero_shot_rule() const {
  const ZeroShotRule& z = impl_->rule;
  if (!z.calibrated)
    return fmt::format("in ranked spaces, the heuristic's top-1 (too little to cross-validate: {} problems)",
                       z.problems);
  const std::string when =
      std::isfinite(z.tau) ? fmt::format("unless a spec's predicted gain - {:g} sd > {:g}", z.kappa, z.tau) : "always";
  return fmt::format(
      "in ranked spaces, the heuristic's top-1 {} ({}-fold cross-validation on {} problems, {} observations: "
      "geometric mean best/pick {:.4f}; always the top-1 {:.4f}; the model's argmax {:.4f})",
      when, kZeroShotFolds, z.problems, z.at, std::exp(z.cv_rule), std::exp(z.cv_top1), std::exp(z.cv_argmax));
}

std::vector<std::string> RlPolicy::families_seen() const {
  std::set<std::string> f;
  for (const auto& r : impl_->records) f.insert(r.spec_text.substr(0, r.spec_text.find(' ')));
  return {f.begin(), f.end()};
}

double RlPolicy::predicted_us(const Problem& p, const KernelSpec& s) {
  if (opt_.method == "reinforce") return 0;
  Impl& m = *impl_;
  const auto x = m.fmap.features(p, s, m.top1_flag(problem_key(p), s, s.hash()) == 1);
  m.model.grow(m.fmap.dim());
  return roofline_us(p.shape) / std::exp(dot(x, m.model.mean()));
}

void RlPolicy::save(const std::string& path) const {
  // The file carries the zero-shot rule's calibration, so that the processes loading it (`cudal2
  // suggest`, warm-started runs) pick by the same rule without cross-validating again: refresh it
  // first when it is stale (the policy's state, not its observable behaviour, changes here).
  impl_->ensure_calibrated();
  const Impl& m = *impl_;
  json j;
  j["format"] = "cudal2-rl-policy";
  j["version"] = kFileVersion;
  j["options"] = {{"method", opt_.method},
                  {"seed", opt_.seed},
                  {"explore", opt_.explore},
                  {"prior", opt_.prior},
                  {"noise", opt_.noise},
                  {"lr", opt_.lr},
                  {"temperature", opt_.temperature},
                  {"sm_count", opt_.features.sm_count},
                  {"l2_bytes", opt_.features.l2_bytes}};
  j["tokens"] = m.fmap.tokens();
  json obs = json::array();
  for (const auto& r : m.records) {
    json o = {{"m", r.problem.shape.m},
              {"n", r.problem.shape.n},
              {"k", r.problem.shape.k},
              {"layout", to_string(r.problem.layout)},
              {"accum", to_string(r.problem.accum)},
              {"spec", r.spec_text},
              {"status", r.status}};
    if (r.status == "ok") o["target"] = r.target;
    if (r.status == "ok" && r.top1 >= 0) o["top1"] = r.top1;
    obs.push_back(std::move(o));
  }
  j["observations"] = std::move(obs);
  const ZeroShotRule& z = m.rule;
  j["zero_shot"] = {{"calibrated", z.calibrated},
                    {"kappa", z.kappa},
                    {"tau", std::isfinite(z.tau) ? json(z.tau) : json(nullptr)},  // null: always the top-1
                    {"at", z.at},
                    {"problems", z.problems},
                    {"cv_rule", z.cv_rule},
                    {"cv_top1", z.cv_top1},
                    {"cv_argmax", z.cv_argmax}};
  if (opt_.method == "reinforce") j["reinforce"] = {{"theta", m.theta}, {"value", m.value}, {"adv_var", m.adv_var}};
  // Whole or not at all (core/atomic_file.hpp): a crash or a full disk never leaves half a policy
  // file, nor a temporary one (the old ".tmp" stayed behind on a full disk, and an error at close
  // went unnoticed). Compact: a whole-grid campaign holds ~10^5 observations.
  write_file_atomically(path, j.dump() + "\n", "--policy-file");
}

void RlPolicy::load(const std::string& path) {
  const std::string text = read_input_file(path, "policy file", size_t{1} << 30);
  json j;
  try {
    j = json::parse(text);
    if (j.value("format", "") != "cudal2-rl-policy")
      throw InputError(fmt::format("'{}' is not a cudal2 rl policy file", path));
    if (j.at("version").get<int>() > kFileVersion)
      throw InputError(fmt::format("policy file '{}' has version {} (this build reads up to {})", path,
                                   j.at("version").get<int>(), kFileVersion));
    const json& o = j.at("options");
    RlOptions opt;
    opt.method = o.at("method").get<std::string>();
    opt.seed = o.at("seed").get<uint64_t>();
    opt.explore = o.at("explore").get<double>();
    opt.prior = o.at("prior").get<double>();
    opt.noise = o.at("noise").get<double>();
    opt.lr = o.at("lr").get<double>();
    opt.temperature = o.at("temperature").get<double>();
    opt.features.sm_count = o.at("sm_count").get<int>();
    opt.features.l2_bytes = o.at("l2_bytes").get<double>();
    if (opt.method != "thompson" && opt.method != "greedy" && opt.method != "reinforce")
      throw InputError(fmt::format("policy file '{}': unknown method '{}'", path, opt.method));
    auto impl = std::make_unique<Impl>(opt);
    // The vocabulary first, so token indices (and reinforce's weights) mean what they meant.
    for (const auto& t : j.at("tokens")) impl->fmap.intern(t.get<std::string>());
    const int version = j.at("version").get<int>();
    if (opt.method == "reinforce" && j.contains("reinforce")) {
      impl->theta = j["reinforce"].at("theta").get<std::vector<double>>();
      // Version 1 had no rank block: its token weights start kCrossFeatures earlier.
      if (version < 2 && impl->theta.size() > size_t(FeatureMap::rank_offset()))
        impl->theta.insert(impl->theta.begin() + FeatureMap::rank_offset(), kCrossFeatures, 0.0);
      impl->value = j["reinforce"].at("value").get<std::vector<double>>();
      impl->adv_var = j["reinforce"].at("adv_var").get<double>();
      if (impl->value.size() != kShapeFeatures) throw InputError(fmt::format("policy file '{}': bad value", path));
    }
    const bool replay = opt.method != "reinforce";
    for (const auto& r : j.at("observations")) {
      Record rec;
      rec.problem.shape = {r.at("m").get<int64_t>(), r.at("n").get<int64_t>(), r.at("k").get<int64_t>()};
      rec.problem.layout = parse_layout(r.at("layout").get<std::string>());
      rec.problem.accum = parse_accum(r.at("accum").get<std::string>());
      rec.spec_text = r.at("spec").get<std::string>();
      rec.status = r.at("status").get<std::string>();
      rec.target = rec.status == "ok" ? r.at("target").get<double>() : 0.0;
      // Version 1 files predate the rank feature: their observations count as not the top-1.
      if (rec.status == "ok") rec.top1 = version < 2 ? 0 : r.value("top1", -1);
      // reinforce's weights already hold what these taught: only its masks are rebuilt. Not
      // measured here: the store of the run that loads the file says what is.
      impl->learn(rec, nullptr, !replay, false);
    }
    if (j.contains("zero_shot")) {
      const json& z = j["zero_shot"];
      ZeroShotRule& rule = impl->rule;
      rule.calibrated = z.at("calibrated").get<bool>();
      rule.kappa = z.at("kappa").get<double>();
      rule.tau = z.at("tau").is_null() ? std::numeric_limits<double>::infinity() : z.at("tau").get<double>();
      rule.at = z.at("at").get<size_t>();
      rule.problems = z.at("problems").get<int>();
      rule.cv_rule = z.at("cv_rule").get<double>();
      rule.cv_top1 = z.at("cv_top1").get<double>();
      rule.cv_argmax = z.at("cv_argmax").get<double>();
    }
    impl_ = std::move(impl);
    opt_ = opt;
  } catch (const json::exception& e) {
    throw InputError(fmt::format("policy file '{}': {}", path, e.what()));
  }
}

RlPolicy RlPolicy::from_file(const std::string& path) {
  RlPolicy p;
  p.load(path);
  return p;
}

std::unique_ptr<Policy> make_rl_policy(const PolicyOptions& options) {
  RlOptions o = rl_options(options.extra);
  if (!options.extra.count("seed")) o.seed = options.seed;
  return std::make_unique<RlPolicy>(o);
}

}  // namespace cudal2::search
