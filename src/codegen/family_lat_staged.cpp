// Family lat_staged: few output tiles with a long K in one launch (src/kernels/lat_staged_gemm.cuh):
// mma's cp.async shared-memory mainloop (a CTA's K slice requested up front where it fits), each
// stage's k steps split across kwarps warps, K split across the CTAs of one cluster (splits, a
// runtime knob up to 16) with the partial tiles reduced through distributed shared memory,
// launched with programmatic dependent launch; runs any shape.
//   "lat_staged tn f32 tile=32x32x64 warps=1x1 kwarps=4 stages=8 | splits=16"
//   "lat_staged nn f32 tile=128x128x64 warps=4x2 kwarps=2 stages=4 | splits=8"
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "kernels/mma_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_plan;

// Rings deep enough to request a long K slice whole. (Measured on the H100: a ring that requests
// the slice up front beats one stage in flight, but a larger ring costs launch time of its own,
// 216 KB about 0.5-1.5 us more than 36 KB; bench/results/h100/lat-staged/.)
constexpr int kMaxStages = 32;
constexpr int kMaxWarps = 16;  // 512 threads: 128 registers a thread at one CTA per SM

const std::vector<std::string>& lat_staged_fields() {
  static const std::vector<std::string> f{"tile", "warps", "kwarps", "stages", "splits"};
  return f;
}

KernelSpec lat_staged_default_spec() {
  KernelSpec s;
  s.family = "lat_staged";
  s.tile_m = 32, s.tile_n = 32, s.tile_k = 64, s.warps_m = 2, s.warps_n = 2, s.warps_k = 1, s.stages = 8;
  return s;
}

std::string lat_staged_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} kwarps={} stages={}", s.family, to_string(s.layout),
                     to_string(s.accum), s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.warps_k, s.stages);
}

std::string invalid_reason_lat_staged(const KernelSpec& s) {
  if (s.tile_m != 16 && s.tile_m != 32 && s.tile_m != 64 && s.tile_m != 128)
    return fmt::format("tile M {} not in {{16,32,64,128}}", s.tile_m);
  if (!is_pow2(s.tile_n) || s.tile_n < 16 || s.tile_n > 128)
    return fmt::format("tile N {} not in {{16,32,64,128}}", s.tile_n);
  if (s.tile_k != 32 && s.tile_k != 64 && s.tile_k != 128)
    return fmt::format("tile K {} not in {{32,64,128}}", s.tile_k);
  if (!is_pow2(s.warps_m) || !is_pow2(s.warps_n) || s.warps_m * s.warps_n > 8)
    return fmt::format("warps {}x{}: powers of two, at most 8 warps", s.warps_m, s.warps_n);
  if (s.warps_k != 1 && s.warps_k != 2 && s.warps_k != 4 && s.warps_k != 8)
    return fmt::format("kwarps {} not in {{1,2,4,8}}", s.warps_k);
  if (s.tile_k / 16 % s.warps_k != 0)
    return fmt::format("kwarps {} do not split tile K {}'s 16-wide steps evenly", s.warps_k, s.tile_k);
  if (s.warps_m * s.warps_n * s.warps_k > kMaxWarps)
    return fmt::format("{} warps (warps x kwarps), over {}", s.warps_m * s.warps_n * s.warps_k, kMaxWarps);
  // ldmatrix.x4 feeds 16 rows of A and two n8 tiles of B: warp tiles in units of 16x16.
  const int wtm = s.tile_m / s.warps_m, wtn = s.tile_n / s.warps_n;
  if (wtm < 16 || wtn < 16 || wtm % 16 || wtn % 16) return fmt::format("warp tile {}x{}: multiples of 16x16", wtm, wtn);
  if (plan::acc_floats_per_thread(wtm, wtn) > plan::kMaxAccFloats)
    return fmt::format("warp tile {}x{} over 64x32 elements (accumulator registers)", wtm, wtn);
  if (s.stages < 2 || s.stages > kMaxStages) return fmt::format("stages {} not in 2..{}", s.stages, kMaxStages);
  const int smem =
      plan::lat_staged_smem_bytes(s.tile_m, s.tile_n, s.tile_k, s.stages, s.layout == Layout::TN, s.warps_k);
  if (smem + 1024 > plan::kSmemBudget)
    return fmt::format("{} stages need {} KB of shared memory, over the 227 KB budget", s.stages, smem / 1024);
  if (auto why = splits_only_knobs_reason(s); !why.empty()) return why;
  if (s.splits < 1 || s.splits > plan::kMaxLatSplits) return "splits must be 1..16 (the CTAs of one cluster)";
  return "";
}

// CTA tiles from 32x32 to 128x128, each with one warp layout (4 warps up to 64x64, 8 above:
// warp tiles of 16x16 to 32x64), x (tile K, stages) in {(64, 4), (64, 8), (32, 8)}, x kwarps
// {1, 2, 4} (at most 16 warps, a stage's k steps split evenly), x split counts {1, 2, 4, 8, 16}
// with knobs.
std::vector<KernelSpec> enumerate_lat_staged(Layout layout, Accum accum, bool with_runtime_knobs) {
  struct TileWarps {
    int bm, bn, wm, wn;
  };
  static const std::vector<TileWarps> tiles{{32, 32, 2, 2},  {32, 64, 2, 2},  {64, 32, 2, 2},  {64, 64, 2, 2},
                                            {64, 128, 2, 4}, {128, 64, 4, 2}, {128, 128, 4, 2}};
  std::vector<KernelSpec> out;
  for (const auto& t : tiles)
    for (auto [bk, stages] : {std::pair{64, 4}, std::pair{64, 8}, std::pair{32, 8}})
      for (int kw : {1, 2, 4}) {
        KernelSpec s = lat_staged_default_spec();
        s.layout = layout, s.accum = accum;
        s.tile_m = t.bm, s.tile_n = t.bn, s.tile_k = bk, s.warps_m = t.wm, s.warps_n = t.wn, s.warps_k = kw;
        s.stages = stages;
        if (!invalid_reason_lat_staged(s).empty()) continue;
        for (int sp : {1, 2, 4, 8, 16}) {
          s.splits = sp;
          out.push_back(s);
          if (!with_runtime_knobs) break;
        }
      }
  return out;
}

std::string lat_staged_shape_refusal(const KernelSpec&, const Shape&) { return ""; }  // any shape

// The configuration as template arguments of cudal2_lat_staged::Config (src/kernels/lat_staged_gemm.cuh).
std::string generate_lat_staged_source(const KernelSpec& s) {
  return type_source(
      lat_staged_compile_text(s), "lat_staged_gemm.cuh",
      fmt::format("cudal2_lat_staged::Gemm<cudal2_lat_staged::Config<{}, {}, {}, {}, {}, {}, {}, {}, {}>>",
                  s.layout == Layout::TN, s.accum == Accum::F16, s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n,
                  s.warps_k, s.stages));
}

}  // namespace

const Family& lat_staged_family() {
  static const Family f{.name = "lat_staged",
                        .fields = lat_staged_fields,
                        .default_spec = lat_staged_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = lat_staged_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_lat_staged,
                        .enumerate = enumerate_lat_staged,
                        .shape_refusal = lat_staged_shape_refusal,
                        .generate_source = generate_lat_staged_source};
  return f;
}

}  // namespace cudal2
