#pragma once
// KernelSpec family `wgmma`: our own Hopper-native HGEMM (src/kernels/wgmma_gemm.cuh): TMA into
// 128-byte-swizzled shared memory, wgmma.mma_async from shared memory, a producer warpgroup and
// one consumer warpgroup per 64 tile rows, persistent over the SMs.
//   "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=heuristic swizzle=1 [splits=4]"
//   tile     64 or 128 (M) x 64, 128, 192 or 256 (N) x 64 (K: one 128-byte swizzle row)
//   cluster  1x1; 2x1 (two CTAs along M, each loads half the B tile and multicasts it to both)
//            or 1x2 (two along N share the A tile the same way)
//   stages   2..8 K tiles in flight, as many as fit in 227 KB
//   raster, swizzle  runtime knobs: the persistent tile order (src/kernels/wgmma_plan.h)
//   splits   runtime knob: 1 (default, not printed) data-parallel; 2..64 split-K, each tile's K
//            cut into that many ranges reduced in the workspace; auto (0) picks per shape
// Runs any M, N with K % 8 == 0 (and N % 8 == 0 for nn) and 16-byte-aligned A and B (TMA rows).
// No CUDA here: this file only writes and reads text.
#include <string>
#include <string_view>
#include <vector>

#include "codegen/spec.hpp"

namespace cudal2 {

inline constexpr std::string_view kWgmmaFamily = "wgmma";

// The family's text fields in canonical order (runtime knobs last).
const std::vector<std::string>& wgmma_fields();
KernelSpec default_wgmma_spec();
std::string wgmma_compile_text(const KernelSpec& s);
std::string wgmma_text(const KernelSpec& s);
std::string invalid_reason_wgmma(const KernelSpec& s);
// Tiles {64,128} x {64,128,192,256} x clusters {1x1, 2x1, 1x2}, stages 3..6 where they fit (with
// the epilogue's 16 or 32 KB of buffers); with knobs, raster
// {heuristic, along_m, along_n} x swizzle {1,2,4,8}, plus splits {auto, 2, 4, 8, 16} (17 per
// cooperative configuration; ping-pong has no split-K).
// (Tile N 32, for skinny N, is valid but runs only from spec lists: the enumerated spaces, and
// the stores and policies built on them, stay as they were.)
std::vector<KernelSpec> enumerate_wgmma(Layout layout, Accum accum, bool with_runtime_knobs);
// K % 8 (and N % 8 for nn) for TMA; explicit splits > 1 only up to the K tiles and where tiles x
// splits fit in one wave of the H100's 132 SMs (the splits of a tile wait for each other).
std::string wgmma_shape_refusal(const KernelSpec& s, const Shape& shape);
// #include "wgmma_gemm.cuh" and the configuration as the type
// cudal2_wgmma::Gemm<cudal2_config>, cudal2_config naming each constant (named_config_source),
// exported through the kernel C ABI.
std::string generate_wgmma_source(const KernelSpec& s);

}  // namespace cudal2
