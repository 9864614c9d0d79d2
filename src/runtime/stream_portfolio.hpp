#pragma once
// The `stream` kernels compiled into every libcudal2_runtime (runtime/stream_kernels.cu), as a
// table without entries: runtime.cpp runs them through the same KernelCall path as a table's
// kernels, and runtime/stream_rule.hpp picks one for a shape.
#include <vector>

#include "runtime/stream_rule.hpp"
#include "runtime/table.hpp"

namespace cudal2::rt {

// The portfolio as a Table (gpu "any sm_90", no entries), made once.
const Table& stream_table();
// The portfolio as the rule sees it, in stream_table().kernels' order (asks the occupancy
// calculator: call with a current device).
std::vector<StreamKernel> stream_portfolio();

}  // namespace cudal2::rt
