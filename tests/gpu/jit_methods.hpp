#pragma once
// What the GPU tests of our own families share: specs compiled by the JIT on this machine into
// bench methods, and the check that every candidate method of a bench report verified.
#include <string>
#include <vector>

#include "judge/bench.hpp"

namespace cudal2::testing {

// One method per spec text, named <prefix><index> (<family><index> when prefix is empty); a spec that fails to compile
// is a test failure (with the compiler's log) and is left out.
std::vector<MethodFactory> compile_specs(const std::vector<std::string>& texts, const std::string& prefix);
// run_bench of the specs (one method each, named <prefix><index>) on shapes, 3 reps, table printed;
// offline, with these timers (the chain timer adds the chained batches' verification).
BenchReport bench_specs(const std::vector<std::string>& specs, const std::vector<Shape>& shapes, Accum accum,
                        const std::string& prefix, const TimerSet& timers = kDefaultTimers);
// Every non-baseline method of every shape has status Ok (the failure's details otherwise).
void expect_all_ok(const BenchReport& r);

}  // namespace cudal2::testing
