/* The C ABI every generated kernel artifact (a shared object) exposes. The evaluator's judge
 * dlopens an artifact and calls only these; nothing links them. Return 0 on success; on failure
 * write a message into err (may be NULL). */
#ifndef CUDAL2_KERNEL_ABI_H
#define CUDAL2_KERNEL_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAL2_KERNEL_ABI_VERSION 1

/* One GEMM call: C (row-major MxN) = A (row-major MxK) * B (KxN; layout fixed by the artifact).
 * The runtime knobs need no recompile: raster 0=heuristic 1=along M 2=along N; swizzle 1,2,4,8;
 * decomposition 0=heuristic 1=data-parallel 2=split-K 3=stream-K (stream-K scheduler only);
 * splits >= 1. */
typedef struct cudal2_gemm_args {
  int64_t m, n, k;
  const void* A;
  const void* B;
  void* C;
  void* workspace;
  size_t workspace_bytes;
  int raster, swizzle, decomposition, splits;
} cudal2_gemm_args;

int cudal2_abi_version(void);
/* The canonical spec text the artifact was generated from. */
const char* cudal2_describe(void);
/* 0 when the artifact can run these arguments (shape, alignment, knobs); otherwise why not. */
int cudal2_can_implement(const cudal2_gemm_args* args, char* err, size_t errlen);
/* Bytes of device workspace run() needs for these arguments. The caller allocates it for this
 * artifact alone, zero-fills it once before the first run(), and lets nobody else write it; an
 * artifact that keeps state there (split-K arrival counters) must leave it as it found it when
 * each launch completes, so no memset is needed between calls and every call is capturable. */
size_t cudal2_workspace_size(const cudal2_gemm_args* args);
/* Enqueue the GEMM on stream (a cudaStream_t). No allocation or synchronization: capturable. */
int cudal2_run(const cudal2_gemm_args* args, void* stream, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
