// cuBLASLt plumbing shared by everything that calls cuBLASLt on a cudal2 problem: the `cublaslt`
// family's artifact (cublaslt_gemm.h), the judge's runner for it (src/baselines/cublaslt_config.cpp),
// the enumeration of its space (src/baselines/cublaslt_space.cpp) and the runtime
// (src/runtime/runtime.cpp), so all describe the problem, configure an algorithm and call
// cublasLtMatmul the same way. Host code only.
//
// Row-major C (MxN) = A (MxK) * B is computed as column-major C^T = B^T A^T, as the cuBLASLt
// baseline does: cuBLASLt's A is our B (N x K column-major view: op N for our NN layout's
// row-major KxN, op T for TN's column-major KxN), its B our A, its C and D our C.
#ifndef CUDAL2_CUBLASLT_PLAN_H
#define CUDAL2_CUBLASLT_PLAN_H
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

namespace cudal2_lt {

// cublasLtClusterShape_t of cuBLASLt 13.1: {id, M, N} (the third dimension is always 1).
// tests/unit/cublaslt_family_test.cpp checks this table against cublasLt.h.
constexpr int kClusterShapeCount = 51;
constexpr int kClusterShapes[kClusterShapeCount][3] = {
    {0, 0, 0},   {2, 1, 1},   {3, 2, 1},   {4, 4, 1},   {5, 1, 2},   {6, 2, 2},   {7, 4, 2},   {8, 1, 4},   {9, 2, 4},
    {10, 4, 4},  {11, 8, 1},  {12, 1, 8},  {13, 8, 2},  {14, 2, 8},  {15, 16, 1}, {16, 1, 16}, {17, 3, 1},  {18, 5, 1},
    {19, 6, 1},  {20, 7, 1},  {21, 9, 1},  {22, 10, 1}, {23, 11, 1}, {24, 12, 1}, {25, 13, 1}, {26, 14, 1}, {27, 15, 1},
    {28, 3, 2},  {29, 5, 2},  {30, 6, 2},  {31, 7, 2},  {32, 1, 3},  {33, 2, 3},  {34, 3, 3},  {35, 4, 3},  {36, 5, 3},
    {37, 3, 4},  {38, 1, 5},  {39, 2, 5},  {40, 3, 5},  {41, 1, 6},  {42, 2, 6},  {43, 1, 7},  {44, 2, 7},  {45, 1, 9},
    {46, 1, 10}, {47, 1, 11}, {48, 1, 12}, {49, 1, 13}, {50, 1, 14}, {51, 1, 15},
};

// One algorithm configuration (cublasLtMatmulAlgoConfigAttributes_t values).
struct Config {
  int algo = 0, tile = 0, stages = 0, splits = 1, reduction = 0, swizzle = 0, custom = 0, inner = 0, cluster = 0;
};

inline bool operator==(const Config& a, const Config& b) {
  return a.algo == b.algo && a.tile == b.tile && a.stages == b.stages && a.splits == b.splits &&
         a.reduction == b.reduction && a.swizzle == b.swizzle && a.custom == b.custom && a.inner == b.inner &&
         a.cluster == b.cluster;
}

// Descriptors of one problem; `failed` names the call that failed, if any.
struct Problem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const char* failed = nullptr;
};

inline cublasComputeType_t compute_type(bool f16_accum) { return f16_accum ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F; }
inline cudaDataType_t scale_type(bool f16_accum) { return f16_accum ? CUDA_R_16F : CUDA_R_32F; }

inline void destroy(Problem& p) {
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.c) cublasLtMatrixLayoutDestroy(p.c);
  if (p.op) cublasLtMatmulDescDestroy(p.op);
  p.a = p.b = p.c = nullptr;
  p.op = nullptr;
}

// Returns false (with p.status and p.failed set) when cuBLASLt refuses a descriptor. ldc: C's row
// stride in elements (0: n, C's rows packed).
inline bool make_problem(int64_t m, int64_t n, int64_t k, bool tn, bool f16_accum, Problem& p, int64_t ldc = 0) {
  auto ok = [&](cublasStatus_t st, const char* what) {
    if (st == CUBLAS_STATUS_SUCCESS) return true;
    p.status = st;
    p.failed = what;
    return false;
  };
  if (!ok(cublasLtMatmulDescCreate(&p.op, compute_type(f16_accum), scale_type(f16_accum)), "cublasLtMatmulDescCreate"))
    return false;
  const cublasOperation_t op_a = tn ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  if (!ok(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a), "set TRANSA") ||
      !ok(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b), "set TRANSB"))
    return false;
  const uint64_t um = static_cast<uint64_t>(m), un = static_cast<uint64_t>(n), uk = static_cast<uint64_t>(k);
  if (!ok(tn ? cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16F, uk, un, k)
             : cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16F, un, uk, n),
          "cublasLtMatrixLayoutCreate(A)") ||
      !ok(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16F, uk, um, k), "cublasLtMatrixLayoutCreate(B)") ||
      !ok(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_16F, un, um, ldc > 0 ? ldc : n), "cublasLtMatrixLayoutCreate(C)"))
    return false;
  return true;
}

// cublasLtMatmulAlgoInit, then every configuration attribute. Returns the first failure, with
// *failed naming the call.
inline cublasStatus_t configure(cublasLtHandle_t h, bool f16_accum, const Config& c, cublasLtMatmulAlgo_t* algo,
                                const char** failed) {
  memset(algo, 0, sizeof *algo);
  cublasStatus_t st = cublasLtMatmulAlgoInit(h, compute_type(f16_accum), scale_type(f16_accum), CUDA_R_16F, CUDA_R_16F,
                                             CUDA_R_16F, CUDA_R_16F, c.algo, algo);
  if (st != CUBLAS_STATUS_SUCCESS) {
    *failed = "cublasLtMatmulAlgoInit";
    return st;
  }
  const uint32_t tile = static_cast<uint32_t>(c.tile), stages = static_cast<uint32_t>(c.stages),
                 reduction = static_cast<uint32_t>(c.reduction), swizzle = static_cast<uint32_t>(c.swizzle),
                 custom = static_cast<uint32_t>(c.custom);
  const int32_t splits = c.splits;
  const uint16_t inner = static_cast<uint16_t>(c.inner), cluster = static_cast<uint16_t>(c.cluster);
  struct {
    cublasLtMatmulAlgoConfigAttributes_t attr;
    const void* value;
    size_t size;
    const char* name;
  } const set[] = {
      {CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, "set CUBLASLT_ALGO_CONFIG_TILE_ID"},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, "set CUBLASLT_ALGO_CONFIG_STAGES_ID"},
      {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, sizeof splits, "set CUBLASLT_ALGO_CONFIG_SPLITK_NUM"},
      {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction,
       "set CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME"},
      {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, "set CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING"},
      {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, "set CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION"},
      {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, "set CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID"},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, "set CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID"},
  };
  for (const auto& s : set) {
    st = cublasLtMatmulAlgoConfigSetAttribute(algo, s.attr, s.value, s.size);
    if (st != CUBLAS_STATUS_SUCCESS) {
      *failed = s.name;
      return st;
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// configure, then cublasLtMatmulAlgoCheck for problem p: *r gets the workspace it needs.
inline cublasStatus_t configure_checked(cublasLtHandle_t h, bool f16_accum, const Config& c, const Problem& p,
                                        cublasLtMatmulAlgo_t* algo, cublasLtMatmulHeuristicResult_t* r,
                                        const char** failed) {
  cublasStatus_t st = configure(h, f16_accum, c, algo, failed);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  memset(r, 0, sizeof *r);
  st = cublasLtMatmulAlgoCheck(h, p.op, p.a, p.b, p.c, p.c, algo, r);
  if (st != CUBLAS_STATUS_SUCCESS) *failed = "cublasLtMatmulAlgoCheck";
  return st;
}

// cuBLASLt's heuristic for p with at most max_workspace bytes of workspace: up to n results.
inline cublasStatus_t heuristic(cublasLtHandle_t h, const Problem& p, uint64_t max_workspace, int n,
                                cublasLtMatmulHeuristicResult_t* out, int* returned) {
  *returned = 0;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t st = cublasLtMatmulPreferenceCreate(&pref);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                            sizeof max_workspace);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(h, p.op, p.a, p.b, p.c, p.c, pref, n, out, returned);
  cublasLtMatmulPreferenceDestroy(pref);
  return st;
}

// One row-major C = A * B with algo on p (cuBLASLt's A is our B, its B our A, its C and D our C),
// alpha 1 and beta 0 in the accumulator's scale type.
inline cublasStatus_t matmul(cublasLtHandle_t h, const Problem& p, bool f16_accum, const cublasLtMatmulAlgo_t* algo,
                             const void* A, const void* B, void* C, void* workspace, size_t workspace_bytes,
                             cudaStream_t stream) {
  if (f16_accum) {
    const __half alpha = __float2half(1.0f), beta = __float2half(0.0f);
    return cublasLtMatmul(h, p.op, &alpha, B, p.a, A, p.b, &beta, C, p.c, C, p.c, algo, workspace, workspace_bytes,
                          stream);
  }
  const float alpha = 1.0f, beta = 0.0f;
  return cublasLtMatmul(h, p.op, &alpha, B, p.a, A, p.b, &beta, C, p.c, C, p.c, algo, workspace, workspace_bytes,
                        stream);
}

// The configuration an algorithm carries (one the heuristic returned, say).
inline Config read_config(const cublasLtMatmulAlgo_t& algo) {
  Config c;
  size_t w = 0;
  int32_t id = 0, splits = 1;
  uint32_t tile = 0, stages = 0, reduction = 0, swizzle = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, sizeof splits, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
  c.algo = id, c.tile = static_cast<int>(tile), c.stages = static_cast<int>(stages), c.splits = splits;
  c.reduction = static_cast<int>(reduction), c.swizzle = static_cast<int>(swizzle), c.custom = static_cast<int>(custom);
  c.inner = inner, c.cluster = cluster;
  return c;
}

// A configuration as the `cublaslt` family's spec text writes it (codegen/family_cublaslt.cpp:
// "cublaslt tn f32 algo=66 tile=20 stages=35 reduction=0 swizzle=0 custom=0 inner=0 cluster=2x1 |
// splits=1"), so that what the runtime reports running can be put in a table as it stands.
inline void config_text(const Config& c, bool tn, bool f16, char* out, size_t size) {
  char cluster[16] = "auto";
  for (const auto& s : kClusterShapes)
    if (s[0] == c.cluster && s[0] != 0) snprintf(cluster, sizeof cluster, "%dx%d", s[1], s[2]);
  snprintf(out, size,
           "cublaslt %s %s algo=%d tile=%d stages=%d reduction=%d swizzle=%d custom=%d inner=%d cluster=%s | "
           "splits=%d",
           tn ? "tn" : "nn", f16 ? "f16" : "f32", c.algo, c.tile, c.stages, c.reduction, c.swizzle, c.custom, c.inner,
           cluster, c.splits);
}

// Minimum pointer alignment (bytes) the algorithm needs for cuBLASLt's A, B, C and D.
struct Alignment {
  uint32_t a = 16, b = 16, c = 16, d = 16;
};
inline Alignment min_alignment(const cublasLtMatmulAlgo_t& algo) {
  Alignment al;
  size_t w = 0;
  cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, &al.a, sizeof al.a, &w);
  cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, &al.b, sizeof al.b, &w);
  cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, &al.c, sizeof al.c, &w);
  cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, &al.d, sizeof al.d, &w);
  return al;
}

}  // namespace cudal2_lt

#endif
