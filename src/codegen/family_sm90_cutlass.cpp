// Family sm90_cutlass: CUTLASS 3.x SM90 GEMMs in CUTLASS's vocabulary (TileShape, ClusterShape,
// KernelSchedule, EpilogueSchedule, TileScheduler), instantiated by src/kernels/sm90_cutlass_gemm.cuh.
//   "sm90_cutlass nn f32 tile=128x128x64 cluster=1x1 mainloop=cooperative epilogue=tma
//    scheduler=persistent stages=auto | raster=heuristic swizzle=1 decomposition=heuristic splits=1"
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/family.hpp"

namespace cudal2 {

namespace {

constexpr int kSmemBudget = 227 * 1024;  // H100 max dynamic shared memory per block

const std::vector<std::string>& sm90_fields() {
  static const std::vector<std::string> f{"tile",   "cluster", "mainloop",      "epilogue", "scheduler",
                                          "stages", "raster",  "decomposition", "swizzle",  "splits"};
  return f;
}

KernelSpec sm90_default_spec() { return KernelSpec{}; }

// stages=auto (0): as many as fit (StageCountAutoCarveout).
void sm90_parse_field(KernelSpec& s, std::string_view key, std::string_view value) {
  if (key == "stages" && value == "auto")
    s.stages = 0;
  else
    parse_common_field(s, key, value);
}

std::string sm90_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} cluster={}x{} mainloop={} epilogue={} scheduler={} stages={}", s.family,
                     to_string(s.layout), to_string(s.accum), s.tile_m, s.tile_n, s.tile_k, s.cluster_m, s.cluster_n,
                     to_string(s.mainloop), to_string(s.epilogue), to_string(s.scheduler),
                     s.stages ? std::to_string(s.stages) : "auto");
}

std::string sm90_text(const KernelSpec& s) {
  return fmt::format("{} | raster={} swizzle={} decomposition={} splits={}", sm90_compile_text(s), to_string(s.raster),
                     s.swizzle, to_string(s.decomposition), s.splits);
}

std::string invalid_reason_sm90(const KernelSpec& s) {
  // WGMMA: M in units of 64 per warpgroup, N a multiple of 8 up to 256 (16 for our tiles);
  // K: 16 per instruction, 64 fp16 = one 128-byte swizzle row.
  if (s.tile_m != 64 && s.tile_m != 128 && s.tile_m != 256)
    return fmt::format("tile M {} not in {{64,128,256}}", s.tile_m);
  if (s.tile_n < 16 || s.tile_n > 256 || s.tile_n % 16)
    return fmt::format("tile N {} not a multiple of 16 in 16..256", s.tile_n);
  if (s.tile_k != 32 && s.tile_k != 64 && s.tile_k != 128)
    return fmt::format("tile K {} not in {{32,64,128}}", s.tile_k);
  if (s.cluster_m < 1 || s.cluster_n < 1 || s.cluster_m * s.cluster_n > 4 || (s.cluster_m & (s.cluster_m - 1)) ||
      (s.cluster_n & (s.cluster_n - 1)))
    return fmt::format("cluster {}x{} not one of 1x1, 2x1, 1x2, 2x2, 4x1, 1x4", s.cluster_m, s.cluster_n);
  // Cooperative splits the tile's M between two consumer warpgroups of 64 rows each.
  if (s.mainloop == Mainloop::Cooperative && s.tile_m < 128) return "cooperative mainloop needs tile M >= 128";
  // One consumer warpgroup holds the whole accumulator: 64xN or 128xN fp32 fits its registers.
  if (s.mainloop != Mainloop::Cooperative && s.tile_m == 256) return "tile M 256 needs the cooperative mainloop";
  if (s.mainloop != Mainloop::Cooperative && s.tile_m * s.tile_n > 128 * 256)
    return "accumulator tile too large for one warpgroup";
  if (s.scheduler == Scheduler::StreamK && s.mainloop != Mainloop::Cooperative)
    return "the stream-K scheduler needs the cooperative mainloop";
  if (s.epilogue == Epilogue::NoSmem && s.mainloop == Mainloop::Pingpong)
    return "nosmem epilogue with pingpong not used";
  if (s.stages != 0 && (s.stages < 2 || s.stages > 8)) return "stages must be auto or 2..8";
  const int stages = s.stages ? s.stages : 2;
  // Leave ~32 KB for the epilogue's staging buffer (TMA epilogue).
  const int epi = s.epilogue == Epilogue::Tma ? 32 * 1024 : 0;
  if (mainloop_smem_bytes(s, stages) + epi > kSmemBudget)
    return fmt::format("{} stage(s) need {} KB of shared memory, over the 227 KB budget", stages,
                       (mainloop_smem_bytes(s, stages) + epi) / 1024);
  if (s.swizzle != 1 && s.swizzle != 2 && s.swizzle != 4 && s.swizzle != 8) return "swizzle must be 1, 2, 4 or 8";
  if (s.splits < 1 || s.splits > 32) return "splits must be 1..32";
  if (s.scheduler != Scheduler::StreamK && (s.splits != 1 || s.decomposition != Decomposition::Heuristic))
    return "decomposition and splits need the stream-K scheduler";
  if (s.decomposition == Decomposition::SplitK && s.splits < 2) return "split-K decomposition needs splits >= 2";
  if (s.decomposition != Decomposition::SplitK && s.splits != 1) return "splits > 1 only with split-K decomposition";
  return "";
}

std::string sm90_shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (shape.k % 8 || shape.n % 8)
    return fmt::format("{} needs K and N to be multiples of 8 (16-byte rows for TMA); got {}", s.family, shape.str());
  return "";
}

// The configuration as template arguments of cudal2_sm90::Config (src/kernels/sm90_cutlass_gemm.cuh):
// CUTLASS's own types for the layout, accumulator and schedules.
std::string generate_sm90_source(const KernelSpec& s) {
  const char* mainloop = s.mainloop == Mainloop::Cooperative ? "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
                         : s.mainloop == Mainloop::Pingpong  ? "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
                                                             : "cutlass::gemm::KernelTmaWarpSpecialized";
  const char* epilogue = s.epilogue == Epilogue::NoSmem        ? "cutlass::epilogue::NoSmemWarpSpecialized"
                         : s.mainloop == Mainloop::Cooperative ? "cutlass::epilogue::TmaWarpSpecializedCooperative"
                                                               : "cutlass::epilogue::TmaWarpSpecialized";
  const char* scheduler =
      s.scheduler == Scheduler::StreamK ? "cutlass::gemm::StreamKScheduler" : "cutlass::gemm::PersistentScheduler";
  return type_source(sm90_compile_text(s), "sm90_cutlass_gemm.cuh",
                     fmt::format("cudal2_sm90::Gemm<cudal2_sm90::Config<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>>",
                                 s.layout == Layout::NN ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor",
                                 s.accum == Accum::F32 ? "float" : "cutlass::half_t", s.tile_m, s.tile_n, s.tile_k,
                                 s.cluster_m, s.cluster_n, mainloop, epilogue, scheduler, s.stages));
}

}  // namespace

int mainloop_smem_bytes(const KernelSpec& s, int stages) {
  // fp16 A and B tiles per stage, plus a pipeline barrier pair per stage.
  return stages * ((s.tile_m + s.tile_n) * s.tile_k * 2 + 16);
}

std::vector<KernelSpec> enumerate_sm90(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int tm : {64, 128, 256})
    for (int tn : {16, 32, 64, 128, 192, 256})
      for (int tk : {64, 128})
        for (auto [cm, cn] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}})
          for (auto ml : {Mainloop::WarpSpecialized, Mainloop::Cooperative, Mainloop::Pingpong})
            for (auto sc : {Scheduler::Persistent, Scheduler::StreamK}) {
              KernelSpec s;
              s.layout = layout;
              s.accum = accum;
              s.tile_m = tm, s.tile_n = tn, s.tile_k = tk;
              s.cluster_m = cm, s.cluster_n = cn;
              s.mainloop = ml;
              s.scheduler = sc;
              if (!invalid_reason_sm90(s).empty()) continue;
              if (!with_runtime_knobs) {
                out.push_back(s);
                continue;
              }
              for (int sw : {1, 2, 4, 8})
                for (auto r : {Raster::Heuristic, Raster::AlongM, Raster::AlongN}) {
                  s.swizzle = sw;
                  s.raster = r;
                  if (sc == Scheduler::Persistent) {
                    out.push_back(s);
                    continue;
                  }
                  for (auto d : {Decomposition::Heuristic, Decomposition::DataParallel, Decomposition::StreamK}) {
                    s.decomposition = d;
                    s.splits = 1;
                    out.push_back(s);
                  }
                  for (int sp : {2, 3, 4, 8}) {
                    s.decomposition = Decomposition::SplitK;
                    s.splits = sp;
                    out.push_back(s);
                  }
                  s.decomposition = Decomposition::Heuristic;
                  s.splits = 1;
                }
            }
  return out;
}

const Family& sm90_cutlass_family() {
  static const Family f{.name = "sm90_cutlass",
                        .fields = sm90_fields,
                        .default_spec = sm90_default_spec,
                        .parse_field = sm90_parse_field,
                        .compile_text = sm90_compile_text,
                        .text = sm90_text,
                        .invalid_reason = invalid_reason_sm90,
                        .enumerate = enumerate_sm90,
                        .shape_refusal = sm90_shape_refusal,
                        .generate_source = generate_sm90_source};
  return f;
}

}  // namespace cudal2
