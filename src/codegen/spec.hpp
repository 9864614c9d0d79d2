#pragma once
// KernelSpec: a plain value naming one kernel implementation, in CUTLASS's vocabulary
// (TileShape, ClusterShape, KernelSchedule, EpilogueSchedule, TileScheduler). Its canonical
// text round-trips through parse(); its hash keys the compile cache and the store.
// The compile-time part (what the generated source depends on) and the runtime knobs (passed to
// the artifact at each call) are kept apart: specs that differ only in knobs share one build.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace cudal2 {

enum class Mainloop { WarpSpecialized, Cooperative, Pingpong };
enum class Epilogue { Tma, NoSmem };  // Tma: the schedule matching the mainloop
enum class Scheduler { Persistent, StreamK };
enum class Raster { Heuristic, AlongM, AlongN };
enum class Decomposition { Heuristic, DataParallel, SplitK, StreamK };

struct KernelSpec {
  std::string family = "sm90_cutlass";
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
  int tile_m = 128, tile_n = 128, tile_k = 64;
  int cluster_m = 1, cluster_n = 1;
  Mainloop mainloop = Mainloop::Cooperative;
  Epilogue epilogue = Epilogue::Tma;
  Scheduler scheduler = Scheduler::Persistent;
  int stages = 0;  // 0 = as many as fit (StageCountAutoCarveout)
  // Runtime knobs: no recompile.
  Raster raster = Raster::Heuristic;
  int swizzle = 1;
  Decomposition decomposition = Decomposition::Heuristic;
  int splits = 1;

  // "sm90_cutlass nn f32 tile=128x128x64 cluster=1x1 mainloop=cooperative epilogue=tma
  //  scheduler=persistent stages=auto | raster=heuristic swizzle=1 decomposition=heuristic splits=1"
  std::string text() const;
  std::string compile_text() const;  // the part before " | "
  std::string hash() const;          // 16 hex digits, FNV-1a 64 of text()
  std::string compile_hash() const;  // of compile_text()
  friend bool operator==(const KernelSpec& a, const KernelSpec& b) { return a.text() == b.text(); }
};

// Throws InputError naming the bad field. Missing runtime knobs take their defaults.
KernelSpec parse_spec(std::string_view text);

// Why the spec cannot be built or run on an H100 (empty: valid). The one place the rules live:
// tile sizes WGMMA and TMA accept, the schedule combinations CUTLASS accepts, and the 227 KB
// shared-memory budget.
std::string invalid_reason(const KernelSpec& s);
// Shared memory one CTA needs for the mainloop with `stages` stages (bytes).
int mainloop_smem_bytes(const KernelSpec& s, int stages);

// Every valid spec of the family for one layout and accumulator, in a stable order. Runtime knobs
// are enumerated too (swizzle, raster, and for stream-K the decomposition and split count).
std::vector<KernelSpec> enumerate_sm90(Layout layout, Accum accum, bool with_runtime_knobs = true);

// Whether the spec can run a problem (alignment rules the artifact will also enforce).
std::string shape_refusal(const KernelSpec& s, const Shape& shape);

std::string_view to_string(Mainloop v);
std::string_view to_string(Epilogue v);
std::string_view to_string(Scheduler v);
std::string_view to_string(Raster v);
std::string_view to_string(Decomposition v);

uint64_t fnv1a64(std::string_view s);

}  // namespace cudal2
