#pragma once
// The tune's GPU lanes: one per GPU that measures (`--gpus`), each with a judge process of its own
// started with CUDA_VISIBLE_DEVICES naming that GPU, its own store connection and run row (each one
// for the whole tune) and a share of the compile jobs. Each round's candidates are
// dealt round-robin across the lanes, which evaluate at once, one thread each.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/compiler.hpp"
#include "protocol/modes.hpp"
#include "sandbox/sandbox.hpp"
#include "search/policy.hpp"
#include "store/claims.hpp"
#include "tuner/budget.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/record.hpp"
#include "tuner/tune.hpp"

namespace cudal2::tuner {

// `--gpus` checked for its syntax alone, before the GPU is looked for.
void check_gpus_syntax(const std::string& gpus);
// The device ordinals of the lanes: {0} without --gpus (one judge on the first GPU this process
// sees), else the listed GPUs, which must all be one model (the store keys results by it).
std::vector<int> lane_ordinals(const TuneOptions& o);

// One lane: the request its evaluations are made from (its judge's devices, its share of the
// compile jobs, the command line its run row names), the store it records in, and what it has done.
// Its judge process, JIT compiler, store connection and run row last the whole tune, made with its first
// evaluation (a lane that evaluates nothing writes no run row) and ended by finish(): a tune of
// many rounds is one judge (CUDA started once, not once a round) and one run per lane, not one per
// round (and per free-form layout) of each lane.
struct Lane {
  EvalRequest req;
  std::string db_path;
  TuneResult::Lane stats;

  // Evaluates this lane's share of a round: the specs in one call, free-form sources in one call
  // per layout and accumulator, each recorded in the store at db_path under the lane's run and
  // given the minutes the budget has left. Outcomes in the proposals' order.
  std::vector<CandidateOutcome> evaluate(const std::vector<search::Proposal>& round, const Budget& budget);

  // Starts the lane's judge unless it is running. On the thread that keeps running across rounds
  // (evaluate_lanes: the caller's), not on a round's lane thread: a child gets PR_SET_PDEATHSIG,
  // which fires when the thread that started it ends, and would take the judge with it.
  void start_judge();

  // Marks the lane's run finished (when it has one), closes its store connection and stops its
  // judge. Not called when the tune throws: the run stays unfinished, as a run that died does (the
  // judge stops with the lane).
  void finish();

 private:
  // The lane's sink, opened (and its run begun) on first use. One connection, so one thread at a
  // time: the lane's during a round (evaluate_lanes joins them all before the next).
  StoreSink& sink();
  std::unique_ptr<StoreSink> sink_;
  // The lane's judge process, made (not started) on first use; its evaluations start it.
  sandbox::Child* judge();
  std::unique_ptr<sandbox::Child> judge_;
  // The lane's JIT compiler, made on first use (its cache is on disk; this keeps nvcc's version
  // query to once a tune).
  const Compiler* compiler();
  std::unique_ptr<Compiler> jit_;
};

// A lane per ordinal, each from req and recording in the store at o.db_path: with --gpus its judge
// sees only its GPU and its run row names it; several lanes share the cores between their compiles.
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
                                             const Budget& budget);

}  // namespace cudal2::tuner
