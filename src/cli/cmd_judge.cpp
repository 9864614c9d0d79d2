// `cudal2 judge` (internal): the judge process, serving evaluation jobs on stdin/stdout for
// `eval`, `tune` and `serve`, which spawn it by this name (docs/judge-protocol.md, judge/jobs.hpp).
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "judge/jobs.hpp"

namespace cudal2::cli {

Run add_judge(CLI::App&, const Context&) {
  return [] { return judge_main(); };
}

}  // namespace cudal2::cli
