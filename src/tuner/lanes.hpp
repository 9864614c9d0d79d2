#pragma once
// The tune's GPU lanes: one per GPU that measures (`--gpus`), each with a judge of its own
// started with CUDA_VISIBLE_DEVICES naming that GPU, its own store connection and a share of the
// compile jobs. Each round's candidates are dealt round-robin across the lanes, which evaluate at
// once, one thread each.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/modes.hpp"
#include "search/policy.hpp"
#include "store/claims.hpp"
#include "tuner/budget.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/tune.hpp"

namespace cudal2::tuner {

// `--gpus` checked for its syntax alone, before the GPU is looked for.
void check_gpus_syntax(const std::string& gpus);
// The device ordinals of the lanes: {0} without --gpus (one judge on the first GPU this process
// sees), else the listed GPUs, which must all be one model (the store keys results by it).
std::vector<int> lane_ordinals(const TuneOptions& o);

// One lane: the request its evaluations are made from (its judge's devices, its share of the
// compile jobs, the command line its run rows name) and what it has done.
struct Lane {
  EvalRequest req;
  TuneResult::Lane stats;

  // Evaluates this lane's share of a round: the specs in one call, free-form sources in one call
  // per layout and accumulator, each recorded in the store at db_path under a run of its own and
  // given the minutes the budget has left. Outcomes in the proposals' order.
  std::vector<CandidateOutcome> evaluate(const std::vector<search::Proposal>& round, const Budget& budget,
                                         const std::string& db_path);
};

// A lane per ordinal, each from req: with --gpus its judge sees only its GPU and its run rows
// name it; several lanes share the cores between their compiles.
std::vector<Lane> make_lanes(const TuneOptions& o, const EvalRequest& req, const std::vector<int>& ordinals);

// Gives every lane's evaluations the stop flag and a claim on the store's shared work (`claims`,
// one connection asked from every lane's thread under `mu`), keyed under claim_gpu and mode.
void share_claims(std::vector<Lane>& lanes, const std::atomic<bool>* stop, store::WorkClaims& claims, std::mutex& mu,
                  const std::string& claim_gpu, Mode mode);

// Evaluates one round on the lanes: candidate i goes to lane i % lanes.size(), the lanes run at
// once (one thread each; the judges, compilers and store connections are the lane's own), and
// the outcomes come back in the round's order. A lane that throws stops the round with its error
// once every lane has finished.
std::vector<CandidateOutcome> evaluate_lanes(std::vector<Lane>& lanes, const std::vector<search::Proposal>& round,
                                             const Budget& budget, const std::string& db_path);

}  // namespace cudal2::tuner
