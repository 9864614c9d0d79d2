// The launch gate's kernel (runtime/launch_gate.hpp; declared for the host side there: device
// code does not include src/).
#include <cuda_runtime.h>

namespace {

// One thread spinning (with sleeps) until the host writes gen into flag[0], or timeout_ns of the
// GPU's global timer have passed (then flag[1] = gen).
__global__ void gate_kernel(volatile unsigned* flag, unsigned gen, unsigned long long timeout_ns) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (flag[0] != gen) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      flag[1] = gen;
      return;
    }
    __nanosleep(256);
  }
}

}  // namespace

namespace cudal2::rt {

cudaError_t launch_gate_kernel(unsigned* flag, unsigned gen, unsigned long long timeout_ns, cudaStream_t s) {
  gate_kernel<<<1, 1, 0, s>>>(flag, gen, timeout_ns);
  return cudaGetLastError();
}

}  // namespace cudal2::rt
