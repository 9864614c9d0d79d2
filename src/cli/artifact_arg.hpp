#pragma once
// `cudal2 eval --artifact PATH.so[@SPEC]`: a kernel built elsewhere, judged as it is. SPEC is the
// spec it was built from with the runtime knobs to run it with (after `|`), e.g.
//   build/k.so@wgmma nn f32 tile=128x256x64 cluster=2x1 stages=4 | raster=along_m swizzle=8 splits=2
// Without SPEC the artifact runs like a free-form source (eval's --layout and --accum).
#include <string>

#include "tuner/evaluate.hpp"

namespace cudal2::cli {

// Throws InputError when the file is missing or not a regular file, when SPEC does not parse, or
// when SPEC's family has no artifact (cublaslt: cuBLASLt called from data in the judge).
EvalRequest::Prebuilt parse_artifact_arg(const std::string& arg);

}  // namespace cudal2::cli
