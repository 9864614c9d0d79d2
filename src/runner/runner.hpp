#pragma once
// The candidate's process (`cudal2 runner`, runner/runner.cpp): the only process that loads
// candidate code. The judge starts one per candidate (judge/runner_proxy.hpp).

namespace cudal2 {

// Serves the judge's requests on stdin/stdout until end of input.
int runner_main();

}  // namespace cudal2
