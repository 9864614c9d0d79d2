// `cudal2 runner` (internal): runs one untrusted candidate for the judge, confined (docs/threat-model.md).
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "runner/runner.hpp"

namespace cudal2::cli {

Run add_runner(CLI::App&, const Context&) {
  return [] { return runner_main(); };
}

}  // namespace cudal2::cli
