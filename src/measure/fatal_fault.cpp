#include "measure/fatal_fault.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "measure/device.hpp"

namespace cudal2 {

std::optional<protocol::ErrorAnswer> fatal_fault_answer() {
  const cudaError_t sticky = cudaDeviceSynchronize();
  if (sticky == cudaSuccess) return std::nullopt;
  return protocol::ErrorAnswer{fmt::format("{}: {}", cudaGetErrorName(sticky), cudaGetErrorString(sticky)), true,
                               fatal_error_kind(sticky)};
}

}  // namespace cudal2
