#pragma once
// The `cublaslt` family's search space for one shape on this GPU: the configurations behind
// cuBLASLt's heuristic (src/codegen/family_cublaslt.hpp says what a spec names). Needs a GPU:
// cuBLASLt's heuristic and cublasLtMatmulAlgoCheck answer for the device in use.
#include <cstddef>
#include <string>
#include <vector>

#include "baselines/baselines.hpp"
#include "codegen/spec.hpp"

namespace cudal2 {

struct LtCandidate {
  KernelSpec spec;
  std::string origin;        // "heuristic #i", "#i tile", "#i splitk", ..., "algo N"
  size_t workspace = 0;      // bytes (cublasLtMatmulAlgoCheck)
  float waves = 0;           // cuBLASLt's waves count
  bool rebuilt_same = true;  // heuristic picks: the algo rebuilt from the spec is bytewise the heuristic's
};

// In order, deduplicated, each one accepted by cublasLtMatmulAlgoCheck for this shape with at
// most max_workspace bytes of workspace:
//  1. the heuristic's suggestions (asked for kAutotuneRequest = 100), in its order;
//  2. one-attribute variations of each suggestion: split-K in {1,2,3,4,6,8,16} with each
//     reduction scheme the algorithm supports, cluster shape, custom option, CTA swizzling,
//     stages among the algorithm's stage ids, tile among its tile ids (nearest ids first);
//     taken round-robin (the first variation of every suggestion and kind, then the second...);
//  3. algorithms the heuristic did not suggest (cublasLtMatmulAlgoGetIds), one spec per tile.
// All of 1, then at most max_specs of 2 and 3 (<= 0: no limit). Throws MethodUnsupported when
// cuBLASLt fails outright.
std::vector<LtCandidate> cublaslt_space(const Shape& shape, Layout layout, Accum accum, int max_specs,
                                        size_t max_workspace = kLibraryWorkspace);
// The specs of cublaslt_space: what the tuner evaluates for this shape (family `cublaslt`).
std::vector<KernelSpec> cublaslt_neighbourhood(const Shape& shape, Layout layout, Accum accum, int max_specs);

}  // namespace cudal2
