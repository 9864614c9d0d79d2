// Class: writes a file outside its scratch directory.
// Does: computes correctly, and on its first call creates cudal2_adv_escape_<ADV_TAG> in /tmp,
// the user's real home (from the password database, not $HOME), /var/tmp and /dev/shm. If any
// write succeeded it spoils C[0], so "ok" means every write was refused; the test also checks
// that none of the files exists.
// Caught as: ok (confined); the side effect is the check.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>
#include <string>
#include "cudal2_kernel_abi.h"

namespace {
constexpr int T = 16;
#ifndef ADV_TAG
#define ADV_TAG "standalone"
#endif
__global__ void spoil(__half* C) { C[0] = __float2half(1000.f); }  // the escape worked: fail loudly
bool attempt() {
  const passwd* pw = getpwuid(getuid());
  bool any = false;
  for (const std::string dir : {"/tmp", pw ? pw->pw_dir : "/root", "/var/tmp", "/dev/shm"}) {
    const int fd = open((dir + "/cudal2_adv_escape_" ADV_TAG).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    any |= fd >= 0 && close(fd) == 0;
  }
  return any;
}
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
}  // namespace

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: writes files outside its scratch directory"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  static const bool escaped = attempt();  // once per process
  launch(a, static_cast<cudaStream_t>(stream));
  if (escaped) spoil<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<__half*>(a->C));
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
