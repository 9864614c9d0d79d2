// CUPTI through dlopen (runner/context_watch.hpp): the declarations below are CUPTI's C ABI
// (cupti_callbacks.h), so that building needs neither CUPTI's headers nor its library.
#include "runner/context_watch.hpp"

#include <dlfcn.h>

#include <string>

#include "runner/context_registry.hpp"

#ifndef CUDAL2_CUDA_LIBRARY_DIR
#define CUDAL2_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace cudal2 {

namespace {

// CUpti_CallbackDomain, CUpti_CallbackIdResource and CUpti_ResourceData as cupti_callbacks.h has them.
constexpr int kDomainResource = 3;
constexpr unsigned kContextCreated = 1, kContextDestroyStarting = 2;
struct ResourceData {
  void* context;
  void* stream;
  void* descriptor;
};
using Callback = void (*)(void*, int, unsigned, const void*);

void on_resource(void*, int domain, unsigned cbid, const void* data) {
  if (domain != kDomainResource || !data) return;
  const auto* d = static_cast<const ResourceData*>(data);
  if (cbid == kContextCreated) ContextRegistry::process().created(d->context);
  if (cbid == kContextDestroyStarting) ContextRegistry::process().destroyed(d->context);
}

}  // namespace

std::string watch_context_creation() {
  void* lib = nullptr;
  std::string tried;
  // LD_LIBRARY_PATH first (the runner's environment keeps it), then where the toolkit was at build.
  for (const std::string& name :
       {std::string("libcupti.so.13"), std::string("libcupti.so"),
        std::string(CUDAL2_CUDA_LIBRARY_DIR) + "/libcupti.so", std::string("/usr/local/cuda/lib64/libcupti.so"),
        std::string("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so")}) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (!lib) return "CUPTI not loaded (tried " + tried + ")";
  auto subscribe = reinterpret_cast<int (*)(void**, Callback, void*)>(dlsym(lib, "cuptiSubscribe"));
  auto enable = reinterpret_cast<int (*)(unsigned, void*, int, unsigned)>(dlsym(lib, "cuptiEnableCallback"));
  if (!subscribe || !enable) return "CUPTI lacks cuptiSubscribe/cuptiEnableCallback";
  void* subscriber = nullptr;
  // Fails when another subscriber (a profiler) holds CUPTI: then the stack is all we see.
  if (const int r = subscribe(&subscriber, on_resource, nullptr); r != 0)
    return "cuptiSubscribe failed (" + std::to_string(r) + ")";
  for (const unsigned cbid : {kContextCreated, kContextDestroyStarting})
    if (const int r = enable(1, subscriber, kDomainResource, cbid); r != 0)
      return "cuptiEnableCallback failed (" + std::to_string(r) + ")";
  return "";  // the library stays loaded: the driver calls into it for the process's life
}

}  // namespace cudal2
