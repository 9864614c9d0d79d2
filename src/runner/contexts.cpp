#include "runner/contexts.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <set>
#include <type_traits>
#include <vector>

#include "runner/context_registry.hpp"

namespace cudal2 {

namespace {

// The driver's context calls through the runtime's entry points: the runner does not link
// libcuda itself (a CPU-only machine runs the CLI).
struct Driver {
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*sync)() = nullptr;
  CUresult (*current)(CUcontext*) = nullptr;
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
    get("cuCtxGetCurrent", &current);
    cudaGetLastError();
    ok = push && pop && sync && current;
  }
};

Driver& driver() {
  static Driver drv;
  return drv;
}

std::set<void*>& own() {
  static std::set<void*> s;
  return s;
}

}  // namespace

std::string sync_every_context() {
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
    return fmt::format("cudaDeviceSynchronize: {}", cudaGetErrorString(e));
  Driver& drv = driver();
  if (!drv.ok) return "";
  auto& registry = ContextRegistry::process();
  // The thread's stack, popped to the bottom and pushed back in its order.
  std::vector<CUcontext> stack;
  for (int i = 0; i < 64; ++i) {
    CUcontext c = nullptr;
    if (drv.pop(&c) != CUDA_SUCCESS || c == nullptr) break;
    stack.push_back(c);
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) drv.push(*it);
  for (CUcontext c : stack) registry.seen(c);
  CUresult last = CUDA_SUCCESS;  // the first failure's code
  ContextRegistry::Driver api;
  api.push = [&](void* c) { return drv.push(static_cast<CUcontext>(c)) == CUDA_SUCCESS; };
  api.sync = [&] {
    const CUresult r = drv.sync();
    if (last == CUDA_SUCCESS) last = r;
    return r == CUDA_SUCCESS;
  };
  api.pop = [&] {
    CUcontext c = nullptr;
    drv.pop(&c);
  };
  std::string err = registry.sync_all(api);
  if (!err.empty()) err += fmt::format(" ({})", static_cast<int>(last));
  return err;
}

void mark_own_contexts() {
  Driver& drv = driver();
  CUcontext c = nullptr;
  if (drv.ok && drv.current(&c) == CUDA_SUCCESS && c) ContextRegistry::process().seen(c);
  for (void* k : ContextRegistry::process().known()) own().insert(k);
}

int foreign_contexts() {
  int n = 0;
  for (void* k : ContextRegistry::process().known()) n += own().count(k) ? 0 : 1;
  return n;
}

}  // namespace cudal2
