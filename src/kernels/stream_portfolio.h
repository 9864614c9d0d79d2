/* The `stream` and `stream_sweep` kernels libcudal2_runtime compiles for itself (src/runtime/stream_kernels.cu), as
 * data the host side of the runtime reads (src/runtime/stream_portfolio.cpp): device code and the
 * runtime's host headers stay apart, as with the tables' generated kernels. */
#ifndef CUDAL2_STREAM_PORTFOLIO_H
#define CUDAL2_STREAM_PORTFOLIO_H
#include <stddef.h>

#include "cudal2_kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cudal2_stream_kernel {
  const char* spec; /* the canonical spec text (codegen/family_stream.cpp), splits left out */
  int tn, f16;      /* layout TN; fp16 accumulation */
  int toks, rows;   /* tokens (M) and B rows (N) one CTA covers */
  int warps_k;      /* warps splitting a CTA's K range */
  int (*can_implement)(const cudal2_gemm_args*, char*, size_t);
  size_t (*workspace_size)(const cudal2_gemm_args*);
  int (*run)(const cudal2_gemm_args*, void*, char*, size_t);
  int (*resident)(void); /* CTAs one SM holds at once (the occupancy calculator), 0 on failure */
  int sweep;             /* family stream_sweep (stream_sweep_gemm.cuh) rather than stream */
  int keep;              /* stream_sweep keep=1: B loaded without L1::no_allocate, its lines stay in the L2 */
} cudal2_stream_kernel;

/* The portfolio and its length. */
const cudal2_stream_kernel* cudal2_rt_stream_kernels(int* count);

#ifdef __cplusplus
}
#endif
#endif
