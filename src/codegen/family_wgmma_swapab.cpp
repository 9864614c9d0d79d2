// Family wgmma_swapab: our Hopper-native kernel for small M (src/kernels/wgmma_swapab.cuh):
// swap-AB so that M lands on wgmma's N (8..64), TMA and a producer warp, split-K as a cluster of
// CTAs reduced through distributed shared memory.
//   "wgmma_swapab tn f32 tile=16x128x64 stages=8 | splits=4"
//   tile     M 8, 16, 32 or 64 (wgmma's N) x N 64 or 128 (64 per consumer warpgroup) x K 64
//   stages   2..16 K tiles in flight, as many as fit in 227 KB beside the reduction tile
//   cluster  2x1: neighbouring M tiles share the B tile, 1x2 (tile M >= 16): neighbouring N tiles
//            share the A tile (each CTA loads half and multicasts it); written only when not 1x1,
//            takes splits auto or 1. Valid from spec lists; not enumerated.
//   splits   runtime knob: 1, 2, 4 or 8 CTAs of a cluster share the tile's K; auto (0) picks the
//            fewest that cover the SMs (wgmma_swapab_plan.h)
// Runs any M, N with K % 8 == 0 (and N % 8 == 0 for nn) and 16-byte-aligned A and B (TMA rows);
// the search offers it for M <= 256 only.
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "kernels/wgmma_swapab_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_swapab_plan;

// The search's scope: beyond this M the ordinary orientation (wgmma, sm90_cutlass) fills wgmma's M.
constexpr int64_t kMaxSearchM = 256;

const std::vector<std::string>& swapab_fields() {
  static const std::vector<std::string> f{"tile", "cluster", "stages", "splits"};
  return f;
}

KernelSpec swapab_default_spec() {
  KernelSpec s;
  s.family = "wgmma_swapab";
  s.tile_m = 16, s.tile_n = 128, s.tile_k = plan::kTileK;
  s.stages = 8;
  s.splits = 0;
  return s;
}

std::string swapab_compile_text(const KernelSpec& s) {
  const std::string cluster =
      s.cluster_m == 1 && s.cluster_n == 1 ? "" : fmt::format(" cluster={}x{}", s.cluster_m, s.cluster_n);
  return fmt::format("{} {} {} tile={}x{}x{}{} stages={}", s.family, to_string(s.layout), to_string(s.accum), s.tile_m,
                     s.tile_n, s.tile_k, cluster, s.stages);
}

std::string swapab_text(const KernelSpec& s) {
  return s.splits == 0 ? swapab_compile_text(s) + " | splits=auto"
                       : fmt::format("{} | splits={}", swapab_compile_text(s), s.splits);
}

void swapab_parse_field(KernelSpec& s, std::string_view key, std::string_view value) {
  if (key == "splits" && value == "auto")
    s.splits = 0;
  else
    parse_common_field(s, key, value);
}

std::string invalid_reason_swapab(const KernelSpec& s) {
  if (!plan::tile_m_ok(s.tile_m)) return fmt::format("tile M {} not in {{8,16,32,64}}", s.tile_m);
  if (!plan::tile_n_ok(s.tile_n)) return fmt::format("tile N {} not in {{64,128}}", s.tile_n);
  if (s.tile_k != plan::kTileK) return fmt::format("tile K {} is not 64", s.tile_k);
  if (s.stages < 2 || s.stages > plan::max_stages(s.tile_m, s.tile_n))
    return fmt::format("stages must be 2..{} for tile {}x{} (shared memory)", plan::max_stages(s.tile_m, s.tile_n),
                       s.tile_m, s.tile_n);
  if (!plan::cluster_ok(s.cluster_m, s.cluster_n))
    return fmt::format("cluster {}x{} not one of 1x1, 2x1, 1x2", s.cluster_m, s.cluster_n);
  if (!plan::cluster_tile_ok(s.cluster_m, s.cluster_n, s.tile_m))
    return "cluster 1x2 needs tile M >= 16 (each CTA loads half of the A tile, a whole swizzle atom)";
  if (s.cluster_m * s.cluster_n > 1 && s.splits > 1)
    return "a wgmma_swapab cluster shares an operand: splits must be auto or 1";
  if (s.warps_m || s.warps_n || s.warps_k) return "wgmma_swapab has no warps fields";
  if (auto why = splits_only_knobs_reason(s); !why.empty()) return why;
  if (s.splits != 0 && !plan::splits_ok(s.splits)) return "splits must be auto, 1, 2, 4 or 8";
  return "";
}

// Tiles {8,16,32,64} x {64,128}, stages {4, 8, 12} where they fit; with knobs, splits
// {auto, 1, 2, 4, 8}.
std::vector<KernelSpec> enumerate_swapab(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int bm : {8, 16, 32, 64})
    for (int bn : {128, 64})
      for (int stages : {4, 8, 12}) {
        KernelSpec s = swapab_default_spec();
        s.layout = layout, s.accum = accum;
        s.tile_m = bm, s.tile_n = bn, s.stages = stages;
        if (!invalid_reason_swapab(s).empty()) continue;
        for (int sp : {0, 1, 2, 4, 8}) {
          s.splits = sp;
          out.push_back(s);
          if (!with_runtime_knobs) break;
        }
      }
  return out;
}

std::string swapab_shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (!plan::tma_rows_ok(shape.n, shape.k, s.layout == Layout::TN))
    return fmt::format("wgmma_swapab {} needs K{} to be a multiple of 8 (16-byte rows for TMA); got {}",
                       to_string(s.layout), s.layout == Layout::TN ? "" : " and N", shape.str());
  if (shape.m > kMaxSearchM)
    return fmt::format("wgmma_swapab is searched for M <= {} only; got {}", kMaxSearchM, shape.str());
  if (s.splits > plan::k_tiles(shape.k))
    return fmt::format("splits={} exceeds the {} K tiles of {}", s.splits, plan::k_tiles(shape.k), shape.str());
  return "";
}

// The configuration by name, the fields of cudal2_wgmma_swapab::Config (src/kernels/wgmma_swapab.cuh).
// The cluster fields only for a pair: a configuration without one keeps its source.
std::string generate_swapab_source(const KernelSpec& s) {
  std::vector<ConfigField> fields{{"kLayoutTN", s.layout == Layout::TN},
                                  {"kAccumF16", s.accum == Accum::F16},
                                  {"kTileM", s.tile_m},
                                  {"kTileN", s.tile_n},
                                  {"kStages", s.stages}};
  if (s.cluster_m * s.cluster_n > 1) {
    fields.emplace_back("kClusterM", s.cluster_m);
    fields.emplace_back("kClusterN", s.cluster_n);
  }
  return named_config_source(swapab_compile_text(s), "wgmma_swapab.cuh", "cudal2_wgmma_swapab::Gemm", fields);
}

}  // namespace

const Family& wgmma_swapab_family() {
  static const Family f{.name = "wgmma_swapab",
                        .fields = swapab_fields,
                        .default_spec = swapab_default_spec,
                        .parse_field = swapab_parse_field,
                        .compile_text = swapab_compile_text,
                        .text = swapab_text,
                        .invalid_reason = invalid_reason_swapab,
                        .enumerate = enumerate_swapab,
                        .shape_refusal = swapab_shape_refusal,
                        .generate_source = generate_swapab_source};
  return f;
}

}  // namespace cudal2
