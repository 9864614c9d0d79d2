#pragma once
// cudal2's subcommands: one file per command (src/cli/cmd_*.cpp), each with an add function that
// wires its CLI11 options; one table of them (src/cli/commands.cpp) from which `cudal2 --help`, the
// unknown-command message and the dispatch are all made. main() only calls run_cli.
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace cudal2::cli {

// What every command may use besides its own options.
struct Context {
  std::string command_line;  // the arguments as typed (argv[1..] joined by spaces), for the records
};

// What runs once the command line parsed; returns the exit code. Its exceptions become the one error
// line and exit code of exit_code_of (cli/exit_with.hpp).
using Run = std::function<int()>;

struct Command {
  std::string_view name;
  std::string_view summary;  // the subcommand's description: its line in `cudal2 --help`
  // Adds the command's options to `cmd` (already made by the registry with name and summary) and
  // returns what runs when it is the command given. The returned function owns the option values.
  Run (*add)(CLI::App& cmd, const Context& ctx) = nullptr;
  bool hidden = false;  // internal (judge, runner): left out of --help and the unknown-command message
  // A command that takes its arguments unparsed (report hands them to a Python generator) has this
  // instead of `add`: called with argv[0] the command's name, it returns the exit code.
  int (*raw_main)(int argc, char** argv) = nullptr;
};

// Every command, in the order `cudal2 --help` lists them (src/cli/commands.cpp).
std::span<const Command> commands();

// The whole `cudal2 ...` command line. Returns the process exit code.
int run_cli(int argc, char** argv);

// The add functions, one per file.
Run add_bench(CLI::App& cmd, const Context& ctx);         // cmd_bench.cpp
Run add_eval(CLI::App& cmd, const Context& ctx);          // cmd_eval.cpp
Run add_tune(CLI::App& cmd, const Context& ctx);          // cmd_tune.cpp
Run add_show(CLI::App& cmd, const Context& ctx);          // cmd_show.cpp
Run add_judge(CLI::App& cmd, const Context& ctx);         // cmd_judge.cpp: judge
Run add_runner(CLI::App& cmd, const Context& ctx);        // cmd_runner.cpp
Run add_export(CLI::App& cmd, const Context& ctx);        // cmd_export.cpp
Run add_serve(CLI::App& cmd, const Context& ctx);         // cmd_serve.cpp
Run add_suggest(CLI::App& cmd, const Context& ctx);       // cmd_suggest.cpp
Run add_merge(CLI::App& cmd, const Context& ctx);         // cmd_merge.cpp
Run add_lt_space(CLI::App& cmd, const Context& ctx);      // cmd_lt_space.cpp
Run add_read_ceiling(CLI::App& cmd, const Context& ctx);  // cmd_read_ceiling.cpp
int report_main(int argc, char** argv);                   // cmd_report.cpp

}  // namespace cudal2::cli
