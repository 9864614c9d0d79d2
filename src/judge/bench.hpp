#pragma once
// The benchmark harness: for each shape, verify every method on fresh inputs, then time them
// interleaved in shuffled order, in the requested modes, and write rows as they are measured.
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/roofline.hpp"
#include "core/stats.hpp"
#include "measure/method.hpp"
#include "measure/timing.hpp"
#include "measure/verify.hpp"
#include "protocol/measure_settings.hpp"

namespace cudal2 {

struct MethodFactory {
  std::string name;
  bool baseline = true;  // counts toward "best baseline"
  std::function<MethodPtr()> make;
};

// How to measure (modes, timers, reps, qps, verify budget, interleave) is the base
// (protocol::MeasureSettings): a judge job's, handed over whole (judge/jobs.cpp), or the command
// line's. A person's `cudal2 bench` takes more samples and verifies more than a tuner's job.
struct BenchOptions : protocol::MeasureSettings {
  BenchOptions() {
    reps = 30;
    verify_budget = double(1 << 30);
  }
  std::vector<Shape> shapes;
  std::vector<MethodFactory> methods;
  Accum accum = Accum::F32;
  bool verify = true;
  uint64_t seed = 0;             // 0: a fresh seed from std::random_device
  std::string csv_path;          // "" = no CSV
  std::string samples_csv_path;  // "" = none; else every sample, in the order taken (write_samples)
  // Offline: every graph and chain sample of a trusted method (baselines, the runtime) starts from
  // the L2 its own calls leave (TimingConfig::settle).
  bool settle = false;
  bool resume = false;  // keep csv_path's rows, skip shapes already complete there
  std::string command_line;
  Ceilings ceilings;
  bool progress = true;               // progress lines on stderr
  std::optional<JobSecrets> secrets;  // tests only: fixed secrets instead of fresh ones
};

struct MethodResult {
  std::string method;
  Layout layout = Layout::NN;
  bool baseline = true;
  Status status = Status::Ok;  // Ok, Unsupported, Failed (the verdicts say why) or Error
  std::string reason;
  Verdict exact, normal;
  // Untrusted methods: what the judge found beyond the two classic checks (GPU comparison on
  // every distribution and after every timed batch, inputs, timing, leftovers).
  Verdict judge;
  // The first failed verdict of the three (or normal, when all passed).
  const Verdict& first_failure() const { return !exact.ok ? exact : !normal.ok ? normal : !judge.ok ? judge : normal; }
  nlohmann::json details;
  std::map<Mode, std::array<std::optional<Summary>, kTimerCount>> timing;
  // The samples behind `timing`, one per round in round order (all methods of a shape are
  // sampled once per round, in shuffled order): what the paired ratio pairs.
  std::map<Mode, std::array<std::vector<double>, kTimerCount>> samples;
  std::map<Mode, std::string> graph_error;
  std::map<Mode, int> inner;
};

struct ShapeResult {
  Shape shape;
  std::vector<MethodResult> methods;
  int sm_mhz_min = -1, sm_mhz_max = -1;
  uint64_t seed = 0;
  // Per mode, per round: the indices into `methods` in the order that round sampled them (what
  // ran on the GPU just before each sample: the samples CSV's `previous`).
  std::map<Mode, std::vector<std::vector<size_t>>> rounds;
  // The baseline with the lowest median for (mode, timer) among those that ran ok; null if none.
  const MethodResult* fastest_baseline(Mode m, TimerKind t) const;
  // best baseline's median for (mode, timer); nullopt when no baseline has one
  std::optional<double> best_baseline(Mode m, TimerKind t) const;
  // Paired ratio of `mr` to the best baseline (the one with the lowest median): the median over
  // rounds of (baseline's sample / mr's sample) from the same round. Slow drift (clocks under a
  // power cap, neighbours on the host) moves both samples of a round alike and cancels, where
  // the ratio of medians keeps it. nullopt without a baseline or when the two did not sample
  // the same rounds.
  std::optional<double> paired_ratio(const MethodResult& mr, Mode m, TimerKind t) const;
  // A 95% confidence interval for that median (core/stats.hpp median_interval over the rounds'
  // ratios; 10 rounds: the 2nd and 9th of them): whether a ratio away from 1 is more than the
  // rounds' spread. nullopt where paired_ratio is, and with fewer than 6 rounds.
  std::optional<std::pair<double, double>> paired_interval(const MethodResult& mr, Mode m, TimerKind t) const;

 private:
  // The rounds' ratios (fastest baseline's sample / mr's sample), or nullopt (paired_ratio says when).
  std::optional<std::vector<double>> round_ratios(const MethodResult& mr, Mode m, TimerKind t) const;
};

struct BenchReport {
  std::vector<ShapeResult> shapes;
  ReadLimit limit;  // measured once at the start of the run
  int skipped_resumed = 0;
  std::string gpu;  // the device's name, as the run's header says it
};

// Throws InputError for problems that cannot fit in GPU memory, NoGpuError without a GPU.
BenchReport run_bench(const BenchOptions& opt);

// Device bytes one shape needs (operands, both B layouts, guards, workspace).
size_t bench_bytes(const Shape& s);
// And what chained batches need besides (the output slots, the judge's check).
size_t chain_bytes(const Shape& s);

// Console output.
void print_table(const BenchReport& r, const BenchOptions& opt);
void print_class_summary(const BenchReport& r, const BenchOptions& opt);
// Per runtime method (runtime-nn, runtime-tn, runtime-b-*: not baselines), per mode: the runtime
// against every baseline of the run by shape class (geometric mean of baseline / runtime, graph
// timer), headed by the GPU's name: what the README's main command shows a user of their GPU.
void print_runtime_against_baselines(const BenchReport& r, const BenchOptions& opt);

// The CSV columns, one row per shape x method x mode x timer.
const std::vector<std::string>& csv_columns();
// The samples CSV's (--samples-csv): one row per sample; `round` and `position` say when it was
// taken, `previous` which method ran on the GPU just before it ("" for a shape's first sample in
// a mode).
const std::vector<std::string>& samples_csv_columns();

}  // namespace cudal2
