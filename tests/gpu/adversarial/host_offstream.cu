// Class: work hidden from one kind of request only (the host timer), which one median over every
// request does not see.
// Does: its kernel (a 16x16 tiled GEMM after 1 ms of set-up spin) runs on the timed stream
// whenever calls come back to back, follow other work on the timed stream or are captured (eager
// and graph batches, the single call's graph); a call that comes alone (the host timer's, and verification's) forks a
// private stream from the timed one and runs there, unjoined: the host timer's synchronisation of the timed stream does
// not wait for it, the runner's device synchronisation before its answer does. Right values everywhere; host-timer
// times about 400 us short. Caught as: timing-mismatch (the wall-clock cross-check per kind of request: host) |
// wrong-result | inconsistent-time | implausible-time.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>

#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
__global__ void gemm16(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.y * int64_t(T) + ty, j = blockIdx.x * int64_t(T) + tx;
  float acc = 0.f;
  for (int64_t p = 0; p < k; p += T) {
    As[ty][tx] = i < m && p + tx < k ? __half2float(A[i * k + p + tx]) : 0.f;
    Bs[ty][tx] = p + ty < k && j < n ? __half2float(B[(p + ty) * n + j]) : 0.f;
    __syncthreads();
    for (int q = 0; q < T; ++q) acc += As[ty][q] * Bs[q][tx];
    __syncthreads();
  }
  if (i < m && j < n) C[i * n + j] = __float2half(acc);
}
void launch(const cudal2_gemm_args* a, cudaStream_t s) {
  gemm16<<<dim3((a->n + T - 1) / T, (a->m + T - 1) / T), dim3(T, T), 0, s>>>(
      static_cast<const __half*>(a->A), static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
}
__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
cudaStream_t side = nullptr;
cudaEvent_t fork = nullptr;
std::chrono::steady_clock::time_point last{};
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: hides its work from the host timer only"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  auto s = static_cast<cudaStream_t>(stream);
  if (!side) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  }
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(s, &st);
  const auto now = std::chrono::steady_clock::now();
  // Alone: nothing captured, nothing queued before it on the timed stream (a chained eager batch
  // launches an interlude first), and no call just before it.
  const bool alone = st == cudaStreamCaptureStatusNone && cudaStreamQuery(s) == cudaSuccess &&
                     now - last > std::chrono::microseconds(300);
  last = now;
  cudaStream_t where = s;
  if (alone) {
    cudaEventRecord(fork, s);
    cudaStreamWaitEvent(side, fork, 0);
    where = side;
  }
  spin<<<1, 1, 0, where>>>(1000000ull);
  launch(a, where);
  return 0;
}
