#pragma once
// The options `eval` and `tune` share: candidates compiled by the JIT and run only in a sandboxed
// worker process, measured against baselines timed in the same jobs, recorded in the store.
#include <string>

#include "cli/shape_args.hpp"
#include "search/evaluate.hpp"

namespace CLI {
class App;
}

namespace cudal2::cli {

struct EvalArgs {
  EvalRequest ev;
  std::string db_path = "cudal2.db";  // where eval and tune record (search/record.hpp)
  std::string mode = "offline";
  std::string timers = "graph,eager,host";
  std::string baselines = "cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn";
  ShapeArgs shapes;

  // The shape options, then --mode --reps --qps --timers --db --timeout --batch --csv
  // --verify-budget --baselines --no-confine --back-to-back.
  void add(CLI::App* c);
  // Checks the options and fills ev's shapes, modes, timers, baselines, command line and scorer.
  void finish(const std::string& command_line);
};

}  // namespace cudal2::cli
