#include "runner/contexts.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <set>
#include <type_traits>
#include <vector>

namespace cudal2 {

namespace {

// The driver's context calls through the runtime's entry points: the runner does not link
// libcuda itself (a CPU-only machine runs the CLI).
struct Driver {
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*sync)() = nullptr;
  bool ok = false;
  Driver() {
    cudaDriverEntryPointQueryResult q{};
    auto get = [&](const char* name, auto** fn) {
      void* p = nullptr;
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess)
        p = nullptr;
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    };
    get("cuCtxPushCurrent", &push);
    get("cuCtxPopCurrent", &pop);
    get("cuCtxSynchronize", &sync);
    cudaGetLastError();
    ok = push && pop && sync;
  }
};

}  // namespace

std::string sync_every_context() {
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
    return fmt::format("cudaDeviceSynchronize: {}", cudaGetErrorString(e));
  static Driver drv;
  static std::set<CUcontext> known;  // contexts seen on the stack at earlier answers
  if (!drv.ok) return "";
  // The thread's stack, popped to the bottom and pushed back in its order.
  std::vector<CUcontext> stack;
  for (int i = 0; i < 64; ++i) {
    CUcontext c = nullptr;
    if (drv.pop(&c) != CUDA_SUCCESS || c == nullptr) break;
    stack.push_back(c);
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) drv.push(*it);
  known.insert(stack.begin(), stack.end());
  std::string err;
  for (auto it = known.begin(); it != known.end();) {
    if (drv.push(*it) != CUDA_SUCCESS) {  // destroyed since
      it = known.erase(it);
      continue;
    }
    const CUresult r = drv.sync();
    CUcontext c = nullptr;
    drv.pop(&c);
    if (r != CUDA_SUCCESS && err.empty())
      err = fmt::format("a context of this process failed to synchronise ({})", static_cast<int>(r));
    ++it;
  }
  return err;
}

}  // namespace cudal2
