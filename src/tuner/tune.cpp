#include "tuner/tune.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "search/reward.hpp"
#include "search/space.hpp"
#include "store/claims.hpp"
#include "store/store.hpp"
#include "tuner/budget.hpp"
#include "tuner/lanes.hpp"
#include "tuner/lt_space.hpp"
#include "tuner/record.hpp"
#include "tuner/round.hpp"
#include "tuner/stored.hpp"

namespace cudal2::tuner {

namespace {

// How often a tuner whose remaining work other tuners hold looks whether it was measured or its
// claimer died: short next to a judge job (seconds), long next to a claim (a transaction).
constexpr double kClaimPollSeconds = 0.2;

// Sleeps about `seconds`, waking early when the stop flag is set.
void nap(double seconds, const std::atomic<bool>* stop) {
  const auto until = Budget::Clock::now() + std::chrono::duration<double>(seconds);
  while (Budget::Clock::now() < until && !(stop && stop->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// What a tune works from once its options are accepted: the policy, the space (and each spec's
// place in it), the problems (shape x layout) and the GPU lanes' device ordinals.
struct Plan {
  std::unique_ptr<search::Policy> policy;
  search::ProblemSpace space;
  size_t space_size = 0;
  std::map<std::string, size_t> space_index;  // spec text -> its place in the space
  std::vector<Problem> problems;
  std::vector<int> ordinals;
};

// Refuses everything that can be refused before the GPU is touched, then builds the plan.
Plan plan_tune(const TuneOptions& o) {
  Plan plan;
  plan.policy = search::make_policy(o.search, o.policy);
  if (o.families.empty()) throw InputError("--families names no kernel family");
  // A listed space (@FILE) is the run's whole space, cublaslt specs included; otherwise cublaslt's
  // space is asked of a judge per problem (below) and the other families' is enumerated here.
  const bool listed = o.space.starts_with("@");
  plan.space.common =
      search::search_space(listed ? o.families : search::shape_independent(o.families), o.space, o.accum);
  if (o.final_top > 0 && o.final_csv.empty()) throw InputError("--final-top needs --final-csv FILE");
  if (o.budget < 0) throw InputError("--budget must be 0 (no limit) or positive");
  if (o.per_problem < 0) throw InputError("--per-problem must be 0 (as --round) or positive");
  if (o.max_rounds < 0) throw InputError("--rounds must be 0 (no limit) or positive");
  if (o.eval.shapes.empty()) throw InputError("no shapes to tune");
  if (o.layouts.empty()) throw InputError("--layouts names no layout");
  check_gpus_syntax(o.gpus);
  // A policy file that cannot be read is bad input, refused before the GPU is looked for.
  if (!o.policy.state_path.empty() && std::filesystem::exists(o.policy.state_path))
    plan.policy->load(o.policy.state_path);
  if (o.check_gpu) o.local.require();
  plan.ordinals = lane_ordinals(o);
  // One problem's own space: cuBLASLt's neighbourhood of its heuristic.
  if (search::needs_gpu_space(o.families) && !o.skip_search && !listed) {
    // cuBLASLt answers for the GPU in use: ask a judge (the process that owns the device).
    for (auto& [p, specs] : judge_lt_space(o.eval.judge_exe, o.eval.shapes, o.layouts, o.accum, o.lt_max,
                                           o.eval.job_overhead_s + o.eval.timeout_s))
      plan.space.per_problem[search::problem_key(p.shape, p.layout)] = std::move(specs);
  }
  const auto all = plan.space.all();
  plan.space_size = all.size();
  for (size_t i = 0; i < all.size(); ++i) plan.space_index.emplace(all[i].text(), i);
  for (const auto& sh : o.eval.shapes)
    for (auto layout : o.layouts) plan.problems.push_back({sh, layout, o.accum});
  return plan;
}

void announce(const TuneOptions& o, size_t left, size_t space_size) {
  if (o.progress)
    std::fprintf(stderr, "cudal2 tune: %zu of %zu candidate(s) left to evaluate on %zu shape(s)\n", left, space_size,
                 o.eval.shapes.size());
}

// The rounds: propose, leave out what other tuners on the store hold or measured, evaluate on the
// lanes, observe; until the policy has nothing left, the budget is spent, or a stop.
void search_rounds(const TuneOptions& o, Plan& plan, std::vector<Lane>& lanes, TuneResult& result) {
  search::Policy& policy = *plan.policy;
  const Mode mode = o.eval.modes.front();
  const std::string gpu = stored_gpu_name(o.db_path, o.local, plan.ordinals.front());
  // Claims need a name every tuner on the store agrees on from the start: without a local GPU,
  // the stored name above depends on whether another tuner has stored a row yet, so claim under
  // "" (the judge's GPU, store/claims.hpp).
  const std::string claim_gpu = o.local.available() ? gpu : std::string();
  store::WorkClaims claims(o.db_path);
  std::mutex claims_mu;  // one connection, asked by every lane's thread
  share_claims(lanes, o.stop, claims, claims_mu, claim_gpu, mode);
  {
    // Resume: what the store knows about this GPU, these problems and the run's specs.
    const auto db = store::Store::open(o.db_path);
    for (const auto& p : plan.problems)
      policy.observe(stored_observations(db, gpu, p, mode, plan.space.for_problem(p)));
  }
  Budget budget(o.budget, o.budget_minutes);
  bool announced = false;  // the first planned round's size is printed once
  int replanned = 0;       // empty rounds in a row planned again after observing others' rows
  // Free-form sources a round had no room for, per problem (propose_round).
  std::vector<std::vector<search::Proposal>> queued(plan.problems.size());
  for (;;) {
    if (o.max_rounds > 0 && result.rounds >= o.max_rounds) break;
    if (o.stop && o.stop->load()) break;
    const int n = budget.cap(o.round > 0 ? o.round : 0);
    auto round = propose_round(policy, plan.space, plan.problems, plan.space_index, n, o.per_problem, queued);
    const auto planned = plan_round(claims, claim_gpu, mode, o.accum, o.eval.shapes, round);
    // Another tuner measured these: the policy learns them from the store, as on a resume, and
    // proposes other work next (with --round N, the first N proposals measured elsewhere made an
    // empty round, and the tuner left with the rest of the space open).
    observe_measured_elsewhere(policy, o.db_path, o.local, plan.ordinals.front(), mode, planned.measured_elsewhere);
    if (!announced) {
      announced = true;
      result.first_round = round.size();
      announce(o, round.size(), plan.space_size);
    }
    if (budget.out_of_time()) break;
    if (round.empty()) {
      // Measured elsewhere and now observed: plan again once (a policy that proposes them anyway
      // ends the run here, as an empty round always did).
      if (planned.held == 0 && (planned.measured_elsewhere.empty() || ++replanned > 1)) break;
      // Work other tuners hold is waited for, not left: if one of them dies with it, its claims
      // lapse and this tuner takes the work over (it used to exit at once, and the work stayed
      // undone until a resume).
      if (planned.held > 0) nap(kClaimPollSeconds, o.stop);
      continue;
    }
    replanned = 0;
    ++result.rounds;
    if (o.progress && result.rounds > 1)
      std::fprintf(stderr, "cudal2 tune: round %d: %zu candidate(s), %.1f min elapsed\n", result.rounds, round.size(),
                   budget.elapsed_minutes());
    const auto outcomes = evaluate_lanes(lanes, round, budget);
    const auto got = read_round(round, outcomes, o.eval.shapes, o.accum);
    policy.observe(got.seen);
    if (!o.policy.state_path.empty()) policy.save(o.policy.state_path);
    result.outcomes.insert(result.outcomes.end(), outcomes.begin(), outcomes.end());
    budget.spend(static_cast<int>(round.size()));
    if (got.cut_short || budget.out_of_candidates()) break;
    // gpu-disturbed candidates are proposed again in a later round; a round that measured
    // nothing else says the GPU stays disturbed: stop rather than go round in circles (a
    // resumed run measures them).
    if (got.disturbed == round.size()) {
      if (o.progress)
        std::fprintf(stderr, "cudal2 tune: the GPU was disturbed for every candidate of the round; stopping\n");
      break;
    }
  }
  result.search_seconds = budget.elapsed_seconds();
  for (auto& lane : lanes) lane.req.claim = nullptr;  // refers to `claims`, which ends here
}

// Phase 2: each shape's fastest specs against the baselines, every timer, the final modes.
void measure_finalists(const TuneOptions& o, const EvalRequest& req) {
  for (const auto& [shape, specs] : top_candidates(o.db_path, o.eval.shapes, o.accum, o.final_top, o.local)) {
    if (specs.empty()) continue;
    EvalRequest fin = req;
    fin.specs = specs;
    fin.free_sources.clear();
    fin.shapes = {shape};
    fin.modes = o.final_modes;
    fin.timers = {true, true, true};
    fin.reps = o.final_reps;
    fin.batch = static_cast<int>(specs.size());
    fin.csv_path = o.final_csv;
    fin.baselines = o.final_baselines;
    fin.name_by_hash = true;
    fin.deadline_minutes = 0;
    if (o.progress)
      std::fprintf(stderr, "cudal2 tune: final measurement of %s (%zu specs)\n", shape.str().c_str(), specs.size());
    evaluate_and_record(fin, o.db_path);
  }
}

}  // namespace

std::optional<double> score_measurement(const ScoreInput& in) {
  return search::reward({in.status, in.time_us, in.baseline_us, in.rel_err, in.source_bytes});
}

TuneResult run_tune(const TuneOptions& o) {
  Plan plan = plan_tune(o);
  TuneResult result;
  result.space_size = plan.space_size;
  EvalRequest req = o.eval;
  req.score = score_measurement;
  req.local_gpu = o.local.first_name();
  req.progress = o.progress && req.progress;
  auto lanes = make_lanes(o, req, plan.ordinals);
  // The final measurement runs on the first lane's GPU.
  req.visible_devices = lanes.front().req.visible_devices;
  req.command_line = lanes.front().req.command_line;
  if (!o.skip_search)
    search_rounds(o, plan, lanes, result);
  else
    announce(o, 0, plan.space_size);
  // The search is over (stopped too: its rows stand): its runs are finished. Not when it threw.
  for (auto& l : lanes) l.finish();
  for (const auto& l : lanes) result.lanes.push_back(l.stats);
  result.stopped = o.stop && o.stop->load();
  if (o.final_top > 0 && !result.stopped) measure_finalists(o, req);
  return result;
}

}  // namespace cudal2::tuner
