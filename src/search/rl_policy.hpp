#pragma once
// `--search rl`: a policy over KernelSpec decisions conditioned on shape features, learned from
// what the tuning loop measures, saved to a policy file that warm-starts later runs and other
// shapes, and able to pick a spec for a shape never measured (best_guess, `cudal2 suggest`).
//
// Two learners share the features (src/search/features.hpp); a synthetic benchmark chose the
// default (tests/unit/rl_policy_test.cpp, RlBenchmark; numbers in docs/rl-policy.md):
//   thompson   a Bayesian linear cost model of log(roofline time / measured time) over
//              (shape x spec) features, exploring by Thompson sampling: each proposal slot draws
//              one model from the posterior and takes its best unmeasured spec. The default.
//   greedy     the same model's posterior mean, no exploration (an ablation).
//   reinforce  policy gradient with a learned baseline: a softmax over the valid specs of
//              linear scores of the same features, updated by REINFORCE, sampled without
//              replacement (Gumbel top-k).
// Invalid actions are never learned: only specs from the `space` argument of the problem's layout
// and accumulator that the family accepts for the shape (shape_refusal) are proposed; a spec that
// failed to compile is masked for every shape, any other failure for its problem.
//
// Ranked spaces. cublaslt's space for a problem lists cuBLASLt's heuristic suggestions first,
// best first: its first spec is the heuristic's top-1, what cuBLASLt runs untuned. The cost model
// sees that as a feature (the rank block of src/search/features.hpp), and the zero-shot pick keeps
// the top-1 unless the model is confident a deviation pays, by a margin cross-validated on the
// policy's own observations (search/zero_shot.hpp). The first evaluation of a problem is
// its zero-shot pick.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "search/features.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

struct RlOptions {
  std::string method = "thompson";  // thompson | greedy | reinforce
  uint64_t seed = 0;
  double explore = 1.0;       // thompson: scale of the posterior draw
  double prior = 1.0;         // ridge precision of the weights' prior
  double noise = 0.3;         // prior noise std of log time; blended with the residuals seen
  double lr = 0.5;            // reinforce: step size
  double temperature = 0.05;  // reinforce: softmax temperature (log-time units)
  FeatureOptions features;
};
// Parses "method", "seed", "explore", "prior", "noise", "lr", "temperature", "sm_count";
// throws InputError for an unknown key or a bad value.
RlOptions rl_options(const std::map<std::string, std::string>& options);

// The learning target of an ok measurement: log(roofline_us / time_us), shape-normalised so one
// model serves every shape (0 = at the roofline, -0.69 = half of it).
double efficiency_target(const Problem& p, double time_us);

class RlPolicy : public Policy {
 public:
  explicit RlPolicy(RlOptions o = {});
  ~RlPolicy() override;
  RlPolicy(RlPolicy&&) noexcept;
  RlPolicy& operator=(RlPolicy&&) noexcept;
  std::string name() const override { return "rl"; }
  std::vector<Proposal> propose(const Problem& p, int n, const std::vector<KernelSpec>& space) override;
  void observe(const std::vector<Observation>& results) override;
  // JSON (nlohmann): options, token vocabulary, every observation (problem, spec, status,
  // target), and the reinforce weights. load() replaces this policy's state with the file's; the
  // cost model is refitted from the observations, so features may change between versions.
  void save(const std::string& path) const override;
  void load(const std::string& path) override;
  static RlPolicy from_file(const std::string& path);

  // Zero-shot: the spec the policy expects to be fastest for p (no evaluation, no exploration):
  // the cost model's posterior mean (in a ranked space: the heuristic's top-1 unless a deviation's
  // cross-validated confidence bound says it pays), or reinforce's most likely action. nullopt: no
  // valid spec.
  std::optional<KernelSpec> best_guess(const Problem& p, const std::vector<KernelSpec>& space);
  // The k specs best_guess would rank first: best_guess, then by the posterior mean, with the
  // predicted time in microseconds (reinforce, which predicts no time: 0).
  std::vector<std::pair<KernelSpec, double>> rank(const Problem& p, const std::vector<KernelSpec>& space, int k);
  // The zero-shot rule for ranked spaces and its cross-validation, in words (`cudal2 suggest`).
  std::string zero_shot_rule() const;
  // The families the policy has measurements of (what `cudal2 suggest` searches by default).
  std::vector<std::string> families_seen() const;
  // The model's predicted time in microseconds (thompson/greedy; reinforce: 0).
  double predicted_us(const Problem& p, const KernelSpec& s);
  // The valid specs of `space` for p, in space order (what propose chooses from).
  std::vector<KernelSpec> valid_for(const Problem& p, const std::vector<KernelSpec>& space);

  const RlOptions& options() const { return opt_; }
  size_t observations() const;  // ok observations learned from

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  RlOptions opt_;
};

// The registry's factory (`--search rl`): options.extra holds rl_options' keys
// (`--policy-opt method=reinforce`), options.seed seeds the exploration.
std::unique_ptr<Policy> make_rl_policy(const PolicyOptions& options);

}  // namespace cudal2::search
