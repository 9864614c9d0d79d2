#pragma once
// The options `eval` and `tune` share: candidates compiled by the JIT and run only in a sandboxed
// judge process, measured against baselines timed in the same jobs, recorded in the store.
#include <string>

#include "cli/shape_args.hpp"
#include "tuner/evaluate.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace cudal2::cli {

struct EvalArgs {
  EvalRequest ev;
  std::string db_path = "cudal2.db";  // where eval and tune record (tuner/record.hpp)
  std::string mode = "offline";
  std::string timers = "graph,eager,host";
  std::string baselines = "cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn";
  ShapeArgs shapes;
  // --replay STORE: a judge answering from STORE's recorded measurements instead of a GPU
  // (python/cudal2/replay_judge.py): offline, graph timer, no GPU needed.
  std::string replay;
  bool replaying() const { return !replay.empty(); }

  // The shape options, then --mode --reps --qps --timers --db --timeout --batch --csv
  // --verify-budget --baselines --no-confine --back-to-back --replay.
  void add(CLI::App* c);
  // Checks the options and fills ev's shapes, modes, timers, baselines, command line and scorer
  // (and, with --replay, the judge and its store).
  void finish(const std::string& command_line);

 private:
  CLI::Option* mode_opt_ = nullptr;
  CLI::Option* timers_opt_ = nullptr;
  void finish_replay();
};

}  // namespace cudal2::cli
