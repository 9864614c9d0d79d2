#pragma once
// The measurement options `bench`, `eval` and `tune` share, checked in one place before anything
// runs. `tune` used to pass them unchecked to the judge: --verify-budget nan came back as an
// "error" row with a penalty reward, which the next run then skipped as already measured.
namespace cudal2::cli {

struct MeasureOptions {
  int reps = 0;
  double qps = 0;
  double verify_budget = 0;
  int timeout_s = 1;  // per candidate (eval, tune)
  int batch = 1;      // candidates per judge job (eval, tune)
};

// Throws InputError naming the option: reps 1..1000000, qps and verify budget finite and
// positive, timeout at least 1 s, batch at least 1.
void check_measure_options(const MeasureOptions& o);

}  // namespace cudal2::cli
