#pragma once
// The classic checks of every method on one shape (docs/verification.md): one run on poisoned
// output, then guard bands, unwritten and non-finite outputs, and the exact {0,1} or random-normal
// comparison against the fp64 host reference of sampled rows and columns.
#include <cuda_runtime.h>

#include <cstdint>

#include "judge/shape_buffers.hpp"
#include "measure/checks.hpp"
#include "measure/method.hpp"
#include "measure/verify.hpp"

namespace cudal2 {

// Run the method once on poisoned output and apply every check. Failures are recorded in v.
void verify_once(Method& r, ShapeBuffers& buf, const Reference& ref, bool exact, Accum accum, uint16_t poison,
                 DeviceChecker& chk, cudaStream_t st, Verdict& v);
// The fp64 reference of the current inputs on the rows and columns the budget allows.
Reference host_reference(ShapeBuffers& buf, double budget, uint64_t sampling_seed);

}  // namespace cudal2
