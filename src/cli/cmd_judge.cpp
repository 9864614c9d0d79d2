// `cudal2 judge` (internal; also by its old name `cudal2 worker`, the one the tuner spawns): the
// judge process, serving evaluation jobs on stdin/stdout for `eval`, `tune` and `serve`
// (docs/worker-protocol.md, judge/jobs.hpp).
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "judge/jobs.hpp"

namespace cudal2::cli {

Run add_judge(CLI::App&, const Context&) {
  return [] { return judge_main(); };
}

}  // namespace cudal2::cli
