// cudal2_last_error, cudal2_status_string and the runtime's fail() (runtime/last_error.hpp).
#include "runtime/last_error.hpp"

#include <cstdarg>
#include <cstdio>

namespace {
thread_local char g_err[512];
}  // namespace

namespace cudal2::rt {

cudal2_status_t fail(cudal2_status_t st, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  return st;
}

void clear_error() { g_err[0] = 0; }

}  // namespace cudal2::rt

extern "C" {

const char* cudal2_status_string(cudal2_status_t s) {
  switch (s) {
    case CUDAL2_STATUS_SUCCESS:
      return "success";
    case CUDAL2_STATUS_INVALID_VALUE:
      return "invalid value";
    case CUDAL2_STATUS_MISALIGNED:
      return "misaligned pointer";
    case CUDAL2_STATUS_INSUFFICIENT_WORKSPACE:
      return "insufficient workspace";
    case CUDAL2_STATUS_CUDA_ERROR:
      return "CUDA error";
    case CUDAL2_STATUS_CUBLAS_ERROR:
      return "cuBLASLt error";
    case CUDAL2_STATUS_KERNEL_ERROR:
      return "kernel error";
    case CUDAL2_STATUS_ALLOC_FAILED:
      return "allocation failed";
    case CUDAL2_STATUS_INTERNAL_ERROR:
      return "internal error";
  }
  return "unknown status";
}

const char* cudal2_last_error(void) { return g_err; }

}  // extern "C"
