// Family lat: our latency-first kernel for problems that take a few microseconds
// (src/kernels/lat_gemm.cuh): tiny's register-only mainloop, launched with programmatic dependent
// launch, K split across a CTA's warps (kwarps) and across the CTAs of one cluster (splits, a
// runtime knob up to 16) with the partial tiles reduced through distributed shared memory in the
// same launch, or across groups of clusters (splits 24..128) whose sums meet in the workspace;
// runs any shape.
//   "lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=8"
//   "lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 stages=4 | splits=2"  (4 k-blocks in flight per warp)
//   "lat tn f32 tile=32x32x64 warps=1x1 kwarps=8 | splits=64"  (8 clusters of 8 per output tile)
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "codegen/family_tiny.hpp"
#include "kernels/mma_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_plan;

const std::vector<std::string>& lat_fields() {
  static const std::vector<std::string> f{"tile", "warps", "kwarps", "stages", "splits"};
  return f;
}

KernelSpec lat_default_spec() {
  KernelSpec s;
  s.family = "lat";
  s.tile_m = 32, s.tile_n = 32, s.tile_k = 64, s.warps_m = 1, s.warps_n = 1, s.warps_k = 1, s.stages = 2;
  return s;
}

// stages (k-blocks in flight per warp) is written only when it is not the default 2, so the texts
// (and hashes) of the two-deep kernels stay those they were measured and stored under.
std::string lat_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} kwarps={}{}", s.family, to_string(s.layout),
                     to_string(s.accum), s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.warps_k,
                     s.stages == 2 ? std::string() : fmt::format(" stages={}", s.stages));
}

std::string invalid_reason_lat(const KernelSpec& s) {
  if (auto why = tiny_tile_invalid_reason(s); !why.empty()) return why;
  if (plan::lat_smem_bytes(s.tile_m, s.tile_n, s.warps_k) > plan::kStaticSmemBudget)
    return "reduction buffer over 48 KB of static shared memory";
  if (s.stages < 2 || s.stages > 8) return fmt::format("stages {} not in 2..8 (k-blocks in flight per warp)", s.stages);
  // tiny's register budget is two k-blocks of at most kMaxTinyFragmentRegs each.
  const int regs = plan::tiny_fragment_regs(s.tile_m / s.warps_m, s.tile_n / s.warps_n, s.tile_k) * s.stages;
  if (regs > 2 * plan::kMaxTinyFragmentRegs)
    return fmt::format("{} stages of this warp tile hold {} fragment registers, over {}", s.stages, regs,
                       2 * plan::kMaxTinyFragmentRegs);
  if (const char* why = plan::lat_splits_refusal(s.splits)) return why;
  return "";
}

// tiny's 96 tile configurations x stages {2, 4} where the registers allow (4 only for warp
// tiles of at most 32 fragment registers per k-block) x split counts {1, 2, 4, 8, 16} (one
// cluster) and {32, 64, 128} (groups of clusters, for a few tiles with a long K) with knobs.
std::vector<KernelSpec> enumerate_lat(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (KernelSpec s : enumerate_tiny_tiles(layout, accum))
    for (int stages : {2, 4}) {
      s.family = "lat";
      s.stages = stages;
      if (!invalid_reason_lat(s).empty()) continue;
      for (int sp : {1, 2, 4, 8, 16, 32, 64, 128}) {
        s.splits = sp;
        out.push_back(s);
        if (!with_runtime_knobs) break;
      }
      s.splits = 1;
    }
  return out;
}

std::string lat_shape_refusal(const KernelSpec&, const Shape&) { return ""; }  // any shape

// The configuration as template arguments of cudal2_lat::Config (src/kernels/lat_gemm.cuh).
std::string generate_lat_source(const KernelSpec& s) {
  return type_source(lat_compile_text(s), "lat_gemm.cuh",
                     fmt::format("cudal2_lat::Gemm<cudal2_lat::Config<{}, {}, {}, {}, {}, {}, {}, {}{}>>",
                                 s.layout == Layout::TN, s.accum == Accum::F16, s.tile_m, s.tile_n, s.tile_k, s.warps_m,
                                 s.warps_n, s.warps_k, s.stages == 2 ? std::string() : fmt::format(", {}", s.stages)));
}

}  // namespace

const Family& lat_family() {
  static const Family f{.name = "lat",
                        .fields = lat_fields,
                        .default_spec = lat_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = lat_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_lat,
                        .enumerate = enumerate_lat,
                        .shape_refusal = lat_shape_refusal,
                        .generate_source = generate_lat_source};
  return f;
}

}  // namespace cudal2
