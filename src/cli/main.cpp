// The cudal2 command line. Parsing and output only: the work is in the library.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

#include "baselines/baselines.hpp"
#include "cli/exit_with.hpp"
#include "cli/lt_space.hpp"
#include "cli/measure_options.hpp"
#include "cli/report.hpp"
#include "cli/show.hpp"
#include "cli/spec_list.hpp"
#include "cli/suggest.hpp"
#include "core/input_file.hpp"
#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "eval/bench.hpp"
#include "eval/candidate.hpp"
#include "eval/device.hpp"
#include "eval/remote.hpp"
#include "export/export.hpp"
#include "llm/policy.hpp"
#include "search/policy.hpp"
#include "search/record.hpp"
#include "search/tune.hpp"
#include "serve/serve.hpp"
#include "store/error.hpp"

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct BenchArgs {
  std::string methods = "all";
  std::string mode = "offline";
  std::string csv;
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
};

struct ShapeArgs {
  std::vector<std::string> shapes, shape_files;
  std::string grid, shard, classes;
  // A model's linear layers (core/model.hpp): its (N, K) at M buckets.
  std::vector<std::string> models;
  int64_t model_max_m = 4096;
  std::string model_m, model_layers = "all";
  void add(CLI::App* app) {
    app->add_option("--class", classes,
                    "Keep only shapes of these classes: small, skinny, medium, large (comma-separated)");
    app->add_option("--shape", shapes, "Problem M,N,K (repeatable)");
    app->add_option("--shapes", shape_files, "File with one M,N,K per line ('#' comments)");
    app->add_option("--grid", grid, "Shape grid: paper (1000 shapes) or sample (16)");
    app->add_option("--shard", shard, "Run shard I/N of the shape list (shape index % N == I)");
    app->add_option("--model", models,
                    "A Hugging Face config.json (repeatable): its linear layers' (N, K) at M = 1, 2, 4, ... "
                    "--model-max-m and the --model-m values");
    app->add_option("--model-max-m", model_max_m, "Largest M bucket of --model")->capture_default_str();
    app->add_option("--model-m", model_m, "More M values for --model, comma-separated (e.g. your batch sizes)");
    app->add_option("--model-layers", model_layers,
                    "--model's layers: hf (q, k, v, o, gate, up, down, lm_head), fused (qkv, gate_up, o, down, "
                    "lm_head) or all")
        ->capture_default_str();
  }
  std::vector<cudal2::Shape> model_shapes() const {
    using namespace cudal2;
    std::vector<Shape> out;
    if (models.empty()) {
      if (!model_m.empty()) throw InputError("--model-m needs --model");
      return out;
    }
    std::vector<int64_t> extra;
    for (const auto& v : split_list(model_m)) {
      try {
        size_t used = 0;
        extra.push_back(std::stoll(v, &used));
        if (used != v.size()) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--model-m: '{}' is not a number", v));
      }
    }
    const auto ms = m_buckets(model_max_m, extra);
    const auto set = parse_layer_set(model_layers);
    for (const auto& path : models) {
      auto v = cudal2::model_shapes(model_linears(read_model_config(path), set), ms);
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
  std::vector<cudal2::Shape> resolve() const {
    using namespace cudal2;
    std::vector<Shape> out;
    for (const auto& s : shapes) out.push_back(parse_shape(s));
    for (const auto& f : shape_files) {
      auto v = read_shapes_file(f);
      out.insert(out.end(), v.begin(), v.end());
    }
    if (!grid.empty()) {
      auto v = cudal2::grid(grid);
      out.insert(out.end(), v.begin(), v.end());
    }
    {
      auto v = model_shapes();
      out.insert(out.end(), v.begin(), v.end());
    }
    if (out.empty()) out = cudal2::grid("sample");
    out = unique_shapes(out);
    if (!classes.empty()) {
      const auto keep = split_list(classes);
      for (const auto& c : keep)
        if (c != "small" && c != "skinny" && c != "medium" && c != "large")
          throw InputError(fmt::format("unknown shape class '{}' (small, skinny, medium, large)", c));
      std::erase_if(out, [&](const Shape& s) {
        return std::find(keep.begin(), keep.end(), std::string(to_string(classify(s)))) == keep.end();
      });
      if (out.empty()) throw InputError(fmt::format("no shape of class {} among the shapes given", classes));
    }
    if (!shard.empty()) out = apply_shard(out, parse_shard(shard));
    return out;
  }
};

std::vector<cudal2::Mode> parse_modes(const std::string& m) {
  if (m == "both") return {cudal2::Mode::Offline, cudal2::Mode::Server};
  return {cudal2::parse_mode(m)};
}

cudal2::TimerSet parse_timers(const std::string& list) {
  cudal2::TimerSet on{};
  for (const auto& t : split_list(list)) {
    bool known = false;
    for (auto k : cudal2::kTimers)
      if (cudal2::to_string(k) == t) on[static_cast<int>(k)] = known = true;
    if (!known) throw cudal2::InputError(fmt::format("unknown timer '{}' (graph, eager, host, chain)", t));
  }
  if (std::none_of(on.begin(), on.end(), [](bool b) { return b; }))
    throw cudal2::InputError("--timers names no timer (graph, eager, host, chain)");
  return on;
}

cudal2::BenchOptions to_options(const BenchArgs& a, const ShapeArgs& sa, const std::string& cmdline) {
  using namespace cudal2;
  BenchOptions o;
  o.shapes = sa.resolve();
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
  cudal2::cli::check_measure_options({.reps = a.reps, .qps = a.qps, .verify_budget = a.verify_budget});
  if (a.resume && a.csv.empty()) throw InputError("--resume needs --csv FILE");
  o.reps = a.reps;
  o.qps = a.qps;
  o.verify = !a.no_verify;
  o.verify_budget = a.verify_budget;
  o.seed = a.seed;
  o.csv_path = a.csv;
  o.resume = a.resume;
  o.command_line = cmdline;
  o.progress = !a.quiet;
  return o;
}

}  // namespace

// Outside exit_code_of only set-up runs (CLI11 option registration), where an exception is a
// programming error or out of memory: std::terminate is the right end.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  // `cudal2 lt-space`: the cublaslt family's specs for one shape (src/cli/lt_space.cpp).
  if (argc > 1 && std::string_view(argv[1]) == "lt-space") return cudal2::lt_space_main(argc - 1, argv + 1);
  // `cudal2 report`: HTML + figures from CSVs/stores (python/cudal2/report.py; src/cli/report.cpp).
  if (argc > 1 && std::string_view(argv[1]) == "report") return cudal2::report_main(argc - 1, argv + 1);
  std::string cmdline;
  for (int i = 1; i < argc; ++i) cmdline += (i > 1 ? " " : "") + std::string(argv[i]);

  CLI::App app{"cudal2: find HGEMM kernels faster than cuBLAS/cuBLASLt, and measure them honestly"};
  app.require_subcommand(1);
  BenchArgs b;
  auto* bench = app.add_subcommand("bench", "Verify and time the baselines (cuBLAS, cuBLASLt, torch.matmul) on shapes");
  ShapeArgs bench_shapes;
  bench_shapes.add(bench);
  bench->add_option(
      "--methods", b.methods,
      fmt::format("Comma-separated methods or 'all' ({}); also runtime-b-nn/tn and runtime-c-nn/tn, other builds "
                  "of the runtime ($CUDAL2_RUNTIME_LIB_B, _C)",
                  fmt::join(cudal2::default_method_names(), ", ")));
  bench->add_option("--mode", b.mode, "offline, server or both")->capture_default_str();
  bench->add_option("--reps", b.reps, "Samples per timer, method and mode")->capture_default_str();
  bench->add_option("--qps", b.qps, "Server mode: mean request rate; idle gaps ~ Exp(qps)")->capture_default_str();
  bench
      ->add_option("--timers", b.timers,
                   "Timers to run: graph, eager, host, chain (comma-separated; chain: every call after a trusted "
                   "interlude, docs/measuring.md)")
      ->capture_default_str();
  bench->add_option("--reference", b.reference,
                    "Methods the ratios (ratio_to_best_baseline, paired_ratio) are taken against, comma-separated "
                    "(default: every cuBLAS/cuBLASLt/torch method run; with none, every method)");
  bench->add_option("--csv", b.csv, "Write tidy long-format results to FILE");
  bench->add_flag("--resume", b.resume, "Keep FILE's rows and skip shapes already complete in it");
  bench->add_flag("--fp16-accum", b.fp16_accum, "fp16 accumulation (CUBLAS_COMPUTE_16F) instead of fp32");
  bench->add_flag("--no-verify", b.no_verify, "Skip verification (timings are then unchecked)");
  bench
      ->add_option("--verify-budget", b.verify_budget,
                   "CPU multiply-adds per reference before checking sampled rows/columns instead")
      ->capture_default_str();
  bench->add_option("--seed", b.seed, "Random seed (default: fresh each run)");
  bench->add_flag("--quiet", b.quiet, "No progress lines");

  // eval / tune: candidates compiled by the JIT, run only in a sandboxed worker process.
  cudal2::EvalRequest ev;
  std::string db_path = "cudal2.db";  // where eval and tune record (search/record.hpp)
  std::vector<std::string> spec_texts, source_files;
  std::string eval_mode = "offline";
  ShapeArgs eval_shapes;
  auto* eval = app.add_subcommand(
      "eval", "Compile, verify and time kernel candidates (in a worker process) against the baselines");
  eval->add_option("--spec", spec_texts, "KernelSpec text (repeatable); see docs/kernel-space.md");
  eval->add_option("--source", source_files, "A free-form candidate .cu exposing the kernel C ABI (repeatable)");
  std::string spec_list;
  eval->add_option("--spec-list", spec_list,
                   "FILE of 'M,N,K SPEC' lines: each shape measured in one job with its own specs (instead of "
                   "--spec and --shape)");
  double eval_budget_minutes = 0;
  eval->add_option("--budget-minutes", eval_budget_minutes,
                   "With --spec-list: start no new shape after this many minutes");
  std::string src_layout = "nn", src_accum = "f32";
  eval->add_option("--layout", src_layout, "Layout of B for --source: nn or tn")->capture_default_str();
  eval->add_option("--accum", src_accum, "Accumulator for --source: f32 or f16")->capture_default_str();
  std::string timers = "graph,eager,host";
  std::string baselines = "cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn";
  auto add_eval_opts = [&](CLI::App* c, ShapeArgs& sa) {
    sa.add(c);
    c->add_option("--mode", eval_mode, "offline, server or both")->capture_default_str();
    c->add_option("--reps", ev.reps, "Samples per timer")->capture_default_str();
    c->add_option("--qps", ev.qps, "Server mode: mean request rate; idle gaps ~ Exp(qps)")->capture_default_str();
    c->add_option("--timers", timers, "Timers to run: graph, eager, host, chain (comma-separated)")
        ->capture_default_str();
    c->add_option("--db", db_path, "SQLite results store")->capture_default_str();
    c->add_option("--timeout", ev.timeout_s, "Seconds per candidate before its worker is killed")
        ->capture_default_str();
    c->add_option("--batch", ev.batch, "Candidates per worker job (a failed job is retried one by one)")
        ->capture_default_str();
    c->add_option("--csv", ev.csv_path, "Also append the bench's CSV rows (candidates and baselines) to FILE");
    c->add_option("--verify-budget", ev.verify_budget, "CPU multiply-adds per reference before sampling")
        ->capture_default_str();
    c->add_option("--baselines", baselines, "Baselines timed in the same jobs (comma-separated)")
        ->capture_default_str();
    c->add_flag_callback(
        "--no-confine", [&] { ev.confine = false; },
        "Run candidates unconfined (diagnosis only: a machine where the sandbox itself fails)");
    c->add_flag_callback(
        "--back-to-back", [&] { ev.interleave = false; },
        "Offline graph and eager batches back to back on one set of inputs instead of chained (measurement of "
        "what chains cost only: a candidate that reuses earlier results can game it; docs/threat-model.md)");
  };
  add_eval_opts(eval, eval_shapes);
  std::string search = "exhaustive";
  int budget = 0;
  ShapeArgs tune_shapes;
  auto* tune =
      app.add_subcommand("tune", "Search the kernel space for the given shapes; results go to the store (resumable)");
  tune->add_option("--search", search,
                   fmt::format("Search policy: {}", fmt::join(cudal2::search::policy_names(), ", ")))
      ->capture_default_str();
  cudal2::search::PolicyOptions policy_opts;
  tune->add_option("--seed", policy_opts.seed, "Seed of random and learning policies (0: a fixed default)");
  tune->add_option("--policy-file", policy_opts.state_path, "Policy state: loaded at start, saved after each round");
  cudal2::llm::add_llm_options(tune, policy_opts.extra);  // --llm-*: src/llm/cli.cpp, docs/llm.md
  int round = 0;
  tune->add_option("--round", round, "Candidates per propose/observe round (0: the whole budget at once)")
      ->capture_default_str();
  int per_problem = 0, max_rounds = 0;
  tune->add_option("--per-problem", per_problem,
                   "Specs each problem proposes per round (0: as many as --round); --round 0 --per-problem 1: "
                   "every problem one evaluation per round");
  tune->add_option("--rounds", max_rounds, "Stop after this many rounds (0: no limit)");
  int lt_max = 16;
  tune->add_option(
          "--lt-max", lt_max,
          "cublaslt family: specs per shape and layout beyond the heuristic's own suggestions (all of which are in)")
      ->capture_default_str();
  tune->add_option("--budget", budget, "Stop after this many candidates (0: no limit)");
  double budget_minutes = 0;
  tune->add_option("--budget-minutes", budget_minutes, "Stop starting new candidates after this many minutes");
  std::string families = "sm90_cutlass", space = "full", tune_accum = "f32";
  tune->add_option("--families", families, "Kernel families to search (comma-separated)")->capture_default_str();
  tune->add_option("--space", space,
                   "full (every valid configuration), core (docs/tuning.md) or @FILE (the specs listed there)")
      ->capture_default_str();
  tune->add_option("--accum", tune_accum, "Accumulator: f32 or f16")->capture_default_str();
  bool skip_search = false;
  tune->add_flag("--skip-search", skip_search, "Only the final measurement of what the store already holds");
  int final_top = 0;
  std::string final_csv, final_mode = "both";
  int final_reps = 30;
  tune->add_option("--final-top", final_top,
                   "Afterwards, re-measure each shape's N fastest specs per layout with every timer (0: skip)");
  tune->add_option("--final-mode", final_mode, "Modes of the final measurement")->capture_default_str();
  tune->add_option("--final-reps", final_reps, "Samples per timer in the final measurement")->capture_default_str();
  tune->add_option("--final-csv", final_csv, "CSV file for the final measurement");
  std::string final_baselines = "cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn";
  tune->add_option("--final-baselines", final_baselines, "Baselines of the final measurement")->capture_default_str();
  std::string gpus;
  tune->add_option("--gpus", gpus,
                   "GPUs that measure: all, or device numbers such as 0,1 (one worker per GPU, one store and "
                   "policy; default: the first GPU)");
  // Replay (bench/replay_worker.py, bench/results/h100/policy-replay/): a stand-in worker answers
  // from recorded measurements, so tune runs on a machine without a GPU. Hidden: not for real runs.
  std::string tune_worker;
  tune->add_option("--worker", tune_worker, "Worker executable speaking `cudal2 worker`'s protocol (default: this one)")
      ->group("");
  bool no_gpu_check = false;
  tune->add_flag("--no-gpu-check", no_gpu_check, "Do not require a local GPU (only with a --worker that needs none)")
      ->group("");
  add_eval_opts(tune, tune_shapes);
  std::string show_db = "cudal2.db", show_gpu;
  auto* show = app.add_subcommand("show", "Best kernel per shape in the store, with its speedup over the baselines");
  show->add_option("--db", show_db, "SQLite results store")->capture_default_str();
  show->add_option("--gpu", show_gpu, "GPU name as stored (default: the local GPU's, else the only one in the store)");
  auto* worker = app.add_subcommand("worker", "Internal: serve evaluation jobs on stdin/stdout");
  worker->group("");
  auto* runner = app.add_subcommand("runner", "Internal: run one untrusted candidate for the judge (confined)");
  runner->group("");
  cudal2::exporter::add_export_command(app);                                 // `cudal2 export`: src/export/export.cpp
  cudal2::serve::add_serve_command(app, cudal2::search::score_measurement);  // `cudal2 serve`: src/serve/
  cudal2::cli::add_suggest_command(app);                                     // `cudal2 suggest`: src/cli/suggest.cpp
  cudal2::cli::add_merge_command(app);                                       // `cudal2 merge`: src/cli/merge.cpp

  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  const bool known =
      argc > 1 && std::any_of(subs.begin(), subs.end(), [&](const CLI::App* a) { return a->get_name() == argv[1]; });
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "cudal2: error: unknown command '%s' (commands: bench, eval, tune, show; see cudal2 --help)\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cudal2: error: %s\n", e.what());
    return 2;
  }

  return cudal2::cli::exit_code_of([&]() -> int {
    if (worker->parsed()) return cudal2::worker_main();
    if (runner->parsed()) return cudal2::runner_main();
    if (eval->parsed() || tune->parsed()) {
      const bool is_tune = tune->parsed();
      cudal2::cli::check_measure_options({.reps = ev.reps,
                                          .qps = ev.qps,
                                          .verify_budget = ev.verify_budget,
                                          .timeout_s = ev.timeout_s,
                                          .batch = ev.batch});
      ev.shapes = (is_tune ? tune_shapes : eval_shapes).resolve();
      ev.modes = parse_modes(eval_mode);
      ev.timers = parse_timers(timers);
      ev.baselines = split_list(baselines);
      for (const auto& b : ev.baselines)
        if (!cudal2::is_baseline(b))
          throw cudal2::InputError(
              fmt::format("unknown baseline '{}' (known: {})", b, fmt::join(cudal2::baseline_names(), ", ")));
      ev.command_line = cmdline;
      ev.score = cudal2::search::score_measurement;  // the reward column of every stored row
      if (is_tune) {
        cudal2::search::TuneOptions to;
        to.eval = ev;
        to.db_path = db_path;
        to.search = search;
        to.policy = policy_opts;
        // --search llm reads the store (references, failures); rl refuses options it does not know.
        if (search == "llm") to.policy.extra["db"] = db_path;
        to.families = split_list(families);
        to.space = space;
        to.accum = cudal2::parse_accum(tune_accum);
        if (!(budget_minutes >= 0 && budget_minutes < 1e9))
          throw cudal2::InputError(fmt::format("--budget-minutes {}: must be 0 (no limit) or more", budget_minutes));
        if (final_reps < 1) throw cudal2::InputError(fmt::format("--final-reps {}: must be at least 1", final_reps));
        if (lt_max < 0) throw cudal2::InputError(fmt::format("--lt-max {}: must be 0 or more", lt_max));
        if (round < 0) throw cudal2::InputError(fmt::format("--round {}: must be 0 (the whole budget) or more", round));
        to.budget = budget;
        to.budget_minutes = budget_minutes;
        to.round = round;
        to.per_problem = per_problem;
        to.max_rounds = max_rounds;
        to.skip_search = skip_search;
        to.lt_max = lt_max;
        to.final_top = final_top;
        to.final_csv = final_csv;
        to.final_modes = parse_modes(final_mode);
        to.final_reps = final_reps;
        to.final_baselines = split_list(final_baselines);
        to.gpus = gpus;
        if (!tune_worker.empty()) to.eval.worker_exe = tune_worker;
        to.check_gpu = !no_gpu_check;
        const auto result = cudal2::search::run_tune(to);
        cudal2::search::print_tune_summary(result);
        if (final_top > 0) std::printf("final measurement written to %s\n", final_csv.c_str());
        return 0;
      } else {
        if (!spec_list.empty()) {
          if (!spec_texts.empty() || !source_files.empty() || !eval_shapes.shapes.empty() ||
              !eval_shapes.shape_files.empty() || !eval_shapes.grid.empty())
            throw cudal2::InputError("--spec-list names its own shapes and specs: no --spec, --source or shapes");
          auto list = cudal2::read_spec_list(spec_list);
          ev.shapes = std::move(list.shapes);
          ev.spec_shapes = std::move(list.spec_shapes);
          ev.specs = std::move(list.specs);
        }
        if (!(eval_budget_minutes >= 0)) throw cudal2::InputError("--budget-minutes must be 0 or more");
        ev.deadline_minutes = eval_budget_minutes;
        for (const auto& t : spec_texts) ev.specs.push_back(cudal2::parse_spec(t));
        for (const auto& f : source_files)
          ev.free_sources.push_back(cudal2::read_input_file(f, "source file", size_t{16} << 20));
        ev.free_layout = cudal2::parse_layout(src_layout);
        ev.free_accum = cudal2::parse_accum(src_accum);
        if (ev.specs.empty() && ev.free_sources.empty())
          throw cudal2::InputError("eval needs --spec TEXT or --source FILE");
      }
      cudal2::require_gpu();
      const auto outcomes = cudal2::search::evaluate_and_record(ev, db_path);
      cudal2::print_outcomes(outcomes);
      return 0;
    }
    if (show->parsed()) return cudal2::cli::print_best(show_db, show_gpu);
    if (bench->parsed()) {
      const auto opt = to_options(b, bench_shapes, cmdline);
      const auto report = cudal2::run_bench(opt);
      if (report.shapes.size() <= 64) cudal2::print_table(report, opt);
      cudal2::print_class_summary(report, opt);
      if (!opt.csv_path.empty()) std::printf("\nwrote %s\n", opt.csv_path.c_str());
    }
    return 0;
  });
}
