// A candidate whose kernel never finishes: it spins on a value the inputs never hold. The tuner
// must kill the judge after its timeout, record "hang" and go on.
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

namespace {
__global__ void spin(const volatile unsigned* A) {
  while (A[0] != 0x7fff7fffu) __nanosleep(1000);  // two fp16 NaNs: never in our inputs
}
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "hanging test candidate"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  spin<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const volatile unsigned*>(a->A));
  return 0;
}
