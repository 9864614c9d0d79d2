#pragma once
// `cudal2 suggest` (zero-shot pick from an rl policy file) and `cudal2 merge` (stores of several
// machines into one): each registers its subcommand, which runs in its callback and exits.
#include <CLI/CLI.hpp>

namespace cudal2::cli {

void add_suggest_command(CLI::App& app);  // src/cli/suggest.cpp
void add_merge_command(CLI::App& app);    // src/cli/merge.cpp

}  // namespace cudal2::cli
