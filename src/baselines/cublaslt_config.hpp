#pragma once
// A `cublaslt` spec (src/codegen/family_cublaslt.hpp) run in the judge's own process: the
// cuBLASLt call is built from the spec's fields directly (cublasLtMatmulAlgoInit, the
// configuration attributes, cublasLtMatmulAlgoCheck), with nothing generated or compiled. It is
// the same call the family's generated artifact (src/kernels/cublaslt_gemm.h) makes, and the same
// library the baselines call, so it is as trusted as they are (docs/threat-model.md); what it
// saves is a JIT compile (about 1.6 s) per spec, the bulk of tuning the whole grid in this space.
#include <string>

#include "codegen/spec.hpp"
#include "measure/method.hpp"

namespace cudal2 {

// The spec must be of the cublaslt family (InputError otherwise). prepare() throws MethodUnsupported
// when cuBLASLt refuses the configuration for the shape (cublasLtMatmulAlgoCheck), when it needs
// more workspace than the bench provides, or when the operands are below its alignment.
MethodPtr make_cublaslt_config_runner(const KernelSpec& spec, std::string name);

}  // namespace cudal2
