#pragma once
// KernelSpec -> CUDA source text. Codegen only writes text: it does not compile or run.
#include <string>

#include "codegen/spec.hpp"

namespace cudal2 {

// One .cu exposing the kernel C ABI (src/kernels/cudal2_kernel_abi.h) for the spec's
// compile-time part: #defines, then the family's header (each family's generate_source,
// codegen/family.hpp). Deterministic: the same spec gives the same bytes (the compile cache key;
// tests/golden/codegen/ pins them).
std::string generate_source(const KernelSpec& spec);

}  // namespace cudal2
