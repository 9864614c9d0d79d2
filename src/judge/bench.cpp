// run_bench (judge/bench.hpp): the job's set-up, then each shape through its steps
// (judge/bench_steps.hpp), written to the CSV as it finishes.
#include "judge/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include "judge/bench_steps.hpp"
#include "measure/device.hpp"
#include "measure/read_limit.hpp"

namespace cudal2 {

namespace {

using Clock = std::chrono::steady_clock;

struct StreamHolder {
  cudaStream_t s = nullptr;
  StreamHolder() { CUDAL2_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~StreamHolder() { cudaStreamDestroy(s); }
};

}  // namespace

void check_fits(const BenchOptions& opt, const GpuInfo& gpu) {
  size_t free_b = 0, total_b = 0;
  CUDAL2_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const size_t flush_bytes = 2 * gpu.l2_bytes;
  // With untrusted methods the judge keeps a reference output beside C.
  bool judged = false;
  for (const auto& m : opt.methods) judged = judged || !m.baseline;
  for (const auto& s : opt.shapes) {
    const bool chains = opt.timers[static_cast<int>(TimerKind::Chain)] || (judged && opt.interleave);
    const size_t need = bench_bytes(s) + flush_bytes +
                        (judged ? static_cast<size_t>(s.m * s.n) * 2 + 2 * GuardedBuffer::kDefaultGuard : 0) +
                        (chains ? chain_bytes(s) : 0);
    if (need > free_b)
      throw InputError(fmt::format("problem {} is too big for GPU memory: needs {:.2f} GiB, {:.2f} GiB free on {}",
                                   s.str(), need / 1073741824.0, free_b / 1073741824.0, gpu.name));
  }
}

BenchReport run_bench(const BenchOptions& opt) {
  require_gpu();
  CUDAL2_CUDA(cudaSetDevice(0));
  const GpuInfo gpu = query_gpu(0);
  check_fits(opt, gpu);

  BenchReport report;
  std::vector<Shape> todo = opt.shapes;
  StreamHolder stream;
  const cudaStream_t st = stream.s;
  std::unique_ptr<L2Flusher> flusher;
  if (opt.settle || std::find(opt.modes.begin(), opt.modes.end(), Mode::Server) != opt.modes.end())
    flusher = std::make_unique<L2Flusher>(gpu.l2_bytes);
  // The read limit every row is put against (limit_us, pct_of_limit), once per run.
  report.limit = measure_read_limit(st, gpu.l2_bytes, flusher.get());
  report.gpu = gpu.name;
  std::unique_ptr<CsvWriter> csv = open_csv(opt, gpu, todo, report);
  std::unique_ptr<CsvWriter> samples_csv = open_samples_csv(opt);
  if (opt.progress) {
    std::fprintf(stderr,
                 "cudal2 bench: %s, %d SMs, driver %s, cuBLAS %d; read limit %.2f TB/s, cold call %.1f us; %zu "
                 "shape(s), %zu method(s)%s\n",
                 gpu.name.c_str(), gpu.sm_count, gpu.driver.c_str(), gpu.cublas_version, report.limit.warm_tbps,
                 report.limit.cold_floor_us, todo.size(), opt.methods.size(),
                 report.skipped_resumed ? fmt::format(", {} already in the CSV", report.skipped_resumed).c_str() : "");
  }

  ClockReader clocks;

  std::vector<MethodPtr> runners;
  for (const auto& f : opt.methods) runners.push_back(f.make());
  bool any_untrusted = false;
  for (const auto& r : runners) any_untrusted = any_untrusted || !r->trusted();
  // Chained batches: untrusted candidates' offline graph and eager batches, and the chain timer.
  const bool interleave = any_untrusted && opt.interleave;
  const bool offline = std::find(opt.modes.begin(), opt.modes.end(), Mode::Offline) != opt.modes.end();
  const bool chains = offline && (interleave || opt.timers[static_cast<int>(TimerKind::Chain)]);
  // Drawn afresh for each job (each run_bench): nothing a candidate could learn in advance.
  const JobSecrets secrets = opt.secrets ? *opt.secrets : JobSecrets::draw();
  DeviceChecker checker;  // the in-place scans and gathers of verify_once
  GuardedBuffer::set_guard_byte(secrets.guard_byte);
  const HardwarePeak peak =
      hopper_peak(gpu.sm_count, gpu.max_sm_clock_mhz, gpu.mem_clock_mhz, gpu.mem_bus_bits, double(gpu.l2_bytes));

  std::random_device rd;
  std::mt19937_64 rng(opt.seed ? opt.seed : (static_cast<uint64_t>(rd()) << 32) ^ rd());
  const auto t_start = Clock::now();
  // ETA weights each shape by a fixed cost (verification, set-up: ~0.1 s) plus its arithmetic.
  auto cost = [](const Shape& s) { return 1e11 + flops(s); };
  double total_cost = 0, done_cost = 0;
  for (const auto& s : todo) total_cost += cost(s);
  BenchJob job{opt, runners, st, flusher.get(), clocks, secrets, checker, peak, rng, any_untrusted, interleave, chains};

  for (size_t si = 0; si < todo.size(); ++si) {
    const Shape s = todo[si];
    ShapeRun run(job, s);
    run.prepare();
    run.verify();  // (with opt.verify)
    run.time();
    run.leftovers();
    ShapeResult sr = run.result();
    if (csv) write_rows(*csv, sr, opt, report.limit);
    if (samples_csv) write_samples(*samples_csv, sr, opt);
    done_cost += cost(s);
    if (opt.progress) {
      const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
      const double eta = done_cost > 0 ? el * (total_cost - done_cost) / done_cost : 0;
      std::string best;
      if (const auto b = sr.best_baseline(opt.modes.front(), TimerKind::Graph))
        best = fmt::format(", best baseline {:.2f} us", *b);
      int bad = 0;
      for (const auto& mr : sr.methods) bad += mr.status != Status::Ok;
      std::fprintf(stderr, "[%zu/%zu] %-18s done%s%s | elapsed %.0fs, ETA %.0fs\n", si + 1, todo.size(),
                   s.str().c_str(), best.c_str(), bad ? fmt::format(", {} method(s) not ok", bad).c_str() : "", el,
                   eta);
    }
    report.shapes.push_back(std::move(sr));
  }
  return report;
}

}  // namespace cudal2
