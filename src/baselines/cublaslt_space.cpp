#include "baselines/cublaslt_space.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "codegen/family_cublaslt.hpp"
#include "kernels/cublaslt_plan.h"

namespace cudal2 {

namespace {

using cudal2_lt::Config;

void lt_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) throw MethodUnsupported(fmt::format("{}: {}", what, cublasLtGetStatusName(st)));
}

// Owns the handle and the problem's descriptors.
struct Session {
  cublasLtHandle_t h = nullptr;
  cudal2_lt::Problem p;
  bool f16 = false;
  size_t max_ws = 0;
  ~Session() {
    cudal2_lt::destroy(p);
    if (h) cublasLtDestroy(h);
  }
  // AlgoCheck of a configuration: its workspace and waves, or nothing when refused.
  std::optional<cublasLtMatmulHeuristicResult_t> check(const Config& c, cublasLtMatmulAlgo_t* algo = nullptr) const {
    cublasLtMatmulAlgo_t a;
    const char* failed = nullptr;
    cublasLtMatmulHeuristicResult_t r{};
    if (cudal2_lt::configure_checked(h, f16, c, p, &a, &r, &failed) != CUBLAS_STATUS_SUCCESS) return std::nullopt;
    if (r.workspaceSize > max_ws) return std::nullopt;
    if (algo) *algo = a;
    return r;
  }
};

std::vector<uint32_t> cap_ids(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS || bytes == 0)
    return {};
  std::vector<uint32_t> ids(bytes / sizeof(uint32_t));
  size_t w = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, ids.data(), ids.size() * sizeof(uint32_t), &w) !=
      CUBLAS_STATUS_SUCCESS)
    return {};
  ids.resize(w / sizeof(uint32_t));
  return ids;
}

template <class T>
T cap_value(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr, T fallback) {
  T v{};
  size_t w = 0;
  return cublasLtMatmulAlgoCapGetAttribute(&algo, attr, &v, sizeof v, &w) == CUBLAS_STATUS_SUCCESS ? v : fallback;
}

KernelSpec to_spec(const Config& c, Layout layout, Accum accum) {
  KernelSpec s = default_cublaslt_spec();
  s.layout = layout;
  s.accum = accum;
  s.lt_algo = c.algo, s.lt_tile = c.tile, s.lt_stages = c.stages, s.lt_reduction = c.reduction;
  s.lt_swizzle = c.swizzle, s.lt_custom = c.custom, s.lt_inner = c.inner;
  std::tie(s.cluster_m, s.cluster_n) = cublaslt_cluster_shape(c.cluster);
  s.splits = c.splits;
  return s;
}

// The one-attribute variations of c by kind, in the order they are worth trying.
std::vector<std::vector<Config>> variations(const Config& c, const cublasLtMatmulAlgo_t& algo) {
  std::vector<std::vector<Config>> kinds;
  // split-K (with each supported reduction scheme; the first scheme for every count first).
  {
    std::vector<Config> v;
    const bool splitk = cap_value<int32_t>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, 0) != 0;
    const uint32_t mask = cap_value<uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, 0);
    std::vector<int> schemes;
    for (int r : {1, 2, 4})
      if (mask & static_cast<uint32_t>(r)) schemes.push_back(r);
    if (c.splits != 1) {
      Config x = c;
      x.splits = 1, x.reduction = 0;
      v.push_back(x);
    }
    if (splitk)
      for (size_t ri = 0; ri < schemes.size(); ++ri)
        for (int sp : {2, 4, 8, 16, 3, 6}) {
          Config x = c;
          x.splits = sp, x.reduction = schemes[ri];
          if (!(x == c)) v.push_back(x);
        }
    kinds.push_back(std::move(v));
  }
  // Cluster shape: the usual ones first, then the rest cuBLASLt names.
  {
    std::vector<Config> v;
    std::vector<int> ids{0, 2, 3, 5, 6, 4, 8};
    for (int id : cublaslt_cluster_ids())
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    for (int id : ids) {
      Config x = c;
      x.cluster = id;
      if (!(x == c)) v.push_back(x);
    }
    kinds.push_back(std::move(v));
  }
  // Custom option.
  {
    std::vector<Config> v;
    const int max = cap_value<int32_t>(algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, 0);
    for (int o = 0; o <= std::min(max, 64); ++o) {
      Config x = c;
      x.custom = o;
      if (!(x == c)) v.push_back(x);
    }
    kinds.push_back(std::move(v));
  }
  // CTA swizzling.
  {
    std::vector<Config> v;
    if (cap_value<uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, 0) != 0) {
      Config x = c;
      x.swizzle = c.swizzle ? 0 : 1;
      v.push_back(x);
    }
    kinds.push_back(std::move(v));
  }
  // Stages, then tiles: nearest enum values first (the enums are ordered by size).
  for (auto attr : {CUBLASLT_ALGO_CAP_STAGES_IDS, CUBLASLT_ALGO_CAP_TILE_IDS}) {
    const bool tiles = attr == CUBLASLT_ALGO_CAP_TILE_IDS;
    auto ids = cap_ids(algo, attr);
    const int cur = tiles ? c.tile : c.stages;
    std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
      return std::abs(static_cast<int>(a) - cur) < std::abs(static_cast<int>(b) - cur);
    });
    std::vector<Config> v;
    for (uint32_t id : ids) {
      Config x = c;
      (tiles ? x.tile : x.stages) = static_cast<int>(id);
      if (!(x == c)) v.push_back(x);
    }
    kinds.push_back(std::move(v));
  }
  return kinds;
}

}  // namespace

std::vector<LtCandidate> cublaslt_space(const Shape& shape, Layout layout, Accum accum, int max_specs,
                                        size_t max_workspace) {
  Session s;
  s.f16 = accum == Accum::F16;
  s.max_ws = max_workspace;
  lt_check(cublasLtCreate(&s.h), "cublasLtCreate");
  if (!cudal2_lt::make_problem(shape.m, shape.n, shape.k, layout == Layout::TN, s.f16, s.p))
    lt_check(s.p.status, s.p.failed);

  std::vector<LtCandidate> out;
  std::set<std::string> seen;
  // Every suggestion of the heuristic is in (auto-tuning times them all, so the space holds its
  // pick by construction); max_specs bounds what comes after them.
  size_t limit = SIZE_MAX;
  auto add = [&](const Config& c, const cublasLtMatmulHeuristicResult_t& r, std::string origin, bool same = true) {
    if (out.size() >= limit) return false;
    if (cublaslt_cluster_shape(c.cluster).first < 0) return false;  // a cluster id this cudal2 cannot name
    KernelSpec spec = to_spec(c, layout, accum);
    if (!invalid_reason(spec).empty() || !seen.insert(spec.text()).second) return false;
    out.push_back({std::move(spec), std::move(origin), r.workspaceSize, r.wavesCount, same});
    return true;
  };

  // 1. The heuristic's suggestions, rebuilt from their configuration (what the artifact does).
  std::vector<cublasLtMatmulHeuristicResult_t> heur(kAutotuneRequest);
  int returned = 0;
  lt_check(cudal2_lt::heuristic(s.h, s.p, max_workspace, static_cast<int>(heur.size()), heur.data(), &returned),
           "cublasLtMatmulAlgoGetHeuristic");
  heur.resize(static_cast<size_t>(std::max(returned, 0)));
  std::vector<std::pair<Config, cublasLtMatmulAlgo_t>> picks;
  for (size_t i = 0; i < heur.size(); ++i) {
    if (heur[i].state != CUBLAS_STATUS_SUCCESS || heur[i].workspaceSize > max_workspace) continue;
    const Config c = cudal2_lt::read_config(heur[i].algo);
    cublasLtMatmulAlgo_t rebuilt;
    const auto r = s.check(c, &rebuilt);
    if (!r) continue;
    const bool same = std::memcmp(&rebuilt, &heur[i].algo, sizeof rebuilt) == 0;
    picks.push_back({c, heur[i].algo});
    add(c, *r, fmt::format("heuristic #{}", i), same);
  }

  if (max_specs > 0) limit = out.size() + static_cast<size_t>(max_specs);

  // 2. One-attribute variations, round-robin over suggestions and kinds.
  static const char* kKind[] = {"splitk", "cluster", "custom", "swizzle", "stages", "tile"};
  std::vector<std::vector<std::vector<Config>>> vars;
  for (const auto& [c, algo] : picks) vars.push_back(variations(c, algo));
  for (size_t round = 0; out.size() < limit; ++round) {
    bool any = false;
    for (size_t p = 0; p < vars.size(); ++p)
      for (size_t k = 0; k < vars[p].size(); ++k) {
        if (round >= vars[p][k].size()) continue;
        any = true;
        const Config& c = vars[p][k][round];
        if (const auto r = s.check(c)) add(c, *r, fmt::format("#{} {}", p, kKind[k]));
      }
    if (!any) break;
  }

  // 3. Algorithms the heuristic did not suggest: each tile they support, default stages.
  if (out.size() < limit) {
    std::vector<int> ids(256);
    int n = 0;
    const auto ct = cudal2_lt::compute_type(s.f16);
    const auto st = cudal2_lt::scale_type(s.f16);
    if (cublasLtMatmulAlgoGetIds(s.h, ct, st, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                                 static_cast<int>(ids.size()), ids.data(), &n) == CUBLAS_STATUS_SUCCESS) {
      ids.resize(static_cast<size_t>(std::max(n, 0)));
      for (int id : ids) {
        if (std::any_of(picks.begin(), picks.end(), [&](const auto& pk) { return pk.first.algo == id; })) continue;
        cublasLtMatmulAlgo_t algo;
        if (cublasLtMatmulAlgoInit(s.h, ct, st, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, id, &algo) !=
            CUBLAS_STATUS_SUCCESS)
          continue;
        auto tiles = cap_ids(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
        const auto stages = cap_ids(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
        if (tiles.empty()) tiles.push_back(0);
        for (uint32_t t : tiles) {
          Config c;
          c.algo = id, c.tile = static_cast<int>(t);
          // Stages: undefined first (cuBLASLt picks), else each supported id until one checks.
          std::vector<uint32_t> try_stages{0};
          try_stages.insert(try_stages.end(), stages.begin(), stages.end());
          for (uint32_t sg : try_stages) {
            c.stages = static_cast<int>(sg);
            if (const auto r = s.check(c)) {
              add(c, *r, fmt::format("algo {}", id));
              break;
            }
          }
          if (out.size() >= limit) break;
        }
        if (out.size() >= limit) break;
      }
    }
  }
  return out;
}

std::vector<KernelSpec> cublaslt_neighbourhood(const Shape& shape, Layout layout, Accum accum, int max_specs) {
  std::vector<KernelSpec> out;
  for (auto& c : cublaslt_space(shape, layout, accum, max_specs)) out.push_back(std::move(c.spec));
  return out;
}

}  // namespace cudal2
