#include "cli/measure_options.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/problem.hpp"

namespace cudal2::cli {

void check_measure_options(const MeasureOptions& o) {
  if (o.reps < 1 || o.reps > 1000000) throw InputError(fmt::format("--reps {}: must be 1..1000000", o.reps));
  if (!std::isfinite(o.qps) || o.qps <= 0) throw InputError(fmt::format("--qps {}: must be a positive number", o.qps));
  if (!std::isfinite(o.verify_budget) || o.verify_budget < 1)
    throw InputError(fmt::format("--verify-budget {}: must be a number of multiply-adds, 1 or more", o.verify_budget));
  if (o.timeout_s < 1) throw InputError(fmt::format("--timeout {}: must be at least 1 s", o.timeout_s));
  if (o.batch < 1) throw InputError(fmt::format("--batch {}: must be at least 1", o.batch));
}

}  // namespace cudal2::cli
