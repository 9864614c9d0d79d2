// `cudal2 worker` (internal): serves evaluation jobs on stdin/stdout for `eval`, `tune` and `serve`
// (docs/worker-protocol.md).
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "eval/candidate.hpp"

namespace cudal2::cli {

Run add_worker(CLI::App&, const Context&) {
  return [] { return worker_main(); };
}

}  // namespace cudal2::cli
