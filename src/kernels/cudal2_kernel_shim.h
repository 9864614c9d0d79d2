// The C-ABI glue every family's artifact shares: the five entry points of cudal2_kernel_abi.h,
// written once here. A family's header provides, in its namespace (or as static members of a type),
//   const char* refusal(const cudal2_gemm_args& a);           // nullptr: can_implement says yes
//   size_t workspace_size(const cudal2_gemm_args& a);
//   const char* run(const cudal2_gemm_args& a, void* stream);  // nullptr: enqueued on stream
// (a non-null answer is why not: a string that outlives the call, such as a literal,
// cudaGetErrorString's, or a thread_local buffer), and the artifact exports them once, at global
// scope. Every family's header is configured by template arguments and leaves that to the
// generated source:
//   using cudal2_kernel = cudal2_mma::Gemm<cudal2_mma::Config<false, false, 64, 64, 32, 2, 2, 3>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "mma nn f32 tile=64x64x32 warps=2x2 stages=3")
// Host code only, no CUDA types: the artifacts of every family (CUDA or not) use it.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cudal2_kernel_abi.h"

namespace cudal2_shim {
namespace {

// Copies msg into the caller's buffer (err may be NULL, len 0).
inline void put_err(char* err, size_t len, const char* msg) {
  if (err && len) snprintf(err, len, "%s", msg);
}

// The ABI's failure convention: 0 when why is nullptr, else why in err and 1.
inline int answer(const char* why, char* err, size_t len) {
  if (!why) return 0;
  put_err(err, len, why);
  return 1;
}

// Whether every row of A and B starts 16 bytes aligned (16-byte cp.async and fragment loads): the
// pointers, K % 8 and, where B is row-major (NN: N-contiguous rows), N % 8.
inline bool rows_16b_aligned(const cudal2_gemm_args& a, bool b_k_contiguous) {
  const bool ptrs = (reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.B)) % 16 == 0;
  return ptrs && a.k % 8 == 0 && (b_k_contiguous || a.n % 8 == 0);
}

// Problem sizes every family takes (int32 inside the kernels): nullptr when they fit.
inline const char* sizes_refusal(const cudal2_gemm_args& a) {
  if (a.m < 1 || a.n < 1 || a.k < 1 || a.m > INT32_MAX || a.n > INT32_MAX || a.k > INT32_MAX)
    return "sizes must be in 1..2^31-1";
  return nullptr;
}

}  // namespace
}  // namespace cudal2_shim

// The five extern "C" entry points of cudal2_kernel_abi.h over K's three functions (K: a
// namespace or a type, see above); describe() answers spec_text.
#define CUDAL2_EXPORT_KERNEL_ABI(K, spec_text)                                                         \
  extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }                        \
  extern "C" const char* cudal2_describe(void) { return spec_text; }                                   \
  extern "C" int cudal2_can_implement(const cudal2_gemm_args* a, char* err, size_t len) {              \
    return cudal2_shim::answer(K::refusal(*a), err, len);                                              \
  }                                                                                                    \
  extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args* a) { return K::workspace_size(*a); } \
  extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char* err, size_t len) {          \
    return cudal2_shim::answer(K::run(*a, stream), err, len);                                          \
  }
