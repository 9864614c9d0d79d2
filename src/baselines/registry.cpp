#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "baselines/baselines.hpp"

namespace cudal2 {

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names{"cublas-nn",
                                              "cublas-tn",
                                              "cublaslt-heuristic-nn",
                                              "cublaslt-heuristic-tn",
                                              "cublaslt-autotune-nn",
                                              "cublaslt-autotune-tn",
                                              "torch-matmul"};
  return names;
}

const std::vector<std::string>& default_method_names() {
  static const std::vector<std::string> names = [] {
    auto v = baseline_names();
    v.insert(v.end(), {"runtime-nn", "runtime-tn"});
    return v;
  }();
  return names;
}

namespace {
// The library under test and two more builds of it (src/baselines/runtime.cpp).
const std::string kRuntimeSlots[] = {"", "b", "c"};
}  // namespace

std::string runtime_method_name(const std::string& slot, Layout layout) {
  return slot.empty() ? fmt::format("runtime-{}", to_string(layout))
                      : fmt::format("runtime-{}-{}", slot, to_string(layout));
}

const std::vector<std::string>& runtime_method_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& slot : kRuntimeSlots)
      for (auto layout : {Layout::NN, Layout::TN}) v.push_back(runtime_method_name(slot, layout));
    return v;
  }();
  return names;
}

bool is_baseline(const std::string& name) {
  const auto& n = baseline_names();
  const auto& r = runtime_method_names();
  return std::find(n.begin(), n.end(), name) != n.end() || std::find(r.begin(), r.end(), name) != r.end();
}

MethodPtr make_baseline(const std::string& name, Accum accum) {
  if (name == "cublas-nn") return make_cublas(Layout::NN, accum);
  if (name == "cublas-tn") return make_cublas(Layout::TN, accum);
  if (name == "cublaslt-heuristic-nn") return make_cublaslt(Layout::NN, accum, false);
  if (name == "cublaslt-heuristic-tn") return make_cublaslt(Layout::TN, accum, false);
  if (name == "cublaslt-autotune-nn") return make_cublaslt(Layout::NN, accum, true);
  if (name == "cublaslt-autotune-tn") return make_cublaslt(Layout::TN, accum, true);
  if (name == "torch-matmul") return make_torch(accum);
  for (const auto& slot : kRuntimeSlots)
    for (auto layout : {Layout::NN, Layout::TN})
      if (name == runtime_method_name(slot, layout)) return make_runtime(layout, accum, slot);
  throw InputError(fmt::format("unknown method '{}' (known: {}, {})", name, fmt::join(baseline_names(), ", "),
                               fmt::join(runtime_method_names(), ", ")));
}

}  // namespace cudal2
