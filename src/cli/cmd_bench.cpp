// `cudal2 bench`: verify and time the baselines (cuBLAS, cuBLASLt, torch.matmul, the runtime) on shapes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "baselines/baselines.hpp"
#include "cli/command.hpp"
#include "cli/measure_options.hpp"
#include "cli/shape_args.hpp"
#include "core/atomic_file.hpp"
#include "judge/bench.hpp"

namespace cudal2::cli {

namespace {

struct BenchArgs {
  std::string methods = "all";
  std::string mode = "offline";
  std::string csv;
  std::string samples_csv;
  bool settle = false;
  bool resume = false;
  bool fp16_accum = false;
  bool no_verify = false;
  bool quiet = false;
  std::string timers = "graph,eager,host";
  std::string reference;  // methods the ratios are taken against; "" = every method
  int reps = 30;
  double qps = 200;
  double verify_budget = double(1 << 30);
  uint64_t seed = 0;
  ShapeArgs shapes;
};

BenchOptions to_options(const BenchArgs& a, const std::string& cmdline) {
  BenchOptions o;
  o.shapes = a.shapes.resolve();
  o.accum = a.fp16_accum ? Accum::F16 : Accum::F32;
  const auto names = a.methods == "all" ? default_method_names() : split_list(a.methods);
  if (names.empty()) throw InputError("--methods names no method");
  // Ratios are taken against the NVIDIA/PyTorch baselines run, so the runtime's row says whether
  // cudal2 beats the best of them; --reference names others (a run of runtimes alone: all of them).
  auto reference = split_list(a.reference);
  if (reference.empty())
    for (const auto& n : names)
      if (std::find(baseline_names().begin(), baseline_names().end(), n) != baseline_names().end())
        reference.push_back(n);
  for (const auto& r : reference)
    if (std::find(names.begin(), names.end(), r) == names.end())
      throw InputError(fmt::format("--reference '{}' is not among the methods run ({})", r, fmt::join(names, ", ")));
  for (const auto& n : names) {
    if (!is_baseline(n))
      throw InputError(fmt::format("unknown method '{}' (known: {}, {})", n, fmt::join(baseline_names(), ", "),
                                   fmt::join(runtime_method_names(), ", ")));
    const Accum acc = o.accum;
    const bool ref = reference.empty() || std::find(reference.begin(), reference.end(), n) != reference.end();
    o.methods.push_back({n, ref, [n, acc] { return make_baseline(n, acc); }});
  }
  o.modes = parse_modes(a.mode);
  o.timers = parse_timers(a.timers);
  check_measure_options({.reps = a.reps, .qps = a.qps, .verify_budget = a.verify_budget});
  if (a.resume && a.csv.empty()) throw InputError("--resume needs --csv FILE");
  if (!a.csv.empty()) check_output_file(a.csv, "--csv");  // before the GPU is looked for
  if (!a.samples_csv.empty()) check_output_file(a.samples_csv, "--samples-csv");
  o.reps = a.reps;
  o.qps = a.qps;
  o.verify = !a.no_verify;
  o.verify_budget = a.verify_budget;
  o.seed = a.seed;
  o.csv_path = a.csv;
  o.samples_csv_path = a.samples_csv;
  o.settle = a.settle;
  o.resume = a.resume;
  o.command_line = cmdline;
  o.progress = !a.quiet;
  return o;
}

}  // namespace

Run add_bench(CLI::App& cmd, const Context& ctx) {
  auto b = std::make_shared<BenchArgs>();
  auto* bench = &cmd;
  b->shapes.add(bench);
  bench->add_option(
      "--methods", b->methods,
      fmt::format("Comma-separated methods or 'all' ({}); also runtime-b-nn/tn and runtime-c-nn/tn, other builds "
                  "of the runtime ($CUDAL2_RUNTIME_LIB_B, _C)",
                  fmt::join(default_method_names(), ", ")));
  bench->add_option("--mode", b->mode, "offline, server or both")->capture_default_str();
  bench->add_option("--reps", b->reps, "Samples per timer, method and mode")->capture_default_str();
  bench->add_option("--qps", b->qps, "Server mode: mean request rate; idle gaps ~ Exp(qps)")->capture_default_str();
  bench
      ->add_option("--timers", b->timers,
                   "Timers to run: graph, eager, host, chain (comma-separated; chain: every call after a trusted "
                   "interlude, docs/measuring.md)")
      ->capture_default_str();
  bench->add_option("--reference", b->reference,
                    "Methods the ratios (ratio_to_best_baseline, paired_ratio) are taken against, comma-separated "
                    "(default: every cuBLAS/cuBLASLt/torch method run; with none, every method)");
  bench->add_option("--csv", b->csv, "Write tidy long-format results to FILE");
  bench->add_option("--samples-csv", b->samples_csv,
                    "Also write every sample to FILE, in the order taken, with the method sampled just before it");
  bench->add_flag("--settle", b->settle,
                  "Offline: flush the L2 and replay a method's batch once untimed before each graph and chain sample "
                  "(baselines and the runtime), so no method finds the L2 another left");
  bench->add_flag("--resume", b->resume, "Keep FILE's rows and skip shapes already complete in it");
  bench->add_flag("--fp16-accum", b->fp16_accum, "fp16 accumulation (CUBLAS_COMPUTE_16F) instead of fp32");
  bench->add_flag("--no-verify", b->no_verify, "Skip verification (timings are then unchecked)");
  bench
      ->add_option("--verify-budget", b->verify_budget,
                   "CPU multiply-adds per reference before checking sampled rows/columns instead")
      ->capture_default_str();
  bench->add_option("--seed", b->seed, "Random seed (default: fresh each run)");
  bench->add_flag("--quiet", b->quiet, "No progress lines");
  return [b, &ctx] {
    const auto opt = to_options(*b, ctx.command_line);
    const auto report = run_bench(opt);
    if (report.shapes.size() <= 64) print_table(report, opt);
    print_class_summary(report, opt);
    print_runtime_against_baselines(report, opt);
    if (!opt.csv_path.empty()) std::printf("\nwrote %s\n", opt.csv_path.c_str());
    return 0;
  };
}

}  // namespace cudal2::cli
