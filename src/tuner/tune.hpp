#pragma once
// The tuning loop, `cudal2 tune`: for the requested shapes, rounds of
//   policy.propose -> codegen -> jit -> evaluate (tuner/evaluate.hpp: the judge in a child process) -> reward -> store
//   (tuner/record.hpp: the evaluation's records written as they arrive) -> policy.observe
// until the policy has nothing left, the budget (candidates or minutes) is spent; then, on
// request, a final measurement of each shape's fastest specs against the baselines. Resumable:
// the store's measurements are given to the policy before the first round, so a rerun of the same
// command proposes only what is not known yet. No CUDA here: the GPU is reached through the judge
// process, and what this process sees of it is given (TuneOptions::local).
#include <atomic>
#include <string>
#include <vector>

#include "core/local_gpus.hpp"
#include "search/policy.hpp"
#include "tuner/evaluate.hpp"

namespace cudal2::tuner {

struct TuneOptions {
  // Shapes, modes, timers, reps, baselines, batch, judge: how each round is evaluated.
  // Its specs, free sources, deadline and score are set by the loop.
  EvalRequest eval;
  // The results store: every evaluation's records are written there (tuner/record.hpp), the
  // search's under one run per GPU lane (tuner/lanes.hpp), and a rerun resumes from what it holds.
  std::string db_path = "cudal2.db";
  std::string search = "exhaustive";  // a name in policy_names()
  search::PolicyOptions policy;
  std::vector<std::string> families{"sm90_cutlass"};
  std::string space = "full";  // full or core (docs/tuning.md)
  Accum accum = Accum::F32;
  int budget = 0;             // at most this many candidates in this invocation (0: no limit)
  double budget_minutes = 0;  // start no new chunk of candidates after this long (0: no limit)
  int round = 0;              // candidates per propose/observe round (0: the whole budget at once)
  // Specs each problem proposes per round (0: as many as --round, or its whole space). With
  // round = 0 and per_problem = 1 a round gives every problem one more evaluation: a whole-grid
  // run learns across shapes between rounds and spends its minutes evenly over the problems.
  int per_problem = 0;
  int max_rounds = 0;        // stop after this many rounds (0: no limit)
  bool skip_search = false;  // only the final measurement of what the store holds
  int lt_max = 16;           // cublaslt family: specs per shape and layout (cuBLASLt's neighbourhood)
  // Layouts searched per shape. A model's linear layers (nn.Linear: weights N x K row-major) are
  // TN only, and tuning NN beside them would double the run for shapes nobody calls NN.
  std::vector<Layout> layouts{Layout::NN, Layout::TN};
  // Final measurement (final_top > 0): each shape's final_top fastest specs per layout, every
  // timer, final_modes, final_reps samples, final_baselines, rows appended to final_csv.
  int final_top = 0;
  std::string final_csv;
  std::vector<Mode> final_modes{Mode::Offline, Mode::Server};
  int final_reps = 30;
  std::vector<std::string> final_baselines{"cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn"};
  // GPUs that measure (`--gpus`): "" one judge on the first GPU this process sees (no
  // CUDA_VISIBLE_DEVICES change); "all" every GPU this process sees; "0,2" those device ordinals.
  // One lane per GPU: a judge process of its own started with CUDA_VISIBLE_DEVICES naming that GPU
  // and its own store connection (each kept for the whole tune), and a share of the compile jobs. Each round's
  // candidates are dealt round-robin across the lanes, which evaluate at once; the one policy sees all lanes' results
  // once per round, on this thread. Every GPU must be the same model (the store keys by it).
  std::string gpus;
  int gpu_count = -1;  // GPUs this process sees; -1: local.count() (tests without a GPU set it)
  // This process's GPUs, found by the caller (cli: measure/device.hpp's local_gpus()): the names
  // results are stored and claimed under, and the lanes' devices. Empty: no local GPU.
  LocalGpus local;
  bool progress = true;  // progress lines on stderr
  // Refuse to start without a local GPU (off only for tests that give eval a scripted judge).
  bool check_gpu = true;
  // Set (SIGTERM, SIGINT): no new round or judge job; the run's rows stay as recorded, its run
  // rows are finished, and a resumed run measures the rest.
  const std::atomic<bool>* stop = nullptr;
};

struct TuneResult {
  size_t space_size = 0;   // distinct specs in the run's space
  size_t first_round = 0;  // candidates proposed in the first round ("left to evaluate")
  int rounds = 0;
  std::vector<CandidateOutcome> outcomes;  // every round's, in order
  // One per GPU lane (one lane without --gpus): what it evaluated and how long it was busy.
  struct Lane {
    int ordinal = 0;     // the device as this process sees it
    std::string device;  // its judge's CUDA_VISIBLE_DEVICES ("": inherited)
    int candidates = 0;  // evaluated (not Status::NotRun)
    double busy_seconds = 0;
  };
  std::vector<Lane> lanes;
  double search_seconds = 0;  // wall time of the rounds (compiling and measuring)
  bool stopped = false;       // TuneOptions::stop ended it early
};

// `--gpus TEXT` against `count` GPUs this process sees: the device ordinals, in the order given.
// Throws InputError for anything else than "all" or distinct in-range ordinals "0,1,...".
std::vector<int> parse_gpus(const std::string& text, int count);
// CUDA_VISIBLE_DEVICES for a judge that must see only this process's device `ordinal`: the
// ordinal-th entry of this process's CUDA_VISIBLE_DEVICES when that is set, else the ordinal.
std::string visible_device_of(int ordinal);

// Throws InputError for bad options (before any GPU work), NoGpuError without a GPU.
TuneResult run_tune(const TuneOptions& options);

// The `top` fastest specs per shape and layout in the store (offline, graph timer, this GPU).
std::vector<std::pair<Shape, std::vector<KernelSpec>>> top_candidates(const std::string& db_path,
                                                                      const std::vector<Shape>& shapes, Accum accum,
                                                                      int top, const LocalGpus& local);

// EvalRequest::score for every evaluation that stores rows (tune, eval): search::reward.
std::optional<double> score_measurement(const ScoreInput& in);

// Counts by outcome, compile and measure time, and the best candidate per shape.
void print_tune_summary(const std::vector<CandidateOutcome>& outcomes);
// The same, then candidates per minute per GPU lane and over the whole search.
void print_tune_summary(const TuneResult& result);

}  // namespace cudal2::tuner
