#include "search/space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "codegen/family_cublaslt.hpp"
#include "codegen/family_wgmma.hpp"
#include "core/input_file.hpp"

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

// "@FILE": the specs written there, one per line (blank lines and # comments skipped), each a
// valid spec of one of the run's families and its accumulator: a campaign's chosen neighbourhood
// (docs/tuning.md), measured on every shape of the run. Refused line by line, naming the line.
std::vector<KernelSpec> listed_space(const std::vector<std::string>& families, const std::string& path, Accum accum) {
  // Bounded (`--space @/dev/zero` grew to gigabytes): a listed space is a few thousand lines.
  const std::string text = read_input_file(path, "--space file", size_t{16} << 20);
  std::vector<KernelSpec> out;
  std::set<std::string> seen;
  for (const auto& line : listed_lines(text)) {
    const auto where = fmt::format("--space @{} line {}", path, line.number);
    KernelSpec s;
    try {
      s = parse_spec(line.text);  // validity included ("invalid spec: ...")
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
    if (std::find(families.begin(), families.end(), s.family) == families.end())
      throw InputError(
          fmt::format("{}: family '{}' is not in --families ({})", where, s.family, fmt::join(families, ",")));
    if (s.accum != accum)
      throw InputError(
          fmt::format("{}: accumulator {} but the run tunes {}", where, to_string(s.accum), to_string(accum)));
    if (seen.insert(s.text()).second) out.push_back(s);
  }
  if (out.empty()) throw InputError(fmt::format("--space @{}: no specs in the file", path));
  return out;
}

}  // namespace

std::vector<KernelSpec> search_space(const std::vector<std::string>& families, const std::string& space, Accum accum) {
  if (space.starts_with("@")) return listed_space(families, space.substr(1), accum);
  if (space != "full" && space != "core")
    throw InputError(fmt::format("unknown space '{}' (full, core or @FILE)", space));
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
