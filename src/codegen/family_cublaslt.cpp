#include "codegen/family_cublaslt.hpp"

#include <fmt/format.h>

#include <array>

#include "codegen/family.hpp"
#include "kernels/cublaslt_plan.h"

namespace cudal2 {

namespace {

using cudal2_lt::kClusterShapes;

int parse_nonneg(std::string_view v, std::string_view field) {
  const auto x = whole_number(v);
  if (!x || *x < 0) throw InputError(fmt::format("bad spec: {}='{}' is not a whole number >= 0", field, v));
  return *x;
}

std::string cluster_text(const KernelSpec& s) {
  if (s.cluster_m == 0 && s.cluster_n == 0) return "auto";
  return fmt::format("{}x{}", s.cluster_m, s.cluster_n);
}

}  // namespace

const std::vector<std::string>& cublaslt_fields() {
  static const std::vector<std::string> f{"algo",   "tile",  "stages",  "reduction", "swizzle",
                                          "custom", "inner", "cluster", "splits"};
  return f;
}

KernelSpec default_cublaslt_spec() {
  KernelSpec s;
  s.family = std::string(kCublasLtFamily);
  s.tile_m = s.tile_n = s.tile_k = 0;  // unused: the tile is lt_tile
  s.cluster_m = s.cluster_n = 0;       // auto
  s.stages = 0;
  return s;
}

std::string cublaslt_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} algo={} tile={} stages={} reduction={} swizzle={} custom={} inner={} cluster={}",
                     s.family, to_string(s.layout), to_string(s.accum), s.lt_algo, s.lt_tile, s.lt_stages,
                     s.lt_reduction, s.lt_swizzle, s.lt_custom, s.lt_inner, cluster_text(s));
}

void parse_cublaslt_field(KernelSpec& s, std::string_view key, std::string_view v) {
  if (key == "algo") {
    s.lt_algo = parse_nonneg(v, key);
  } else if (key == "tile") {
    s.lt_tile = parse_nonneg(v, key);
  } else if (key == "stages") {
    s.lt_stages = parse_nonneg(v, key);
  } else if (key == "reduction") {
    s.lt_reduction = parse_nonneg(v, key);
  } else if (key == "swizzle") {
    s.lt_swizzle = parse_nonneg(v, key);
  } else if (key == "custom") {
    s.lt_custom = parse_nonneg(v, key);
  } else if (key == "inner") {
    s.lt_inner = parse_nonneg(v, key);
  } else if (key == "cluster") {
    if (v == "auto") {
      s.cluster_m = s.cluster_n = 0;
      return;
    }
    const auto x = v.find('x');
    if (x == std::string_view::npos) throw InputError(fmt::format("bad spec: cluster='{}' is not auto or MxN", v));
    s.cluster_m = parse_nonneg(v.substr(0, x), key);
    s.cluster_n = parse_nonneg(v.substr(x + 1), key);
  } else {
    throw InputError(fmt::format("bad spec: unknown field '{}' for family cublaslt", key));
  }
}

std::string invalid_reason_cublaslt(const KernelSpec& s) {
  if (s.lt_algo < 0 || s.lt_tile < 0 || s.lt_stages < 0 || s.lt_custom < 0 || s.lt_inner < 0)
    return "algo, tile, stages, custom and inner are cuBLASLt enum values >= 0";
  // The inner and cluster shape ids are uint16_t in cuBLASLt; the others uint32_t / int32_t.
  if (s.lt_inner > 0xffff) return "inner shape id over 65535";
  if (s.lt_reduction != 0 && s.lt_reduction != 1 && s.lt_reduction != 2 && s.lt_reduction != 4)
    return fmt::format("reduction {} not 0 (none), 1 (in place), 2 (compute type) or 4 (output type)", s.lt_reduction);
  if (s.lt_swizzle != 0 && s.lt_swizzle != 1) return fmt::format("swizzle {} not 0 or 1", s.lt_swizzle);
  if (cublaslt_cluster_id(s.cluster_m, s.cluster_n) < 0)
    return fmt::format("cluster {}x{} is not a cuBLASLt cluster shape", s.cluster_m, s.cluster_n);
  if (s.splits < 1 || s.splits > 1024) return "splits must be 1..1024";
  if (s.raster != Raster::Heuristic || s.swizzle != 1 || s.decomposition != Decomposition::Heuristic)
    return "cublaslt takes no raster, decomposition or CUTLASS swizzle knobs (its swizzle is CTA swizzling)";
  return "";
}

// The configuration as template arguments of cudal2_cublaslt::Config (src/kernels/cublaslt_gemm.h),
// after the comment line the JIT's link marker (CUDAL2_LINK_CUBLASLT: it links -lcublasLt).
std::string generate_cublaslt_source(const KernelSpec& s) {
  std::string src = type_source(
      cublaslt_compile_text(s), "cublaslt_gemm.h",
      fmt::format("cudal2_cublaslt::Gemm<cudal2_cublaslt::Config<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}>>",
                  s.layout == Layout::TN, s.accum == Accum::F16, s.lt_algo, s.lt_tile, s.lt_stages, s.lt_reduction,
                  s.lt_swizzle, s.lt_custom, s.lt_inner, cublaslt_cluster_id(s.cluster_m, s.cluster_n)));
  return src.insert(src.find('\n') + 1, "#define CUDAL2_LINK_CUBLASLT 1\n");
}

int cublaslt_cluster_id(int m, int n) {
  for (const auto& c : kClusterShapes)
    if (c[1] == m && c[2] == n) return c[0];
  return -1;
}

std::pair<int, int> cublaslt_cluster_shape(int id) {
  for (const auto& c : kClusterShapes)
    if (c[0] == id) return {c[1], c[2]};
  return {-1, -1};
}

const std::vector<int>& cublaslt_cluster_ids() {
  static const std::vector<int> ids = [] {
    std::vector<int> v;
    for (const auto& c : kClusterShapes) v.push_back(c[0]);
    return v;
  }();
  return ids;
}

namespace {

// splits, the runtime knob, is the shared field; the others are cuBLASLt's.
void cublaslt_parse_field(KernelSpec& s, std::string_view key, std::string_view value) {
  if (key == "splits")
    parse_common_field(s, key, value);
  else
    parse_cublaslt_field(s, key, value);
}

std::vector<KernelSpec> enumerate_cublaslt(Layout, Accum, bool) {
  throw InputError(
      "the cublaslt family's space depends on the GPU and the shape: cublaslt_neighbourhood(), "
      "or `cudal2 lt-space --shape M,N,K`");
}

// cublasLtMatmulAlgoCheck decides, in the artifact's can_implement.
std::string cublaslt_shape_refusal(const KernelSpec&, const Shape&) { return ""; }

}  // namespace

const Family& cublaslt_family() {
  static const Family f{.name = kCublasLtFamily,
                        .listed = false,
                        .runs_in_judge = true,
                        .fields = cublaslt_fields,
                        .default_spec = default_cublaslt_spec,
                        .parse_field = cublaslt_parse_field,
                        .compile_text = cublaslt_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_cublaslt,
                        .enumerate = enumerate_cublaslt,
                        .shape_refusal = cublaslt_shape_refusal,
                        .generate_source = generate_cublaslt_source};
  return f;
}

}  // namespace cudal2
