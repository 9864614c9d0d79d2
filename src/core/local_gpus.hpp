#pragma once
// The GPUs this process sees, as found by a caller that may call CUDA (measure/device.hpp's
// local_gpus()) and handed to code that may not (search/: the tuning loop and the evaluation
// client reach the GPU only through the judge process). No CUDA here.
#include <stdexcept>
#include <string>
#include <vector>

namespace cudal2 {

// No usable GPU (no device, no driver). The CLI prints what() on one line and exits 1.
struct NoGpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LocalGpus {
  std::vector<std::string> names;  // by device ordinal; empty: none usable
  std::string why_none = "no CUDA GPU available (not looked for)";
  bool available() const { return !names.empty(); }
  int count() const { return static_cast<int>(names.size()); }
  // The first GPU's name, what rows measured here are stored under; "unknown" without one.
  std::string first_name() const { return names.empty() ? "unknown" : names.front(); }
  // Throws NoGpuError with why_none when there is none.
  void require() const {
    if (names.empty()) throw NoGpuError(why_none);
  }
};

}  // namespace cudal2
