/* cudal2 runtime: HGEMM (fp16 A, B, C; fp32 or fp16 accumulation) dispatched to kernels tuned
 * per shape, compiled ahead of time into libcudal2_runtime (no nvcc at call time) or tuned
 * cuBLASLt algorithm configurations, and to cuBLASLt's heuristic for shapes the table does not
 * cover. See docs/runtime.md.
 *
 *   C (row-major M x N) = A (row-major M x K) * B (K x N: row-major "nn" or column-major "tn")
 *
 * Calls enqueue work on `stream` and return: no allocation, no synchronization, no host-device
 * copy, so they can be captured into a CUDA graph. The one exception: the first call for a shape
 * that is not in the table (per handle) creates its cuBLASLt descriptors and dispatch decision
 * on the host (no device allocation); call once before capturing if the host must not allocate. */
#ifndef CUDAL2_CUDAL2_H
#define CUDAL2_CUDAL2_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CUDAL2_API
#else
#define CUDAL2_API __attribute__((visibility("default")))
#endif

/* Same type as cudaStream_t (no CUDA header needed); NULL is the legacy default stream. */
struct CUstream_st;
typedef struct CUstream_st* cudal2_stream_t;

typedef enum cudal2_status {
  CUDAL2_STATUS_SUCCESS = 0,
  CUDAL2_STATUS_INVALID_VALUE = 1,          /* a size < 1 or > 2^31-1, a NULL operand, an unknown enum */
  CUDAL2_STATUS_MISALIGNED = 2,             /* A, B or C not 16-byte aligned, a workspace not 256-byte */
  CUDAL2_STATUS_INSUFFICIENT_WORKSPACE = 3, /* cudal2_workspace_size() says how much */
  CUDAL2_STATUS_CUDA_ERROR = 4,             /* a CUDA runtime call or kernel launch failed */
  CUDAL2_STATUS_CUBLAS_ERROR = 5,           /* the cuBLASLt fallback failed */
  CUDAL2_STATUS_KERNEL_ERROR = 6,           /* a table kernel refused or failed to launch */
  CUDAL2_STATUS_ALLOC_FAILED = 7,           /* cudal2_create could not allocate its workspace */
  CUDAL2_STATUS_INTERNAL_ERROR = 8
} cudal2_status_t;

typedef enum cudal2_layout { CUDAL2_LAYOUT_NN = 0, CUDAL2_LAYOUT_TN = 1 } cudal2_layout_t;
typedef enum cudal2_accum { CUDAL2_ACCUM_F32 = 0, CUDAL2_ACCUM_F16 = 1 } cudal2_accum_t;

typedef struct cudal2_context* cudal2_handle_t;

/* Bytes at the start of every workspace that the runtime keeps zero between calls (split-K
 * arrival counters): a caller's workspace must be zero-filled once (cudaMemset) before first use. */
#define CUDAL2_WORKSPACE_ZERO_BYTES ((size_t)262144)
/* The handle's own workspace when cudal2_options.workspace_bytes is 0: the zero area + 32 MiB. */
#define CUDAL2_DEFAULT_WORKSPACE_BYTES (CUDAL2_WORKSPACE_ZERO_BYTES + ((size_t)32 << 20))

typedef struct cudal2_options {
  /* Size of the handle's own device workspace (allocated and zeroed once in cudal2_create);
   * 0: CUDAL2_DEFAULT_WORKSPACE_BYTES, raised to what the table's kernels need. */
  size_t workspace_bytes;
  /* Off-table shapes run the nearest table shape's kernel when every dimension is within this
   * factor of it (and the kernel can run the shape and was measured faster than cuBLASLt there);
   * 0 or less: off-table shapes go to cuBLASLt. Default (options NULL): 0, off: measured on the
   * H100 over 54 off-grid LLM shapes, a neighbour's cuBLASLt configuration was 0.62 of auto-tuning
   * on medium shapes (bench/results/h100/runtime/). */
  double neighbour_factor;
  /* 0: ignore the table, every call goes to cuBLASLt (for comparisons). Default: 1. */
  int use_table;
  /* How an off-table shape that runs on cuBLASLt gets its algorithm (cudal2_tune_t):
   * CUDAL2_TUNE_BACKGROUND: the first call runs the heuristic's top-1 and returns at once; a
   * thread of the handle times cuBLASLt's top heuristic candidates (up to 100) on operands of its
   * own, each as a CUDA graph of back-to-back calls on its own stream, and swaps the fastest in
   * for later calls (cudal2_tune_wait waits for it). The GPU is shared meanwhile: the tuning
   * costs the caller's work some throughput for a while, and the first calls and the later ones
   * may differ in their last bits (another algorithm's summation order).
   * CUDAL2_TUNE_BLOCKING: the first call that is not being captured into a graph times the same
   * candidates on its own operands, waits for them, and keeps the fastest.
   * CUDAL2_TUNE_OFF: the heuristic's top-1, no timing, no synchronization.
   * Default (options NULL): CUDAL2_TUNE_BACKGROUND, or what CUDAL2_TUNE_UNSEEN says (0 off,
   * 1 blocking, 2 background). */
  int tune_unseen;
} cudal2_options;

typedef enum cudal2_tune { CUDAL2_TUNE_OFF = 0, CUDAL2_TUNE_BLOCKING = 1, CUDAL2_TUNE_BACKGROUND = 2 } cudal2_tune_t;

/* Where a call goes. */
typedef enum cudal2_path {
  CUDAL2_PATH_TABLE_KERNEL = 0,     /* the table's kernel for this exact shape */
  CUDAL2_PATH_NEIGHBOUR_KERNEL = 1, /* off-table: the nearest table shape's kernel */
  CUDAL2_PATH_CUBLASLT = 2,         /* cuBLASLt heuristic top-1 */
  CUDAL2_PATH_BUCKET_KERNEL = 3,    /* off-table M of a tuned (N, K): the kernel of a tuned M's entry */
  CUDAL2_PATH_STREAM_KERNEL = 4     /* bandwidth-bound (few tokens, wide weights): the stream rule's kernel */
} cudal2_path_t;

typedef struct cudal2_dispatch_info {
  cudal2_path_t path;
  const char* spec; /* the kernel's spec text (static storage); on cuBLASLt's path, the configuration the handle's
                     * calls of the shape run now ("cublaslt tn f32 algo=... | splits=N", valid while the handle
                     * lives), or "cublaslt" before a call has planned the shape */
  int64_t table_m, table_n, table_k; /* the table shape it came from; 0 for cuBLASLt */
  size_t workspace_bytes;            /* workspace the call needs, the zero area included */
} cudal2_dispatch_info;

/* Creates a handle on the current device: a cuBLASLt handle, the dispatch cache and a zeroed
 * device workspace. Synchronizes the device. options may be NULL (defaults). A handle may be
 * used from any number of threads at once; its own workspace, though, serves one stream at a
 * time: concurrent calls on different streams pass their own workspaces (or use a handle each). */
CUDAL2_API cudal2_status_t cudal2_create(cudal2_handle_t* handle, const cudal2_options* options);
CUDAL2_API cudal2_status_t cudal2_destroy(cudal2_handle_t handle);

/* One GEMM. handle NULL: a process-wide default handle, created by the first such call.
 * workspace NULL: the handle's own; otherwise workspace_bytes of device memory, 256-byte
 * aligned, zero-filled once before its first use, used by one stream at a time. A, B and C
 * 16-byte aligned. */
CUDAL2_API cudal2_status_t cudal2_gemm(cudal2_handle_t handle, cudal2_layout_t layout, cudal2_accum_t accum, int64_t m,
                                       int64_t n, int64_t k, const void* A, const void* B, void* C, void* workspace,
                                       size_t workspace_bytes, cudal2_stream_t stream);

/* Where cudal2_gemm would send this problem, and the workspace it needs. Like the first call for
 * an off-table shape, may create its cuBLASLt descriptors. */
CUDAL2_API cudal2_status_t cudal2_query(cudal2_handle_t handle, cudal2_layout_t layout, cudal2_accum_t accum, int64_t m,
                                        int64_t n, int64_t k, cudal2_dispatch_info* info);

/* Waits until the handle's background tuning (CUDAL2_TUNE_BACKGROUND) has finished every shape
 * queued so far; returns at once for a handle that tunes no other way. handle NULL: the default
 * handle. *tuned (may be NULL): shapes whose tuning has finished since the handle was made. */
CUDAL2_API cudal2_status_t cudal2_tune_wait(cudal2_handle_t handle, long* tuned);

CUDAL2_API const char* cudal2_status_string(cudal2_status_t status);
/* The message of the last failing call on this thread ("" if none). Valid until this thread's
 * next cudal2 call. */
CUDAL2_API const char* cudal2_last_error(void);

/* A table the library was built with: the GPU it was measured on, its file, kernel and entry
 * counts. The library carries one table per GPU; a handle uses the one whose GPU name and compute
 * capability are its device's (CUDAL2_TABLE=<gpu name or file name> picks another of the same
 * compute capability, CUDAL2_TABLE=none none), and a device without one runs everything through
 * cuBLASLt. CUDAL2_M_BUCKETS=up|down|nearest|off (default off) is the rule for an off-table M of a
 * tuned (N, K) (docs/runtime.md). Both are read by cudal2_create. */
typedef struct cudal2_table_info {
  const char* gpu;
  const char* source;
  int kernels;
  int entries;
} cudal2_table_info;
/* The table the current device uses (all empty/0 when it has none, or there is no device). */
CUDAL2_API cudal2_table_info cudal2_get_table_info(void);
/* Every table the library carries, 0 <= i < cudal2_get_table_count(). */
CUDAL2_API int cudal2_get_table_count(void);
CUDAL2_API cudal2_table_info cudal2_get_table_info_at(int i);

#ifdef __cplusplus
}
#endif
#endif
