// The stream portfolio (runtime/stream_portfolio.hpp) from the kernels' data
// (kernels/stream_portfolio.h).
#include "runtime/stream_portfolio.hpp"

#include <cudal2/cudal2.h>

#include <string>

#include "stream_portfolio.h"

namespace cudal2::rt {

const Table& stream_table() {
  static const std::vector<KernelInfo> kernels = [] {
    int n = 0;
    const cudal2_stream_kernel* k = cudal2_rt_stream_kernels(&n);
    std::vector<KernelInfo> v;
    for (int i = 0; i < n; ++i)
      v.push_back({k[i].spec, k[i].sweep ? "stream_sweep" : "stream", k[i].tn ? CUDAL2_LAYOUT_TN : CUDAL2_LAYOUT_NN,
                   k[i].f16 ? CUDAL2_ACCUM_F16 : CUDAL2_ACCUM_F32, k[i].toks, k[i].rows, k[i].sweep ? 32 : 64, true,
                   false, LtConfig{}, k[i].can_implement, k[i].workspace_size, k[i].run});
    return v;
  }();
  static const Table t{
      "any sm_90", "stream portfolio", 9, 0, kernels.data(), static_cast<int>(kernels.size()), nullptr, 0};
  return t;
}

std::vector<StreamKernel> stream_portfolio() {
  int n = 0;
  const cudal2_stream_kernel* k = cudal2_rt_stream_kernels(&n);
  std::vector<StreamKernel> v;
  for (int i = 0; i < n; ++i) {
    const int r = k[i].resident();
    v.push_back({k[i].tn ? CUDAL2_LAYOUT_TN : CUDAL2_LAYOUT_NN, k[i].f16 ? CUDAL2_ACCUM_F16 : CUDAL2_ACCUM_F32,
                 k[i].toks, k[i].rows, k[i].warps_k, r > 0 ? r : 1, k[i].sweep != 0, k[i].keep});
    // A keep variant's spec is its kernel's with " keep=N" appended (codegen/family_stream_sweep.cpp).
    if (k[i].keep != 0)
      for (int j = 0; j < n; ++j)
        if (k[j].keep == 0 && std::string(k[i].spec) == std::string(k[j].spec) + " keep=" + std::to_string(k[i].keep))
          v.back().variant_of = j;
  }
  return v;
}

}  // namespace cudal2::rt
