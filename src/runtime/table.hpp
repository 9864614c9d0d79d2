#pragma once
// The dispatch tables compiled into libcudal2_runtime, one per GPU it was tuned on: generated at
// build time by cudal2_rtgen (src/runtime/rtgen.cpp) from the exported JSON tables
// (CUDAL2_RUNTIME_TABLES), together with one .cu per compiled kernel, each exposing the kernel C
// ABI under its own prefix (cudal2_rt_t<j>_k<i>_run ...). A handle uses the table of the device it
// is created on (runtime/select.hpp). Kernels of the `cublaslt` family are not compiled: each is one
// cuBLASLt algorithm configuration, carried here as data (LtConfig) and run by runtime.cpp
// through cublasLtMatmul.
#include <cstddef>
#include <cstdint>

#include "cudal2_kernel_abi.h"

namespace cudal2::rt {

// A `cublaslt` kernel's configuration (src/codegen/family_cublaslt.hpp): the values
// cublasLtMatmulAlgoConfigSetAttribute takes; cluster is the cublasLtClusterShape_t id. The split-K
// count is a runtime knob (Entry::splits).
struct LtConfig {
  int algo, tile, stages, reduction, swizzle, custom, inner, cluster;
};

struct KernelInfo {
  const char* spec;    // compile-time spec text (the kernel as compiled)
  const char* family;  // "mma", "tiny", "sm90_cutlass", ...
  int layout;          // CUDAL2_LAYOUT_NN / _TN
  int accum;           // CUDAL2_ACCUM_F32 / _F16
  int tile_m, tile_n, tile_k;
  // Families other than mma and tiny may keep per-kernel host state (CUTLASS adapters, cached
  // plans): their calls are serialized by a per-kernel mutex.
  bool stateless;
  // true: a `cublaslt` configuration (lt): no compiled code, the three function pointers are null.
  bool cublaslt;
  LtConfig lt;
  int (*can_implement)(const cudal2_gemm_args*, char*, size_t);
  size_t (*workspace_size)(const cudal2_gemm_args*);
  int (*run)(const cudal2_gemm_args*, void*, char*, size_t);
};

struct Entry {
  int accum, layout;  // sorted by (accum, layout, m, n, k)
  std::int64_t m, n, k;
  int kernel;  // index into kKernels; -1: cuBLASLt (it was faster, or nothing was measured)
  int raster, swizzle, decomposition, splits;  // the runtime knobs of the measured spec
  const char* spec;                            // full spec text (with knobs), or "cublaslt"
  float us;                                    // measured time of what runs here (0: unknown)
  float fallback_us;                           // measured cuBLASLt (or proxy) time (0: unknown)
};

// One GPU's table: what `cudal2 export` wrote for it.
struct Table {
  const char* gpu;     // the device name the measurements were taken on (cudaDeviceProp::name)
  const char* source;  // the table's file name
  int cc_major, cc_minor;
  const KernelInfo* kernels;
  int num_kernels;
  const Entry* entries;  // sorted by (accum, layout, m, n, k)
  int num_entries;
};

extern const Table kTables[];
extern const int kNumTables;

}  // namespace cudal2::rt
