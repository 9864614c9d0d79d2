#pragma once
// KernelSpec: a plain value naming one kernel implementation of one family:
//   sm90_cutlass  CUTLASS 3.x SM90 in CUTLASS's vocabulary (TileShape, ClusterShape,
//                 KernelSchedule, EpilogueSchedule, TileScheduler)
//   mma           our raw-CUDA cp.async + ldmatrix + mma.sync kernel with in-launch split-K
//                 (src/kernels/mma_gemm.cuh), for small and skinny shapes
//   tiny          our register-only kernel for the tiniest shapes (src/kernels/tiny_gemm.cuh)
//   wgmma         our TMA + WGMMA kernel (codegen/family_wgmma.hpp)
//   cublaslt      one cuBLASLt algorithm configuration (codegen/family_cublaslt.hpp)
// Each family is one file, codegen/family_<name>.cpp, registered in codegen/families.cpp
// (codegen/family.hpp); the functions below look the family up there.
// Its canonical text round-trips through parse(); its hash keys the compile cache and the store.
// Fields a family does not use keep their defaults and are not part of its text.
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
  int stages = 0;  // 0 = as many as fit (StageCountAutoCarveout); mma: 2..8
  // mma, tiny: warps per CTA along M and N (warp tile = tile / warps); tiny: warps_k warps split
  // K inside the CTA (reduced through shared memory).
  int warps_m = 0, warps_n = 0, warps_k = 0;
  // stream: CTAs per SM the kernel is compiled to fit (__launch_bounds__' minimum blocks), which
  // caps its registers a thread; 1 leaves ptxas free.
  int min_ctas = 1;
  // stream: stages of B a warp asks L2 to fetch ahead of the one it loads (0: none).
  int prefetch_ahead = 0;
  // stream: when the next kernel may launch (programmatic dependent launch): 1 once every CTA has
  // started, 2 once every CTA has left its mainloop, 0 never early (no PDL).
  int pdl_mode = 1;
  // stream: how K is split across CTAs: 0 contiguous ranges, 1 interleaved stages (split z of S
  // takes stages z, z + S, ...: the CTAs of one output tile read neighbouring stages at once).
  int split_order = 0;
  // stream_sweep: 1 issues the loads of a warp's next batch of K steps before it multiplies this
  // one (two batches of registers in turn), 0 loads a batch only once the last is multiplied.
  int pipelined = 0;
  // stream_sweep: 1 loads B so that its lines stay in the L2 for the next call (without
  // L1::no_allocate, kernels/ld_stream.cuh); 0 as read-once data.
  int l2_keep = 0;
  // Runtime knobs: no recompile.
  Raster raster = Raster::Heuristic;
  int swizzle = 1;
  Decomposition decomposition = Decomposition::Heuristic;
  int splits = 1;
  // cublaslt (src/codegen/family_cublaslt.hpp): one cuBLASLt algorithm configuration, in the
  // numeric values of cublasLt.h's enums: algorithm id, tile id, stages id, split-K reduction
  // scheme, CTA swizzling, custom option, inner shape id. Its cluster shape is cluster_m x
  // cluster_n (0x0: cuBLASLt's auto) and its split-K count is splits (a runtime knob).
  int lt_algo = 0, lt_tile = 0, lt_stages = 0, lt_reduction = 0, lt_swizzle = 0, lt_custom = 0, lt_inner = 0;

  // "sm90_cutlass nn f32 tile=128x128x64 cluster=1x1 mainloop=cooperative epilogue=tma
  //  scheduler=persistent stages=auto | raster=heuristic swizzle=1 decomposition=heuristic splits=1"
  // "mma nn f32 tile=64x64x32 warps=2x2 stages=3 | splits=1"
  // "tiny nn f32 tile=32x32x64 warps=1x1 kwarps=2 | splits=1"
  std::string text() const;
  std::string compile_text() const;  // the part before " | "
  std::string hash() const;          // 16 hex digits, FNV-1a 64 of text()
  std::string compile_hash() const;  // of compile_text()
  friend bool operator==(const KernelSpec& a, const KernelSpec& b) { return a.text() == b.text(); }
};

// The families the search enumerates, in the registry's order: sm90_cutlass, mma, tiny, wgmma
// (parse_spec also knows cublaslt, whose space is asked of the GPU per shape).
std::vector<std::string> known_families();
// A family's default spec (what parse_spec starts from; KernelSpec{} is sm90_cutlass's).
// Throws InputError for an unknown family.
KernelSpec default_spec(std::string_view family);

// Dispatches on the first word (the family). Throws InputError naming the bad field, or a field
// the family does not have. Missing fields take the family's defaults.
KernelSpec parse_spec(std::string_view text);

// Why the spec cannot be built or run on an H100 (empty: valid). The one place the rules live,
// per family: sm90_cutlass: tile sizes WGMMA and TMA accept, the schedule combinations CUTLASS
// accepts, the 227 KB shared-memory budget; mma/tiny: tile and warp-tile sizes, register and
// shared-memory budgets, the runtime knobs they take (splits only).
std::string invalid_reason(const KernelSpec& s);
// Shared memory one CTA needs for the mainloop with `stages` stages (bytes).
int mainloop_smem_bytes(const KernelSpec& s, int stages);

// Every valid spec of the family for one layout and accumulator, in a stable order. Runtime knobs
// are enumerated too (swizzle, raster, and for stream-K the decomposition and split count).
std::vector<KernelSpec> enumerate_sm90(Layout layout, Accum accum, bool with_runtime_knobs = true);
// Any family's enumeration (sm90_cutlass: enumerate_sm90). mma: 57 compile-time configurations
// (19 CTA tiles, each with one warp layout, x 3 (tile K, stages): 32/4, 64/3, 64/5), x 6 split
// counts {1,2,4,8,16,32} with knobs; tiny: 96 configurations (4 warp tiles x 12 warp layouts x tile K
// 32/64), splits=1 only. Throws InputError for an unknown family.
std::vector<KernelSpec> enumerate_specs(std::string_view family, Layout layout, Accum accum,
                                        bool with_runtime_knobs = true);

// Whether the spec can run a problem (alignment rules the artifact will also enforce); "" = yes.
// mma and tiny run every shape (unaligned ones on a slower bounds-checked path).
std::string shape_refusal(const KernelSpec& s, const Shape& shape);

std::string_view to_string(Mainloop v);
std::string_view to_string(Epilogue v);
std::string_view to_string(Scheduler v);
std::string_view to_string(Raster v);
std::string_view to_string(Decomposition v);

uint64_t fnv1a64(std::string_view s);

}  // namespace cudal2
