// The current device's SM count, asked once per process: what a launch that fills one wave of
// resident CTAs is sized by (families stream_rows and stream_sweep). 1 when the query fails, so a
// launch shape is never zero.
#pragma once
#include <cuda_runtime.h>

namespace cudal2_device {
namespace {

inline int device_sms() {
  static const int n = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      v = 1;
    }
    return v < 1 ? 1 : v;
  }();
  return n;
}

}  // namespace
}  // namespace cudal2_device
