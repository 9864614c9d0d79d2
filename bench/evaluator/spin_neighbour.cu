// A neighbour that keeps the GPU busy from another process: spin kernels over every SM, back to
// back, each SECONDS_PER_KERNEL long, until killed (or for the seconds given). Used by
// contention_call.sh: while it runs, the GPU time-slices between its context and the judge's and
// runner's, which is what a second user's job does to a measurement.
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -o spin_neighbour spin_neighbour.cu
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 600;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
    std::fprintf(stderr, "spin_neighbour: no GPU\n");
    return 1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long launches = 0;
  while (std::chrono::steady_clock::now() < end) {
    spin<<<sms, 128>>>(20000000ull);  // 20 ms
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    ++launches;
  }
  std::printf("spin_neighbour: %ld kernels of 20 ms on %d SMs\n", launches, sms);
  return 0;
}
