#include "search/space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/family_cublaslt.hpp"
#include "codegen/family_wgmma.hpp"

namespace cudal2::search {

namespace {

// core: K tile 64 (one 128-byte swizzle row), clusters of at most 2, N tiles 64/128/256, the
// cooperative and ping-pong mainloops: docs/tuning.md says why.
bool in_sm90_core(const KernelSpec& s) {
  return s.tile_k == 64 && s.cluster_m * s.cluster_n <= 2 && s.tile_n >= 64 && s.tile_n != 192 &&
         s.mainloop != Mainloop::WarpSpecialized;
}

// core: no clusters (multicast pays only on the largest shapes) and tile swizzle 1 or 8.
bool in_wgmma_core(const KernelSpec& s) {
  return s.cluster_m == 1 && s.cluster_n == 1 && (s.swizzle == 1 || s.swizzle == 8);
}

// core: 8 stages (12 measured within 1% of 8 on decode shapes), splits up to 4 (clusters of 8
// CTAs that fill an SM each measured 1.5-3x slower), 128-wide N tiles only with 1 or 2 splits.
bool in_swapab_core(const KernelSpec& s) {
  return s.stages == 8 && s.splits <= 4 && (s.tile_n == 64 || (s.splits >= 1 && s.splits <= 2));
}

}  // namespace

std::vector<KernelSpec> search_space(const std::vector<std::string>& families, const std::string& space, Accum accum) {
  if (space != "full" && space != "core") throw InputError(fmt::format("unknown space '{}' (full, core)", space));
  std::vector<KernelSpec> out;
  for (const auto& f : families) {
    if (f == "sm90_cutlass") {
      for (auto layout : {Layout::NN, Layout::TN})
        for (const auto& s : enumerate_sm90(layout, accum, false))
          if (space == "full" || in_sm90_core(s)) out.push_back(s);
      continue;
    }
    // Our own families compile in seconds: their whole space, split counts included (wgmma:
    // with its runtime knobs, cut to the core subset on request).
    for (auto layout : {Layout::NN, Layout::TN})
      for (const auto& s : enumerate_specs(f, layout, accum, true))
        if (space == "full" || (f == kWgmmaFamily ? in_wgmma_core(s) : f != "wgmma_swapab" || in_swapab_core(s)))
          out.push_back(s);
  }
  return out;
}

std::string problem_key(const Shape& s, Layout l) { return fmt::format("{} {}", s.str(), to_string(l)); }

std::vector<KernelSpec> ProblemSpace::for_problem(const Problem& p) const {
  std::vector<KernelSpec> out;
  for (const auto& s : common)
    if (s.layout == p.layout && s.accum == p.accum) out.push_back(s);
  if (const auto it = per_problem.find(problem_key(p.shape, p.layout)); it != per_problem.end())
    out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

std::vector<KernelSpec> ProblemSpace::all() const {
  std::vector<KernelSpec> out = common;
  std::set<std::string> seen;
  for (const auto& s : out) seen.insert(s.text());
  for (const auto& [key, specs] : per_problem)
    for (const auto& s : specs)
      if (seen.insert(s.text()).second) out.push_back(s);
  return out;
}

bool needs_gpu_space(const std::vector<std::string>& families) {
  return std::find(families.begin(), families.end(), std::string(kCublasLtFamily)) != families.end();
}

std::vector<std::string> shape_independent(const std::vector<std::string>& families) {
  std::vector<std::string> out;
  for (const auto& f : families)
    if (f != kCublasLtFamily) out.push_back(f);
  return out;
}

}  // namespace cudal2::search
