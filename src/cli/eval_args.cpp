// The options `eval` and `tune` share (src/cli/eval_args.hpp).
#include "cli/eval_args.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "baselines/baselines.hpp"
#include "cli/measure_options.hpp"
#include "cli/python_script.hpp"
#include "cli/store_arg.hpp"
#include "core/atomic_file.hpp"
#include "store/reader.hpp"
#include "tuner/tune.hpp"

namespace cudal2::cli {

void EvalArgs::add(CLI::App* c) {
  shapes.add(c);
  mode_opt_ = c->add_option("--mode", mode, "offline, server or both")->capture_default_str();
  c->add_option("--reps", ev.reps, "Samples per timer")->capture_default_str();
  c->add_option("--qps", ev.qps, "Server mode: mean request rate; idle gaps ~ Exp(qps)")->capture_default_str();
  timers_opt_ = c->add_option("--timers", timers, "Timers to run: graph, eager, host, chain (comma-separated)")
                    ->capture_default_str();
  c->add_option("--db", db_path, "SQLite results store")->capture_default_str();
  c->add_option("--timeout", ev.timeout_s, "Seconds per candidate before its judge is killed")->capture_default_str();
  c->add_option("--batch", ev.batch, "Candidates per judge job (a failed job is retried one by one)")
      ->capture_default_str();
  c->add_option("--csv", ev.csv_path, "Also append the bench's CSV rows (candidates and baselines) to FILE");
  c->add_option("--verify-budget", ev.verify_budget, "CPU multiply-adds per reference before sampling")
      ->capture_default_str();
  c->add_option("--baselines", baselines, "Baselines timed in the same jobs (comma-separated)")->capture_default_str();
  c->add_option("--canary-seconds", ev.attribution.canary_seconds,
                "How long the trusted canary checks the GPU after a verdict a disturbed GPU could cause "
                "(docs/threat-model.md, fault attribution)")
      ->capture_default_str();
  c->add_option("--attempts", ev.attribution.max_attempts,
                "Runs of a candidate, the first included, while the canary says the GPU is disturbed")
      ->capture_default_str();
  c->add_flag_callback(
      "--no-confine", [this] { ev.confine = false; },
      "Run candidates unconfined (diagnosis only: a machine where the sandbox itself fails)");
  c->add_flag_callback(
      "--back-to-back", [this] { ev.interleave = false; },
      "Offline graph and eager batches back to back on one set of inputs instead of chained (measurement of "
      "what chains cost only: a candidate that reuses earlier results can game it; docs/threat-model.md)");
  c->add_option("--replay", replay,
                "Answer from the measurements recorded in STORE instead of a GPU (offline, graph timer; no GPU "
                "needed): a campaign replayed, e.g. to compare search policies (docs/tuning.md)");
}

// The replay judge answers a job from the store's rows: offline graph-timer medians, nothing else
// was recorded. It reads the store named by CUDAL2_REPLAY_DB, which it inherits from this process.
void EvalArgs::finish_replay() {
  // Checked like any store before a judge reads it: a file that was none made the judge exit,
  // and that was stored as the candidate's failure (with a penalty, under GPU "unknown").
  store::check_store(replay, store::Verify::Full, "--replay");
  // The replay judge answers from recorded summaries and writes no CSV rows: --csv was ignored.
  if (!ev.csv_path.empty())
    throw InputError("--csv: --replay answers from a store's recorded results and writes no CSV rows");
  if (mode_opt_->count() > 0 && mode != "offline")
    throw InputError(fmt::format("--replay answers mode offline only (got --mode {})", mode));
  if (timers_opt_->count() > 0 && timers != "graph")
    throw InputError(fmt::format("--replay answers the graph timer only (got --timers {})", timers));
  mode = "offline", timers = "graph";
  const auto judge = find_python_script("replay_judge.py", "CUDAL2_REPLAY_JUDGE");
  if (judge.empty())
    throw InputError(
        "--replay: the replay judge python/cudal2/replay_judge.py was not found next to this executable (set "
        "CUDAL2_REPLAY_JUDGE=/path/to/replay_judge.py)");
  ev.judge_exe = judge.string();
  // The replay judge's stand-in GPU time per job: checked here, where a bad value is one error
  // line (the judge exited before answering, and the tuner could only say so).
  if (const char* s = std::getenv("CUDAL2_REPLAY_JOB_SECONDS"); s && *s) {
    const std::string text(s);
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s || *end != '\0' || text.find_first_of("xX") != std::string::npos || !(v >= 0 && v <= 3600))
      throw InputError(fmt::format("CUDAL2_REPLAY_JOB_SECONDS='{}': expected seconds from 0 to 3600",
                                   text.size() > 40 ? text.substr(0, 40) + "..." : text));
  }
  ::setenv("CUDAL2_REPLAY_DB", std::filesystem::absolute(replay).c_str(), 1);
}

void EvalArgs::finish(const std::string& command_line) {
  if (replaying()) finish_replay();
  if (!ev.csv_path.empty()) check_output_file(ev.csv_path, "--csv");
  check_store_arg(db_path, "--db");
  check_measure_options({.reps = ev.reps,
                         .qps = ev.qps,
                         .verify_budget = ev.verify_budget,
                         .timeout_s = ev.timeout_s,
                         .batch = ev.batch});
  if (!(ev.attribution.canary_seconds >= attribution::kMinCanarySeconds &&
        ev.attribution.canary_seconds <= attribution::kMaxCanarySeconds))
    throw InputError(fmt::format("--canary-seconds {} is not in {}..{}", ev.attribution.canary_seconds,
                                 attribution::kMinCanarySeconds, attribution::kMaxCanarySeconds));
  if (ev.attribution.max_attempts < 1 || ev.attribution.max_attempts > 20)
    throw InputError(fmt::format("--attempts {} is not in 1..20", ev.attribution.max_attempts));
  ev.shapes = shapes.resolve();
  ev.modes = parse_modes(mode);
  ev.timers = parse_timers(timers);
  ev.baselines = split_list(baselines);
  for (const auto& b : ev.baselines)
    if (!is_baseline(b))
      throw InputError(fmt::format("unknown baseline '{}' (known: {})", b, fmt::join(baseline_names(), ", ")));
  ev.command_line = command_line;
  ev.score = tuner::score_measurement;  // the reward column of every stored row
}

}  // namespace cudal2::cli
