#include "codegen/family_wgmma.hpp"

#include <fmt/format.h>

#include <utility>

#include "codegen/family.hpp"
#include "kernels/wgmma_plan.h"

namespace cudal2 {

namespace plan = cudal2_wgmma_plan;

// The explicit split counts the enumeration adds to each configuration, beside auto (0).
constexpr int kWgmmaSplits[] = {0, 2, 4, 8, 16};

const std::vector<std::string>& wgmma_fields() {
  static const std::vector<std::string> f{"tile", "cluster", "stages", "mainloop", "raster", "swizzle", "splits"};
  return f;
}

KernelSpec default_wgmma_spec() {
  KernelSpec s;
  s.family = std::string(kWgmmaFamily);
  s.tile_m = 128, s.tile_n = 256, s.tile_k = plan::kTileK;
  s.cluster_m = s.cluster_n = 1;
  s.stages = 4;
  return s;
}

// mainloop=cooperative (the default) is left out, like splits=1 below: the texts and store keys of
// the specs from before ping-pong stay as they were.
std::string wgmma_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} cluster={}x{} stages={}{}", s.family, to_string(s.layout),
                     to_string(s.accum), s.tile_m, s.tile_n, s.tile_k, s.cluster_m, s.cluster_n, s.stages,
                     s.mainloop == Mainloop::Pingpong ? " mainloop=pingpong" : "");
}

// splits=1 (data-parallel, the default) is left out, so the texts (and store keys) of the specs
// from before split-K stay as they were; splits=0 reads and prints as `auto`, like stages=auto.
std::string wgmma_text(const KernelSpec& s) {
  std::string t = fmt::format("{} | raster={} swizzle={}", wgmma_compile_text(s), to_string(s.raster), s.swizzle);
  if (s.splits == 0) return t + " splits=auto";
  if (s.splits != 1) t += fmt::format(" splits={}", s.splits);
  return t;
}

std::string invalid_reason_wgmma(const KernelSpec& s) {
  if (s.tile_m != 64 && s.tile_m != 128) return fmt::format("tile M {} not in {{64,128}}", s.tile_m);
  if (s.tile_n != 32 && s.tile_n != 64 && s.tile_n != 128 && s.tile_n != 192 && s.tile_n != 256)
    return fmt::format("tile N {} not in {{32,64,128,192,256}}", s.tile_n);
  if (s.tile_k != plan::kTileK) return fmt::format("tile K {} is not 64", s.tile_k);
  // 2x1: two CTAs along M share (multicast) the B tile; 1x2: two along N share the A tile.
  if (!((s.cluster_m == 1 && s.cluster_n == 1) || (s.cluster_m == 2 && s.cluster_n == 1) ||
        (s.cluster_m == 1 && s.cluster_n == 2)))
    return fmt::format("cluster {}x{} not one of 1x1, 2x1, 1x2", s.cluster_m, s.cluster_n);
  // A 32-wide row-major B tile is one 64-byte-swizzled box: a 2x1 cluster cannot share it in halves.
  if (s.tile_n == 32 && s.layout == Layout::NN && s.cluster_m == 2)
    return "tile N 32 in nn takes no 2x1 cluster (its B box cannot be split between two CTAs)";
  if (s.mainloop == Mainloop::WarpSpecialized)
    return "wgmma's mainloop is cooperative (consumers share a tile) or pingpong (they take tiles in turn)";
  const bool ping = s.mainloop == Mainloop::Pingpong;
  if (ping && !plan::pingpong_fits(s.tile_m, s.tile_n))
    return fmt::format("pingpong tile {}x{} over 128x128 or 64x256 (one warpgroup's accumulators)", s.tile_m, s.tile_n);
  if (ping && s.splits != 1) return "pingpong takes no split-K (splits=1)";
  // Small tiles take more stages (bytes in flight for bandwidth-bound shapes), up to what shared
  // memory holds (below) and the barriers' room.
  if (s.stages < 2 || s.stages > plan::kMaxStages) return fmt::format("stages must be 2..{}", plan::kMaxStages);
  if (plan::smem_bytes(s.tile_m, s.tile_n, s.stages, ping) > plan::kSmemBudget)
    return fmt::format("{} stages of {}x{} need {} KB of shared memory, over the 227 KB budget (at most {})", s.stages,
                       s.tile_m, s.tile_n, plan::smem_bytes(s.tile_m, s.tile_n, s.stages, ping) / 1024,
                       plan::max_stages(s.tile_m, s.tile_n, ping));
  if (s.swizzle != 1 && s.swizzle != 2 && s.swizzle != 4 && s.swizzle != 8) return "swizzle must be 1, 2, 4 or 8";
  if (s.decomposition != Decomposition::Heuristic)
    return "wgmma takes no decomposition knob (splits picks: 1 data-parallel, >1 split-K, auto)";
  if (s.splits < 0 || s.splits > plan::kMaxSplits) return "splits must be auto (0) or 1..64";
  if (s.warps_m || s.warps_n || s.warps_k) return "wgmma has no warps fields";
  return "";
}

std::vector<KernelSpec> enumerate_wgmma(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (auto mainloop : {Mainloop::Cooperative, Mainloop::Pingpong})
    for (int bm : {128, 64})
      for (int bn : {256, 192, 128, 64})
        for (auto [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}})
          for (int stages = 3; stages <= 6; ++stages) {
            KernelSpec s = default_wgmma_spec();
            s.layout = layout, s.accum = accum;
            s.tile_m = bm, s.tile_n = bn, s.stages = stages;
            s.cluster_m = cm, s.cluster_n = cn;
            s.mainloop = mainloop;
            if (!invalid_reason_wgmma(s).empty()) continue;
            if (!with_runtime_knobs) {
              out.push_back(s);
              continue;
            }
            for (auto r : {Raster::Heuristic, Raster::AlongM, Raster::AlongN})
              for (int sw : {1, 2, 4, 8}) {
                s.raster = r, s.swizzle = sw;
                out.push_back(s);
              }
            // Split-K, with the default tile order (few tiles: the order hardly matters); explicit
            // counts run only where shape_refusal lets them (fewer tiles than SMs). Not ping-pong:
            // it is for many tiles per SM.
            if (mainloop == Mainloop::Pingpong) continue;
            s.raster = Raster::Heuristic, s.swizzle = 1;
            for (int sp : kWgmmaSplits) {
              s.splits = sp;
              out.push_back(s);
            }
          }
  return out;
}

std::string wgmma_shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (!plan::tma_rows_ok(shape.n, shape.k, s.layout == Layout::TN))
    return fmt::format("wgmma {} needs K{} to be a multiple of 8 (16-byte rows for TMA); got {}", to_string(s.layout),
                       s.layout == Layout::TN ? "" : " and N", shape.str());
  if (s.splits > 1) {
    // As the artifact: no more splits than K tiles, and explicit split counts only where every
    // (tile, split) fits in one wave (splits=auto runs everywhere: it resolves to 1 there).
    if (s.splits > plan::k_tiles(shape.k))
      return fmt::format("splits={} exceeds the {} K tiles of {}", s.splits, plan::k_tiles(shape.k), shape.str());
    const auto units =
        plan::cluster_units(plan::tiles(shape.m, shape.n, s.tile_m, s.tile_n), s.cluster_m, s.cluster_n).count();
    const int cluster = s.cluster_m * s.cluster_n;
    if (!plan::splits_fit_wave(units, s.splits, plan::kSplitSms / cluster))
      return fmt::format("explicit split-K only where tiles x splits fit in one wave of {} CTAs; {} has {} x {}",
                         plan::kSplitSms, shape.str(), units * cluster, s.splits);
  }
  return "";
}

// The configuration by name, the fields of cudal2_wgmma::Config (src/kernels/wgmma_tile.cuh).
std::string generate_wgmma_source(const KernelSpec& s) {
  return named_config_source(wgmma_compile_text(s), "wgmma_gemm.cuh", "cudal2_wgmma::Gemm",
                             {{"kLayoutTN", s.layout == Layout::TN},
                              {"kAccumF16", s.accum == Accum::F16},
                              {"kTileM", s.tile_m},
                              {"kTileN", s.tile_n},
                              {"kClusterM", s.cluster_m},
                              {"kClusterN", s.cluster_n},
                              {"kStages", s.stages},
                              {"kPingpong", s.mainloop == Mainloop::Pingpong}});
}

namespace {
// splits=auto (0): the artifact picks per shape.
void wgmma_parse_field(KernelSpec& s, std::string_view key, std::string_view value) {
  if (key == "splits" && value == "auto")
    s.splits = 0;
  else
    parse_common_field(s, key, value);
}
}  // namespace

const Family& wgmma_family() {
  static const Family f{.name = kWgmmaFamily,
                        .fields = wgmma_fields,
                        .default_spec = default_wgmma_spec,
                        .parse_field = wgmma_parse_field,
                        .compile_text = wgmma_compile_text,
                        .text = wgmma_text,
                        .invalid_reason = invalid_reason_wgmma,
                        .enumerate = enumerate_wgmma,
                        .shape_refusal = wgmma_shape_refusal,
                        .generate_source = generate_wgmma_source};
  return f;
}

}  // namespace cudal2
