// Family mma: our raw-CUDA cp.async + ldmatrix + mma.sync kernel with in-launch split-K
// (src/kernels/mma_gemm.cuh), for small and skinny shapes; runs any shape (unaligned ones on a
// slower bounds-checked path).
//   "mma nn f32 tile=64x64x32 warps=2x2 stages=3 | splits=1"
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/family.hpp"
#include "kernels/mma_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_plan;

const std::vector<std::string>& mma_fields() {
  static const std::vector<std::string> f{"tile", "warps", "stages", "splits"};
  return f;
}

KernelSpec mma_default_spec() {
  KernelSpec s;
  s.family = "mma";
  s.tile_m = 64, s.tile_n = 64, s.tile_k = 32, s.warps_m = 2, s.warps_n = 2, s.stages = 3;
  return s;
}

std::string mma_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} stages={}", s.family, to_string(s.layout), to_string(s.accum),
                     s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.stages);
}

std::string invalid_reason_mma(const KernelSpec& s) {
  if (s.tile_m != 16 && s.tile_m != 32 && s.tile_m != 64 && s.tile_m != 128)
    return fmt::format("tile M {} not in {{16,32,64,128}}", s.tile_m);
  if (!is_pow2(s.tile_n) || s.tile_n < 16 || s.tile_n > 256)
    return fmt::format("tile N {} not in {{16,32,64,128,256}}", s.tile_n);
  if (s.tile_k != 32 && s.tile_k != 64) return fmt::format("tile K {} not in {{32,64}}", s.tile_k);
  if (!is_pow2(s.warps_m) || !is_pow2(s.warps_n) || s.warps_m * s.warps_n > 8)
    return fmt::format("warps {}x{}: powers of two, at most 8 warps", s.warps_m, s.warps_n);
  // ldmatrix.x4 feeds 16 rows of A and two n8 tiles of B: warp tiles in units of 16x16.
  const int wtm = s.tile_m / s.warps_m, wtn = s.tile_n / s.warps_n;
  if (wtm < 16 || wtn < 16) return fmt::format("warp tile {}x{} below 16x16", wtm, wtn);
  // fp32 accumulators of a 64x32 warp tile are 64 registers a thread; ptxas spilled 64x64 ones.
  if (plan::acc_floats_per_thread(wtm, wtn) > plan::kMaxAccFloats)
    return fmt::format("warp tile {}x{} over 64x32 elements (accumulator registers)", wtm, wtn);
  if (s.stages < 2 || s.stages > 8) return "stages must be 2..8";
  const int smem = plan::mma_smem_bytes(s.tile_m, s.tile_n, s.tile_k, s.stages, s.layout == Layout::TN);
  // 1 KB left for the kernel's static shared memory (the split-K flag, alignment).
  if (smem + 1024 > plan::kSmemBudget)
    return fmt::format("{} stages need {} KB of shared memory, over the 227 KB budget", s.stages, smem / 1024);
  if (auto why = splits_only_knobs_reason(s); !why.empty()) return why;
  if (s.splits < 1 || s.splits > plan::kMaxSplits) return "splits must be 1..64";
  return "";
}

// The warp layout for a CTA tile: about one 32x32 warp tile per 1024 outputs (at most 8 warps),
// split between M and N to keep warp tiles square (ties: more warps along N).
std::pair<int, int> mma_warps_for(int bm, int bn) {
  const int nw = std::clamp(bm * bn / 1024, 1, 8);
  std::pair<int, int> best{0, 0};
  int best_skew = 1 << 30;
  for (int wm = 1; wm <= nw; wm *= 2) {
    const int wn = nw / wm, wtm = bm / wm, wtn = bn / wn;
    if (wtm < 16 || wtn < 16 || wtm % 16 || wtn % 16) continue;
    const int skew = std::abs(std::countr_zero(unsigned(wtm)) - std::countr_zero(unsigned(wtn)));
    if (skew < best_skew) best = {wm, wn}, best_skew = skew;
  }
  return best;
}

// 57 compile-time configurations (19 CTA tiles, each with one warp layout, x 3 (tile K, stages):
// 32/4, 64/3, 64/5), x 6 split counts {1,2,4,8,16,32} with knobs.
std::vector<KernelSpec> enumerate_mma(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int bm : {16, 32, 64, 128})
    for (int bn : {16, 32, 64, 128, 256})
      // Pipeline depth: skinny shapes stream one operand and are bound by the bytes in flight.
      for (auto [bk, stages] : std::vector<std::pair<int, int>>{{32, 4}, {64, 3}, {64, 5}}) {
        KernelSpec s = mma_default_spec();
        s.layout = layout;
        s.accum = accum;
        s.tile_m = bm, s.tile_n = bn, s.tile_k = bk;
        std::tie(s.warps_m, s.warps_n) = mma_warps_for(bm, bn);
        s.stages = stages;
        if (!invalid_reason_mma(s).empty()) continue;
        for (int sp : {1, 2, 4, 8, 16, 32}) {
          s.splits = sp;
          out.push_back(s);
          if (!with_runtime_knobs) break;
        }
      }
  return out;
}

std::string mma_shape_refusal(const KernelSpec&, const Shape&) { return ""; }  // any shape

// The configuration as template arguments of cudal2_mma::Config (src/kernels/mma_gemm.cuh).
std::string generate_mma_source(const KernelSpec& s) {
  return type_source(
      mma_compile_text(s), "mma_gemm.cuh",
      fmt::format("cudal2_mma::Gemm<cudal2_mma::Config<{}, {}, {}, {}, {}, {}, {}, {}>>", s.layout == Layout::TN,
                  s.accum == Accum::F16, s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.stages));
}

}  // namespace

const Family& mma_family() {
  static const Family f{.name = "mma",
                        .fields = mma_fields,
                        .default_spec = mma_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = mma_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_mma,
                        .enumerate = enumerate_mma,
                        .shape_refusal = mma_shape_refusal,
                        .generate_source = generate_mma_source};
  return f;
}

}  // namespace cudal2
