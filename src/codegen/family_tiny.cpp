// Family tiny: our register-only kernel for the tiniest shapes (src/kernels/tiny_gemm.cuh): mma
// fragments straight from global memory, K optionally split across a CTA's warps (kwarps) and
// reduced through shared memory; runs any shape.
//   "tiny nn f32 tile=32x32x64 warps=1x1 kwarps=2 | splits=1"
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/family.hpp"
#include "codegen/family_tiny.hpp"
#include "kernels/mma_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_plan;

const std::vector<std::string>& tiny_fields() {
  static const std::vector<std::string> f{"tile", "warps", "kwarps", "splits"};
  return f;
}

KernelSpec tiny_default_spec() {
  KernelSpec s;
  s.family = "tiny";
  s.tile_m = 32, s.tile_n = 32, s.tile_k = 64, s.warps_m = 1, s.warps_n = 1, s.warps_k = 1, s.stages = 0;
  return s;
}

std::string tiny_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} kwarps={}", s.family, to_string(s.layout), to_string(s.accum),
                     s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.warps_k);
}

}  // namespace

std::string tiny_tile_invalid_reason(const KernelSpec& s) {
  if (!is_pow2(s.warps_m) || !is_pow2(s.warps_n) || !is_pow2(s.warps_k) || s.warps_m * s.warps_n * s.warps_k > 8)
    return fmt::format("warps {}x{} kwarps {}: powers of two, at most 8 warps", s.warps_m, s.warps_n, s.warps_k);
  if (s.tile_m % s.warps_m || s.tile_n % s.warps_n) return "tile not divisible by the warps";
  const int wtm = s.tile_m / s.warps_m, wtn = s.tile_n / s.warps_n;
  // Fragments come straight from global memory into registers: small warp tiles only.
  if (wtm != 16 && wtm != 32) return fmt::format("warp tile M {} not 16 or 32", wtm);
  if (wtn != 8 && wtn != 16 && wtn != 32) return fmt::format("warp tile N {} not 8, 16 or 32", wtn);
  // A k-block is 32 wide: one 16-byte load per row and lane feeds two k16 steps.
  if (s.tile_k != 32 && s.tile_k != 64 && s.tile_k != 128)
    return fmt::format("tile K {} not in {{32,64,128}}", s.tile_k);
  if (plan::tiny_fragment_regs(wtm, wtn, s.tile_k) > plan::kMaxTinyFragmentRegs)
    return fmt::format("tile K {} with a {}x{} warp tile: over {} fragment registers per k-block", s.tile_k, wtm, wtn,
                       plan::kMaxTinyFragmentRegs);
  return splits_only_knobs_reason(s);
}

std::vector<KernelSpec> enumerate_tiny_tiles(Layout layout, Accum accum) {
  std::vector<KernelSpec> out;
  const std::vector<std::tuple<int, int, int>> warps{{1, 1, 1}, {1, 1, 2}, {1, 1, 4}, {1, 1, 8}, {1, 2, 1}, {1, 2, 2},
                                                     {1, 2, 4}, {2, 1, 1}, {2, 1, 2}, {2, 1, 4}, {2, 2, 1}, {2, 2, 2}};
  for (auto [wtm, wtn] : std::vector<std::pair<int, int>>{{16, 16}, {16, 32}, {32, 16}, {32, 32}})
    for (auto [wm, wn, wk] : warps)
      for (int bk : {32, 64}) {
        KernelSpec s = tiny_default_spec();
        s.layout = layout;
        s.accum = accum;
        s.tile_m = wtm * wm, s.tile_n = wtn * wn, s.tile_k = bk;
        s.warps_m = wm, s.warps_n = wn, s.warps_k = wk;
        if (tiny_tile_invalid_reason(s).empty()) out.push_back(s);
      }
  return out;
}

namespace {

std::string invalid_reason_tiny(const KernelSpec& s) {
  if (auto why = tiny_tile_invalid_reason(s); !why.empty()) return why;
  if (plan::tiny_smem_bytes(s.tile_m, s.tile_n, s.warps_k) > plan::kStaticSmemBudget)
    return "kwarps reduction buffer over 48 KB of static shared memory";
  if (s.splits != 1) return "tiny takes splits=1 only (K is split across a CTA's warps: kwarps)";
  return "";
}

// 96 configurations: 4 warp tiles x 12 warp layouts x tile K 32/64; splits=1 only (no runtime
// knobs to add).
std::vector<KernelSpec> enumerate_tiny(Layout layout, Accum accum, bool /*with_runtime_knobs*/) {
  std::vector<KernelSpec> out;
  for (const KernelSpec& s : enumerate_tiny_tiles(layout, accum))
    if (invalid_reason_tiny(s).empty()) out.push_back(s);
  return out;
}

std::string tiny_shape_refusal(const KernelSpec&, const Shape&) { return ""; }  // any shape

// The configuration as template arguments of cudal2_tiny::Config (src/kernels/tiny_gemm.cuh).
std::string generate_tiny_source(const KernelSpec& s) {
  return type_source(
      tiny_compile_text(s), "tiny_gemm.cuh",
      fmt::format("cudal2_tiny::Gemm<cudal2_tiny::Config<{}, {}, {}, {}, {}, {}, {}, {}>>", s.layout == Layout::TN,
                  s.accum == Accum::F16, s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.warps_k));
}

}  // namespace

const Family& tiny_family() {
  static const Family f{.name = "tiny",
                        .fields = tiny_fields,
                        .default_spec = tiny_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = tiny_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_tiny,
                        .enumerate = enumerate_tiny,
                        .shape_refusal = tiny_shape_refusal,
                        .generate_source = generate_tiny_source};
  return f;
}

}  // namespace cudal2
