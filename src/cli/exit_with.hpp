#pragma once
// One mapping from what went wrong to the one line the user sees and the exit code, for every
// subcommand: bad input or a bad store -> "cudal2: error: ..." and 2; no GPU -> 1; anything else
// -> "cudal2: failed: ..." and 1. The registry (src/cli/commands.cpp) runs every command through it.
#include <cstdio>
#include <exception>
#include <functional>

#include "core/problem.hpp"
#include "measure/device.hpp"
#include "store/error.hpp"

namespace cudal2::cli {

inline int exit_code_of(const std::function<int()>& body) {
  try {
    return body();
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "cudal2: error: %s\n", e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "cudal2: error: %s\n", e.what());
    return 2;
  } catch (const NoGpuError& e) {
    std::fprintf(stderr, "cudal2: %s: nothing to run on this machine\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudal2: failed: %s\n", e.what());
    return 1;
  }
}

}  // namespace cudal2::cli
