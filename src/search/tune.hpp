#pragma once
// The tuning loop, `cudal2 tune`: for the requested shapes, rounds of
//   policy.propose -> codegen -> jit -> evaluate (eval/: the judge in a worker) -> reward -> store
//   -> policy.observe
// until the policy has nothing left, the budget (candidates or minutes) is spent; then, on
// request, a final measurement of each shape's fastest specs against the baselines. Resumable:
// the store's measurements are given to the policy before the first round, so a rerun of the same
// command proposes only what is not known yet. No CUDA here: the GPU is reached through eval/.
#include <string>
#include <vector>

#include "eval/candidate.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

struct TuneOptions {
  // Shapes, modes, timers, reps, store, baselines, batch, worker: how each round is evaluated.
  // Its specs, free sources, deadline and score are set by the loop.
  EvalRequest eval;
  std::string search = "exhaustive";  // a name in policy_names()
  PolicyOptions policy;
  std::vector<std::string> families{"sm90_cutlass"};
  std::string space = "full";  // full or core (docs/tuning.md)
  Accum accum = Accum::F32;
  int budget = 0;             // at most this many candidates in this invocation (0: no limit)
  double budget_minutes = 0;  // start no new chunk of candidates after this long (0: no limit)
  int round = 0;              // candidates per propose/observe round (0: the whole budget at once)
  bool skip_search = false;   // only the final measurement of what the store holds
  int lt_max = 16;            // cublaslt family: specs per shape and layout (cuBLASLt's neighbourhood)
  // Final measurement (final_top > 0): each shape's final_top fastest specs per layout, every
  // timer, final_modes, final_reps samples, final_baselines, rows appended to final_csv.
  int final_top = 0;
  std::string final_csv;
  std::vector<Mode> final_modes{Mode::Offline, Mode::Server};
  int final_reps = 30;
  std::vector<std::string> final_baselines{"cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn"};
  bool progress = true;  // progress lines on stderr
  // Refuse to start without a local GPU (off only for tests that give eval a scripted worker).
  bool check_gpu = true;
};

struct TuneResult {
  size_t space_size = 0;   // distinct specs in the run's space
  size_t first_round = 0;  // candidates proposed in the first round ("left to evaluate")
  int rounds = 0;
  std::vector<CandidateOutcome> outcomes;  // every round's, in order
};

// Throws InputError for bad options (before any GPU work), NoGpuError without a GPU.
TuneResult run_tune(const TuneOptions& options);

// The `top` fastest specs per shape and layout in the store (offline, graph timer, this GPU).
std::vector<std::pair<Shape, std::vector<KernelSpec>>> top_candidates(const std::string& db_path,
                                                                      const std::vector<Shape>& shapes, Accum accum,
                                                                      int top);

// EvalRequest::score for every evaluation that stores rows (tune, eval): search::reward.
std::optional<double> score_measurement(const ScoreInput& in);

// Counts by outcome, compile and measure time, and the best candidate per shape.
void print_tune_summary(const std::vector<CandidateOutcome>& outcomes);

}  // namespace cudal2::search
