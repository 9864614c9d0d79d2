#pragma once
// How much workspace a candidate may ask the judge for, relative to its problem
// (docs/threat-model.md): enough for honest split-K, not a store for earlier results. Honest
// split-K keeps one fp32 partial tile per (output tile, split) plus a counter per tile: with at
// most kMaxSplits splits (the families' own limit) and tiles of at most 256 x 256, that is below
// kMaxSplits x 4 bytes x M and N each rounded up to 256, plus the counters. Small problems get
// a floor (libraries' fixed-size scratch), and no request exceeds the absolute cap.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cudal2 {

inline constexpr int kWorkspaceMaxSplits = 64;
inline constexpr size_t kWorkspaceFloor = size_t{64} << 20;
inline constexpr size_t kWorkspaceCap = size_t{2} << 30;

constexpr size_t max_workspace(int64_t m, int64_t n) {
  const auto up = [](int64_t x) { return static_cast<size_t>((x + 255) / 256 * 256); };
  const size_t split_k = static_cast<size_t>(kWorkspaceMaxSplits) * 4 * up(m) * up(n) + (size_t{1} << 20);
  return std::min(kWorkspaceCap, std::max(kWorkspaceFloor, split_k));
}

}  // namespace cudal2
