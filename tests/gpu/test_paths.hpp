#pragma once
// Where the GPU tests find their test data and the judge, relative to the build so that a build
// directory that moves (carried to another machine, say) still finds them:
//   - the candidate sources: $CUDAL2_TEST_DATA, else gpu_data/ beside this executable (the build
//     copies tests/gpu/candidates and tests/gpu/adversarial there), else the source tree's copy;
//   - the judge: $CUDAL2_CLI, else ../cudal2 beside this executable, else the configured path.
#include <string>

namespace cudal2::test {

std::string candidates_dir();
std::string adversarial_dir();
std::string cli();

// CUDAL2_GPU_LONG=1 (ctest label long): the tests run their long forms (the long PDL chains, the
// 20 evaluations beside a hanging neighbour); otherwise the short ones the gpu suite runs.
bool long_run();

}  // namespace cudal2::test
