// A candidate that writes through a wild pointer: the launch faults with an illegal address and
// poisons the judge's CUDA context. The tuner must record "illegal-address" and go on.
#include <cuda_runtime.h>
#include "cudal2_kernel_abi.h"

namespace {
__global__ void wild_write(char* C) { C[(int64_t{1} << 40) + threadIdx.x] = 1; }
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "faulting test candidate"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  wild_write<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<char*>(a->C));
  return 0;
}
