#pragma once
// KernelSpec family `cublaslt`: one configuration of cuBLASLt's own algorithm space, so the tuner
// searches it beside our kernels and the runtime table always holds something at least as fast
// as cuBLASLt auto-tuning. The spec names the configuration cublasLtMatmulAlgoConfigSetAttribute
// takes, in the numeric values of cublasLt.h's enums:
//   "cublaslt nn f32 algo=66 tile=20 stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=2x1 | splits=1"
//   algo       CUBLASLT_ALGO_CONFIG_ID (cublasLtMatmulAlgoGetIds)
//   tile       CUBLASLT_ALGO_CONFIG_TILE_ID (cublasLtMatmulTile_t; 0 = undefined)
//   stages     CUBLASLT_ALGO_CONFIG_STAGES_ID (cublasLtMatmulStages_t; 0 = undefined)
//   reduction  CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME (0 none, 1 in place, 2 compute type, 4 output type)
//   swizzle    CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING (0 or 1)
//   custom     CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION (0..CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX)
//   inner      CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID (cublasLtMatmulInnerShape_t)
//   cluster    CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID as MxN (auto = CUBLASLT_CLUSTER_SHAPE_AUTO)
//   splits     CUBLASLT_ALGO_CONFIG_SPLITK_NUM, a runtime knob (the artifact sets it per call)
// Tile and cluster are in cuBLASLt's orientation: the artifact computes row-major C = A*B as
// column-major C^T = B^T A^T, so cuBLASLt's M is our N and its N our M.
// The artifact (src/kernels/cublaslt_gemm.h) is host code calling cublasLtMatmul with exactly
// that configuration; whether cuBLASLt accepts it for a shape is cublasLtMatmulAlgoCheck's call at
// can_implement time. What is worth trying per shape: cublaslt_neighbourhood
// (src/baselines/cublaslt_space.hpp). No CUDA here: this file only writes and reads text.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"

namespace cudal2 {

inline constexpr std::string_view kCublasLtFamily = "cublaslt";

// The family's text fields in canonical order (splits, the runtime knob, last).
const std::vector<std::string>& cublaslt_fields();
KernelSpec default_cublaslt_spec();
std::string cublaslt_compile_text(const KernelSpec& s);
// Sets one field from its text; throws InputError naming the field. "splits" is not handled here.
void parse_cublaslt_field(KernelSpec& s, std::string_view key, std::string_view value);
// "" when the values are in the ranges cuBLASLt's enums allow; cuBLASLt itself decides the rest.
std::string invalid_reason_cublaslt(const KernelSpec& s);
// The artifact's source: #include "cublaslt_gemm.h" and the configuration as the type
// cudal2_cublaslt::Gemm<cudal2_cublaslt::Config<...>>, exported through the kernel C ABI. Carries
// `#define CUDAL2_LINK_CUBLASLT 1` (read by nothing but the JIT: it links the artifact with -lcublasLt).
std::string generate_cublaslt_source(const KernelSpec& s);

// cublasLtClusterShape_t <-> cluster M x N: {0,0} is AUTO; -1 / {-1,-1} where cuBLASLt has none.
int cublaslt_cluster_id(int m, int n);
std::pair<int, int> cublaslt_cluster_shape(int id);
// Every cluster shape id cuBLASLt 13.1 names (AUTO first).
const std::vector<int>& cublaslt_cluster_ids();

}  // namespace cudal2
