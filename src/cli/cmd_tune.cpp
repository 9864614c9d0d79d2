// `cudal2 tune`: search the kernel space for shapes with a policy (exhaustive, random, rl, llm),
// evaluating candidates like `cudal2 eval`; resumable from the store; optionally a final measurement.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "baselines/baselines.hpp"
#include "cli/command.hpp"
#include "cli/eval_args.hpp"
#include "cli/store_arg.hpp"
#include "core/atomic_file.hpp"
#include "llm/policy.hpp"
#include "measure/device.hpp"
#include "search/policy.hpp"
#include "serve/signals.hpp"
#include "tuner/tune.hpp"

namespace cudal2::cli {

namespace {

struct TuneArgs {
  EvalArgs e;
  std::string search = "exhaustive";
  int budget = 0;
  search::PolicyOptions policy_opts;
  int round = 0;
  int per_problem = 0, max_rounds = 0;
  int lt_max = 16;
  double budget_minutes = 0;
  std::string families = "sm90_cutlass", space = "full", accum = "f32";
  std::string layouts;  // "": nn,tn, or tn alone for --model
  bool skip_search = false;
  int final_top = 0;
  std::string final_csv, final_mode = "both";
  int final_reps = 30;
  std::string final_baselines = "cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn";
  std::string gpus;
  std::string judge;
  bool no_gpu_check = false;
};

}  // namespace

Run add_tune(CLI::App& cmd, const Context& ctx) {
  // The command line is the composition root that links the LLM room: search/ does not name it.
  llm::register_llm_policy();
  auto a = std::make_shared<TuneArgs>();
  auto* tune = &cmd;
  tune->add_option("--search", a->search, fmt::format("Search policy: {}", fmt::join(search::policy_names(), ", ")))
      ->capture_default_str();
  tune->add_option("--seed", a->policy_opts.seed, "Seed of random and learning policies (0: a fixed default)");
  tune->add_option("--policy-file", a->policy_opts.state_path, "Policy state: loaded at start, saved after each round");
  llm::add_llm_options(tune, a->policy_opts.extra);  // --llm-*: src/llm/cli.cpp, docs/llm.md
  tune->add_option("--round", a->round, "Candidates per propose/observe round (0: the whole budget at once)")
      ->capture_default_str();
  tune->add_option("--per-problem", a->per_problem,
                   "Specs each problem proposes per round (0: as many as --round); --round 0 --per-problem 1: "
                   "every problem one evaluation per round");
  tune->add_option("--rounds", a->max_rounds, "Stop after this many rounds (0: no limit)");
  tune->add_option(
          "--lt-max", a->lt_max,
          "cublaslt family: specs per shape and layout beyond the heuristic's own suggestions (all of which are in)")
      ->capture_default_str();
  tune->add_option("--budget", a->budget, "Stop after this many candidates (0: no limit)");
  tune->add_option("--budget-minutes", a->budget_minutes, "Stop starting new candidates after this many minutes");
  tune->add_option("--families", a->families, "Kernel families to search (comma-separated)")->capture_default_str();
  tune->add_option("--space", a->space,
                   "full (every valid configuration), core (docs/tuning.md) or @FILE (the specs listed there)")
      ->capture_default_str();
  tune->add_option("--accum", a->accum, "Accumulator: f32 or f16")->capture_default_str();
  auto* layouts_opt =
      tune->add_option("--layouts", a->layouts,
                       "Layouts to tune, comma-separated: nn, tn (default both; with --model, tn: nn.Linear's layout)");
  tune->add_flag("--skip-search", a->skip_search, "Only the final measurement of what the store already holds");
  tune->add_option("--final-top", a->final_top,
                   "Afterwards, re-measure each shape's N fastest specs per layout with every timer (0: skip)");
  tune->add_option("--final-mode", a->final_mode, "Modes of the final measurement")->capture_default_str();
  tune->add_option("--final-reps", a->final_reps, "Samples per timer in the final measurement")->capture_default_str();
  tune->add_option("--final-csv", a->final_csv, "CSV file for the final measurement");
  tune->add_option("--final-baselines", a->final_baselines, "Baselines of the final measurement")
      ->capture_default_str();
  tune->add_option("--gpus", a->gpus,
                   "GPUs that measure: all, or device numbers such as 0,1 (one judge per GPU, one store and "
                   "policy; default: the first GPU)");
  // A stand-in judge (tests: a script answering jobs; --replay is the supported way to tune
  // without a GPU). Hidden: not for real runs.
  tune->add_option("--judge", a->judge, "Judge executable speaking `cudal2 judge`'s protocol (default: this one)")
      ->group("");
  tune->add_flag("--no-gpu-check", a->no_gpu_check, "Do not require a local GPU (only with a --judge that needs none)")
      ->group("");
  a->e.add(tune);
  return [a, &ctx, layouts_opt] {
    a->e.finish(ctx.command_line);
    // The files and names the run will need, checked before the GPU is looked for.
    if (layouts_opt->count() > 0 && split_list(a->layouts).empty()) throw InputError("--layouts names no layout");
    if (!a->final_csv.empty()) check_output_file(a->final_csv, "--final-csv");
    for (const auto& b : split_list(a->final_baselines))
      if (!is_baseline(b))
        throw InputError(
            fmt::format("--final-baselines: unknown baseline '{}' (known: {})", b, fmt::join(baseline_names(), ", ")));
    if (!a->judge.empty()) check_executable_arg(a->judge, "--judge");
    if (const auto& pf = a->policy_opts.state_path; !pf.empty()) {
      std::error_code ec;
      if (!std::filesystem::exists(pf, ec)) {
        check_output_file(pf, "--policy-file");
      } else if (!std::filesystem::is_regular_file(pf, ec)) {
        throw InputError(fmt::format("--policy-file '{}' is not a regular file", pf));
      }
    }
    tuner::TuneOptions to;
    to.eval = a->e.ev;
    to.db_path = a->e.db_path;
    to.search = a->search;
    to.policy = a->policy_opts;
    // --search llm reads the store (references, failures); rl refuses options it does not know.
    if (a->search == "llm") to.policy.extra["db"] = a->e.db_path;
    to.families = split_list(a->families);
    to.space = a->space;
    to.accum = parse_accum(a->accum);
    to.layouts.clear();
    const auto layouts = split_list(a->layouts.empty() ? (a->e.shapes.models.empty() ? "nn,tn" : "tn") : a->layouts);
    for (const auto& l : layouts) {
      const auto layout = parse_layout(l);
      if (std::find(to.layouts.begin(), to.layouts.end(), layout) == to.layouts.end()) to.layouts.push_back(layout);
    }
    if (!(a->budget_minutes >= 0 && a->budget_minutes < 1e9))
      throw InputError(fmt::format("--budget-minutes {}: must be 0 (no limit) or more", a->budget_minutes));
    if (a->final_reps < 1) throw InputError(fmt::format("--final-reps {}: must be at least 1", a->final_reps));
    if (a->lt_max < 0) throw InputError(fmt::format("--lt-max {}: must be 0 or more", a->lt_max));
    if (a->round < 0) throw InputError(fmt::format("--round {}: must be 0 (the whole budget) or more", a->round));
    to.budget = a->budget;
    to.budget_minutes = a->budget_minutes;
    to.round = a->round;
    to.per_problem = a->per_problem;
    to.max_rounds = a->max_rounds;
    to.skip_search = a->skip_search;
    to.lt_max = a->lt_max;
    to.final_top = a->final_top;
    to.final_csv = a->final_csv;
    to.final_modes = parse_modes(a->final_mode);
    to.final_reps = a->final_reps;
    to.final_baselines = split_list(a->final_baselines);
    to.gpus = a->gpus;
    if (!a->judge.empty() && a->e.replaying()) throw InputError("--judge and --replay both name the judge");
    if (!a->judge.empty()) to.eval.judge_exe = a->judge;
    to.check_gpu = !a->no_gpu_check && !a->e.replaying();
    to.local = local_gpus();  // the tuning loop does not call CUDA itself
    // SIGTERM/SIGINT (blocked since main()): finish the judge job in flight, record it, close the
    // run and exit; a second one ends the process at once. A resumed run measures the rest.
    std::atomic<bool> stop{false};
    serve::StopOnSignal on_signal([&stop] {
      if (stop.exchange(true)) std::_Exit(130);
      std::fprintf(stderr, "cudal2 tune: stopping after the judge job in flight (again to stop at once)\n");
    });
    to.stop = &stop;
    const auto result = tuner::run_tune(to);
    tuner::print_tune_summary(result);
    if (result.stopped) {
      std::fprintf(stderr,
                   "cudal2 tune: stopped by a signal; what was measured is stored: run the same command to "
                   "resume\n");
      return 128 + (on_signal.last_signal() > 0 ? on_signal.last_signal() : SIGTERM);
    }
    if (a->final_top > 0) std::printf("final measurement written to %s\n", a->final_csv.c_str());
    return 0;
  };
}

}  // namespace cudal2::cli
