#pragma once
// What the register-only `tiny` family shares with `lat`, which runs the same mainloop
// (src/kernels/tiny_gemm.cuh, lat_gemm.cuh): the validity rules of a CTA tile, its warps and
// tile K, and the enumeration of those compile-time configurations.
// No CUDA here: this file only writes and reads text.
#include <string>
#include <vector>

#include "codegen/spec.hpp"

namespace cudal2 {

// Why the tile, warps, kwarps or tile K of s cannot be built (warp tiles 16 or 32 x 8, 16 or 32,
// tile K 32/64/128, fragments within the register budget, at most 8 warps), or why its runtime
// knobs other than splits are not at their defaults; "" when they can.
std::string tiny_tile_invalid_reason(const KernelSpec& s);
// Every configuration of tile, warps and kwarps that tiny_tile_invalid_reason accepts (family
// "tiny", splits=1): 4 warp tiles x 12 warp layouts x tile K 32/64.
std::vector<KernelSpec> enumerate_tiny_tiles(Layout layout, Accum accum);

}  // namespace cudal2
