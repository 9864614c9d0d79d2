#pragma once
// The steps of run_bench (judge/bench.hpp), one file each: the job's set-up and CSV
// (judge/bench_csv.cpp), and per shape, prepare -> verify -> time -> leftovers (ShapeRun,
// judge/bench_shape.cpp and judge/bench_time.cpp). Internal to judge/.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "core/roofline.hpp"
#include "judge/bench.hpp"
#include "judge/judge.hpp"
#include "judge/shape_buffers.hpp"
#include "measure/checks.hpp"
#include "measure/device.hpp"

namespace cudal2 {

// Throws InputError when a shape of opt cannot fit in the GPU's free memory.
void check_fits(const BenchOptions& opt, const GpuInfo& gpu);

// The CSV of opt.csv_path ("" : none): with opt.resume, its rows are kept and `todo` loses the
// shapes it already has (counted in report.skipped_resumed); its comment lines describe the job.
std::unique_ptr<CsvWriter> open_csv(const BenchOptions& opt, const GpuInfo& gpu, std::vector<Shape>& todo,
                                    BenchReport& report);
// One row per method x mode x timer asked for.
// limit: the run's read limit (limit_us and pct_of_limit of each row).
void write_rows(CsvWriter& csv, const ShapeResult& sr, const BenchOptions& opt, const ReadLimit& limit);
// The samples CSV of opt.samples_csv_path ("": none; appended to with opt.resume): one row per sample, in
// the order taken, with the method sampled just before it (samples_csv_columns()).
std::unique_ptr<CsvWriter> open_samples_csv(const BenchOptions& opt);
void write_samples(CsvWriter& csv, const ShapeResult& sr, const BenchOptions& opt);

// What every shape of one run_bench is measured with.
struct BenchJob {
  const BenchOptions& opt;
  std::vector<MethodPtr>& runners;
  cudaStream_t st;
  L2Flusher* flusher;  // server mode only
  ClockReader& clocks;
  const JobSecrets& secrets;
  DeviceChecker& checker;  // the in-place scans and gathers of verify_once
  HardwarePeak peak;
  std::mt19937_64& rng;
  bool any_untrusted;  // the judge checks every run of an untrusted method
  bool interleave;     // chained offline batches (untrusted methods in the job)
  bool chains;         // chained batches of any kind: the shape keeps output slots and a seed word
};

// One shape of a bench, step by step: prepare() binds every method, verify() runs the classic
// checks and the judge's, time() samples the methods interleaved in every mode, leftovers() asks
// untrusted runners what they left behind; result() is the shape's report, without the times of a
// method that is not ok.
class ShapeRun {
 public:
  ShapeRun(BenchJob& job, const Shape& s);
  void prepare();
  void verify();
  void time();
  void leftovers();
  ShapeResult result();

 private:
  // An untrusted method that fails a check is out for this shape, with the reason.
  void fault(size_t i, FailureKind kind, const std::string& detail);
  // An untrusted method's run followed by the judge's checks; false when it failed.
  bool checked(size_t i, const std::function<void()>& run);
  // The same for a chained batch of `calls` calls.
  bool checked_chain(size_t i, const std::function<void()>& run, int calls);
  void time_mode(Mode mode, const InputDistribution& timing_inputs);

  BenchJob& job;
  ShapeResult sr;
  ShapeBuffers buf;
  std::vector<size_t> live;  // indices of runners that passed so far
  std::unique_ptr<Judge> judge;
};

}  // namespace cudal2
