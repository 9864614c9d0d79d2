// The cudal2 command line. Parsing and output only: the work is in the library.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "baselines/baselines.hpp"
#include "core/problem.hpp"
#include "eval/bench.hpp"
#include "eval/device.hpp"

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
  std::vector<std::string> shapes;
  std::vector<std::string> shape_files;
  std::string grid;
  std::string methods = "all";
  std::string mode = "offline";
  std::string csv;
  std::string shard;
  bool resume = false;
  bool fp16_accum = false;
  bool no_verify = false;
  bool quiet = false;
  int reps = 30;
  double qps = 200;
  double verify_budget = double(1 << 30);
  uint64_t seed = 0;
};

cudal2::BenchOptions to_options(const BenchArgs& a, const std::string& cmdline) {
  using namespace cudal2;
  BenchOptions o;
  for (const auto& s : a.shapes) o.shapes.push_back(parse_shape(s));
  for (const auto& f : a.shape_files) {
    auto v = read_shapes_file(f);
    o.shapes.insert(o.shapes.end(), v.begin(), v.end());
  }
  if (!a.grid.empty()) {
    auto v = grid(a.grid);
    o.shapes.insert(o.shapes.end(), v.begin(), v.end());
  }
  if (o.shapes.empty()) o.shapes = grid("sample");
  o.shapes = unique_shapes(o.shapes);
  if (!a.shard.empty()) o.shapes = apply_shard(o.shapes, parse_shard(a.shard));
  o.accum = a.fp16_accum ? Accum::F16 : Accum::F32;
  const auto names = a.methods == "all" ? baseline_names() : split_list(a.methods);
  if (names.empty()) throw InputError("--methods names no method");
  for (const auto& n : names) {
    if (!is_baseline(n))
      throw InputError(fmt::format("unknown method '{}' (known: {})", n, fmt::join(baseline_names(), ", ")));
    const Accum acc = o.accum;
    o.methods.push_back({n, true, [n, acc] { return make_baseline(n, acc); }});
  }
  if (a.mode == "both")
    o.modes = {Mode::Offline, Mode::Server};
  else
    o.modes = {parse_mode(a.mode)};
  if (a.reps < 1) throw InputError(fmt::format("--reps {} must be at least 1", a.reps));
  if (!(a.qps > 0)) throw InputError(fmt::format("--qps {} must be positive", a.qps));
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

int main(int argc, char** argv) {
  std::string cmdline;
  for (int i = 1; i < argc; ++i) cmdline += (i > 1 ? " " : "") + std::string(argv[i]);

  CLI::App app{"cudal2: find HGEMM kernels faster than cuBLAS/cuBLASLt, and measure them honestly"};
  app.require_subcommand(1);
  BenchArgs b;
  auto* bench = app.add_subcommand("bench", "Verify and time the baselines (cuBLAS, cuBLASLt, torch.matmul) on shapes");
  bench->add_option("--shape", b.shapes, "Problem M,N,K (repeatable)");
  bench->add_option("--shapes", b.shape_files, "File with one M,N,K per line ('#' comments)");
  bench->add_option("--grid", b.grid, "Shape grid: paper (1000 shapes) or sample (16)");
  bench->add_option("--methods", b.methods,
                    fmt::format("Comma-separated methods or 'all' ({})", fmt::join(cudal2::baseline_names(), ", ")));
  bench->add_option("--mode", b.mode, "offline, server or both")->capture_default_str();
  bench->add_option("--reps", b.reps, "Samples per timer, method and mode")->capture_default_str();
  bench->add_option("--qps", b.qps, "Server mode: mean request rate; idle gaps ~ Exp(qps)")->capture_default_str();
  bench->add_option("--csv", b.csv, "Write tidy long-format results to FILE");
  bench->add_flag("--resume", b.resume, "Keep FILE's rows and skip shapes already complete in it");
  bench->add_option("--shard", b.shard, "Run shard I/N of the shape list (shape index % N == I)");
  bench->add_flag("--fp16-accum", b.fp16_accum, "fp16 accumulation (CUBLAS_COMPUTE_16F) instead of fp32");
  bench->add_flag("--no-verify", b.no_verify, "Skip verification (timings are then unchecked)");
  bench
      ->add_option("--verify-budget", b.verify_budget,
                   "CPU multiply-adds per reference before checking sampled rows/columns instead")
      ->capture_default_str();
  bench->add_option("--seed", b.seed, "Random seed (default: fresh each run)");
  bench->add_flag("--quiet", b.quiet, "No progress lines");

  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  const bool known =
      argc > 1 && std::any_of(subs.begin(), subs.end(), [&](const CLI::App* a) { return a->get_name() == argv[1]; });
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "cudal2: error: unknown command '%s' (commands: bench; see cudal2 --help)\n", argv[1]);
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

  try {
    if (bench->parsed()) {
      const auto opt = to_options(b, cmdline);
      const auto report = cudal2::run_bench(opt);
      if (report.shapes.size() <= 64) cudal2::print_table(report, opt);
      cudal2::print_class_summary(report, opt);
      if (!opt.csv_path.empty()) std::printf("\nwrote %s\n", opt.csv_path.c_str());
    }
    return 0;
  } catch (const cudal2::InputError& e) {
    std::fprintf(stderr, "cudal2: error: %s\n", e.what());
    return 2;
  } catch (const cudal2::NoGpuError& e) {
    std::fprintf(stderr, "cudal2: %s: nothing to run on this machine\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudal2: failed: %s\n", e.what());
    return 1;
  }
}
