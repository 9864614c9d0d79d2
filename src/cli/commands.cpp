// The registry of cudal2's subcommands and the one path every command line takes through it.
//
// One explicit table rather than self-registration (a static object in each cmd_*.cpp adding itself
// to a list from its constructor): the linker drops an object file of a static library that nothing
// references, static initializer and all, so a command would vanish silently the day these files
// went into a library; and the order of such initializers across files is unspecified, so --help's
// order would follow the link line. Here the order is the table's, each cmd_*.cpp is referenced by
// it, and tests/unit/cli_commands_test.cpp checks the binary against it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/exit_with.hpp"

namespace cudal2::cli {

namespace {

constexpr Command kCommands[] = {
    {.name = "bench",
     .summary = "Verify and time the baselines (cuBLAS, cuBLASLt, torch.matmul) on shapes",
     .add = add_bench},
    {.name = "eval",
     .summary = "Compile, verify and time kernel candidates (in a judge process) against the baselines",
     .add = add_eval},
    {.name = "tune",
     .summary = "Search the kernel space for the given shapes; results go to the store (resumable)",
     .add = add_tune},
    {.name = "show",
     .summary = "Best kernel per shape in the store, with its speedup over the baselines",
     .add = add_show},
    {.name = "judge",
     .summary = "Internal: the judge process, serving evaluation jobs on stdin/stdout",
     .add = add_judge,
     .hidden = true},
    {.name = "runner",
     .summary = "Internal: run one untrusted candidate for the judge (confined)",
     .add = add_runner,
     .hidden = true},
    {.name = "export", .summary = "Write the runtime's dispatch table (JSON) from the store(s)", .add = add_export},
    {.name = "serve",
     .summary = "Reward service over HTTP: POST /evaluate a kernel source, get its verdict and reward",
     .add = add_serve},
    {.name = "suggest",
     .summary = "Zero-shot kernel pick for shapes nobody tuned, from an rl policy file",
     .add = add_suggest},
    {.name = "merge", .summary = "Merge result stores (specs, builds, measurements, runs) into one", .add = add_merge},
    {.name = "lt-space",
     .summary = "Print the cublaslt family's specs for one shape on this GPU: cuBLASLt's heuristic suggestions, "
                "then one-attribute variations of them, each accepted by cublasLtMatmulAlgoCheck",
     .add = add_lt_space},
    {.name = "read-ceiling",
     .summary = "Time the product's read kernel over each shape's weight bytes, back to back and cold: the "
                "per-shape ceiling of a bandwidth-bound GEMM",
     .add = add_read_ceiling},
    {.name = "report",
     .summary = "HTML report with figures from cudal2 CSVs/stores (python/cudal2/report.py)",
     .raw_main = report_main},
};

std::string public_names() {
  std::vector<std::string_view> names;
  for (const auto& c : kCommands)
    if (!c.hidden) names.push_back(c.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

// Outside exit_code_of only set-up runs (CLI11 option registration), where an exception is a
// programming error or out of memory: std::terminate is the right end.
// NOLINTNEXTLINE(bugprone-exception-escape)
int run_cli(int argc, char** argv) {
  const Command* given = nullptr;
  if (argc > 1)
    for (const auto& c : kCommands)
      if (c.name == argv[1]) given = &c;
  if (given && given->raw_main) return given->raw_main(argc - 1, argv + 1);
  if (argc > 1 && argv[1][0] != '-' && !given) {
    std::fprintf(stderr, "cudal2: error: unknown command '%s' (commands: %s; see cudal2 --help)\n",
                 bounded_message(argv[1], 80).c_str(), public_names().c_str());
    return 2;
  }

  Context ctx;
  for (int i = 1; i < argc; ++i) ctx.command_line += (i > 1 ? " " : "") + std::string(argv[i]);
  CLI::App app{"cudal2: find HGEMM kernels faster than cuBLAS/cuBLASLt, and measure them honestly"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Run>> runs;
  for (const auto& c : kCommands) {
    auto* sub = app.add_subcommand(std::string(c.name), std::string(c.summary));
    if (c.hidden) sub->group("");
    // A raw command is listed in --help like the others; its arguments never reach CLI11.
    runs.emplace_back(sub, c.add ? c.add(*sub, ctx) : Run{});
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report_error(e.what());
  }
  for (const auto& [sub, run] : runs)
    if (sub->parsed() && run) return exit_code_of(run);
  return 0;
}

}  // namespace cudal2::cli
