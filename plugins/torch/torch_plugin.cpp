// torch.matmul for the benchmark, behind a C ABI. The C++ call is at::mm_out, what torch.matmul
// dispatches to for 2-D fp16 operands, minus Python's own call overhead.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/version.h>

#include <cuda_runtime.h>
#include <cstdio>
#include <exception>

#include "cudal2_torch_abi.h"

namespace {
struct Binding {
  at::Tensor a, b, c;
  int device = 0;
};
void put(char* err, size_t len, const char* msg) {
  if (err && len) std::snprintf(err, len, "%s", msg);
}
}  // namespace

extern "C" int cudal2_torch_abi_version(void) { return CUDAL2_TORCH_ABI_VERSION; }
extern "C" const char* cudal2_torch_version(void) { return TORCH_VERSION; }

extern "C" int cudal2_torch_bind(const void* A, const void* B, void* C, int64_t m, int64_t n, int64_t k,
                                 int b_col_major, void** handle, char* err, size_t errlen) {
  try {
    int dev = 0;
    cudaGetDevice(&dev);
    auto opt = at::TensorOptions().dtype(at::kHalf).device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(dev)));
    auto* h = new Binding;
    h->device = dev;
    h->a = at::from_blob(const_cast<void*>(A), {m, k}, opt);
    h->b = b_col_major ? at::from_blob(const_cast<void*>(B), {k, n}, {1, k}, opt)
                       : at::from_blob(const_cast<void*>(B), {k, n}, opt);
    h->c = at::from_blob(C, {m, n}, opt);
    *handle = h;
    return 0;
  } catch (const std::exception& e) {
    put(err, errlen, e.what());
    return 1;
  }
}

extern "C" int cudal2_torch_run(void* handle, void* stream, char* err, size_t errlen) {
  try {
    auto* h = static_cast<Binding*>(handle);
    auto ext =
        c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(stream), static_cast<c10::DeviceIndex>(h->device));
    c10::cuda::CUDAStreamGuard guard(ext);
    at::mm_out(h->c, h->a, h->b);
    return 0;
  } catch (const std::exception& e) {
    put(err, errlen, e.what());
    return 1;
  }
}

extern "C" void cudal2_torch_unbind(void* handle) { delete static_cast<Binding*>(handle); }
