// Standalone check-and-time harness for `wgmma` artifacts (family wgmma, src/kernels/wgmma_gemm.cuh),
// for when `cudal2 eval` is unavailable. Loads artifacts (.so with the kernel C ABI), and per shape:
//  - verifies each against cuBLAS (fp32 output, fp32 compute) on fresh uniform(-1,1) inputs, with C
//    poisoned (NaN) first and a guard band after C checked: relative Frobenius error, max error
//    against max |ref|, every element written, nothing written past C; then runs it again on the
//    same workspace (split-K counters must have re-armed themselves) and wants the same bits
//    (--no-time prints a hash of them, to compare runs);
//  - times each artifact and cuBLASLt auto-tuning (the best of its top-16 heuristic algorithms, nn
//    and tn; each timed, the fastest kept) with the graph timer: a CUDA graph of `calls` launches,
//    replays timed with events, median of `reps` replays per call, methods interleaved per rep.
// Build: nvcc -O2 -std=c++17 bench/wgmma_time.cu -lcublas -lcublasLt -ldl -o wgmma_time
// Run:   wgmma_time [--reps 30] [--no-time] [--shape M,N,K ...] art1.so[@raster,swizzle[,splits]] ...
//        splits: 1 data-parallel (default), 0 auto, > 1 split-K (refused where the tiles fill the
//        SMs).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../src/kernels/cudal2_kernel_abi.h"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CB(x)                                                                    \
  do {                                                                           \
    int s_ = static_cast<int>(x);                                                \
    if (s_ != 0) {                                                               \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, s_); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

struct Art {
  std::string path, desc;
  int raster = 0, swizzle = 1, splits = 1;  // runtime knobs: an argument "art.so@R,S[,P]"
  bool tn = false, f16 = false;
  int (*can)(const cudal2_gemm_args*, char*, size_t);
  int (*run)(const cudal2_gemm_args*, void*, char*, size_t);
  size_t (*ws)(const cudal2_gemm_args*);
};

__global__ void fill_uniform(__half* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29, x *= 0x94D049BB133111EBull, x ^= x >> 32;
    p[i] = __float2half(float(x & 0xFFFFFF) / float(0x800000) - 1.0f);
  }
}
__global__ void transpose_kn(const __half* b, __half* bt, int64_t k, int64_t n) {  // (k x n) -> (n x k)
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < k * n; i += int64_t(gridDim.x) * blockDim.x)
    bt[(i % n) * k + i / n] = b[i];
}
__global__ void fill_const(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

// Per-call microseconds: a graph of `calls` launches, `reps` replays (interleaving is the caller's).
struct GraphTimer {
  cudaGraphExec_t exec = nullptr;
  int calls = 1;
  bool make(const std::function<void(cudaStream_t)>& fn, cudaStream_t s, int n) {
    calls = n;
    cudaGraph_t g;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return false;
    for (int i = 0; i < n; ++i) fn(s);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess) return false;
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return false;
    cudaGraphDestroy(g);
    return true;
  }
  double replay(cudaStream_t s) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a), cudaEventDestroy(b);
    return 1000.0 * ms / calls;
  }
  ~GraphTimer() {
    if (exec) cudaGraphExecDestroy(exec);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Lt {
  cublasLtHandle_t h;
  void* ws;
  size_t ws_bytes = 64 << 20;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  std::vector<cublasLtMatmulAlgo_t> algos;
  float alpha = 1, beta = 0;
  bool live = false;
  // Row-major C = A B as column-major C^T = B^T A^T: cuBLASLt's A is our B, its B our A.
  void setup(int64_t m, int64_t n, int64_t k, bool tn) {
    live = true;
    CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = tn ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (tn)
      CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, k, n, k));
    else
      CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, n, k, n));
    CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, k, m, k));
    CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, n, m, n));
    cublasLtMatmulPreference_t pref;
    CB(cublasLtMatmulPreferenceCreate(&pref));
    CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                            sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[16];
    int got = 0;
    CB(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 16, res, &got));
    for (int i = 0; i < got; ++i)
      if (res[i].state == CUBLAS_STATUS_SUCCESS) algos.push_back(res[i].algo);
    cublasLtMatmulPreferenceDestroy(pref);
  }
  void run(const cublasLtMatmulAlgo_t& a, const void* A, const void* B, void* C, cudaStream_t s) {
    CB(cublasLtMatmul(h, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &a, ws, ws_bytes, s));
  }
  void destroy() {
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    algos.clear();
    live = false;
  }
};

int main(int argc, char** argv) {
  int reps = 30;
  bool do_time = true;
  std::vector<std::array<int64_t, 3>> shapes;
  std::vector<Art> arts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps") {
      reps = std::atoi(argv[++i]);
    } else if (a == "--no-time") {
      do_time = false;

    } else if (a == "--shape") {
      long long m, n, k;
      if (std::sscanf(argv[++i], "%lld,%lld,%lld", &m, &n, &k) != 3) return 2;
      shapes.push_back({m, n, k});
    } else {
      Art art;
      if (const auto at = a.find('@'); at != std::string::npos) {
        std::sscanf(a.c_str() + at + 1, "%d,%d,%d", &art.raster, &art.swizzle, &art.splits);
        a = a.substr(0, at);
      }
      art.path = a;
      void* lib = dlopen(a.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        std::fprintf(stderr, "dlopen %s: %s\n", a.c_str(), dlerror());
        return 1;
      }
      art.desc = reinterpret_cast<const char* (*)()>(dlsym(lib, "cudal2_describe"))();
      art.can = reinterpret_cast<decltype(art.can)>(dlsym(lib, "cudal2_can_implement"));
      art.run = reinterpret_cast<decltype(art.run)>(dlsym(lib, "cudal2_run"));
      art.ws = reinterpret_cast<decltype(art.ws)>(dlsym(lib, "cudal2_workspace_size"));
      art.tn = art.desc.find(" tn ") != std::string::npos;
      art.f16 = art.desc.find(" f16 ") != std::string::npos;
      arts.push_back(art);
    }
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t cb;
  CB(cublasCreate(&cb));
  CB(cublasSetStream(cb, s));
  Lt lts[2];  // nn, tn
  for (auto& lt : lts) {
    CB(cublasLtCreate(&lt.h));
    CK(cudaMalloc(&lt.ws, lt.ws_bytes));
  }
  int fails = 0;
  std::printf("%-20s %-62s %8s %9s %9s %9s %7s\n", "shape", "method", "status", "rel_err", "us", "TFLOP/s", "lt/us");
  for (auto [m, n, k] : shapes) {
    const size_t guard = 4096;
    __half *A, *B, *Bt, *C;
    float* R;
    CK(cudaMalloc(&A, m * k * 2));
    CK(cudaMalloc(&B, k * n * 2));
    CK(cudaMalloc(&Bt, k * n * 2));
    CK(cudaMalloc(&C, (m * n + guard) * 2));
    CK(cudaMalloc(&R, m * n * 4));
    static uint64_t seed = 12345;
    fill_uniform<<<1024, 256, 0, s>>>(A, m * k, ++seed);
    fill_uniform<<<1024, 256, 0, s>>>(B, k * n, ++seed);
    transpose_kn<<<1024, 256, 0, s>>>(B, Bt, k, n);
    const float one = 1, zero = 0;
    CB(cublasGemmEx(cb, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, CUDA_R_16F, n, A, CUDA_R_16F, k, &zero, R,
                    CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    std::vector<float> ref(m * n);
    CK(cudaMemcpyAsync(ref.data(), R, m * n * 4, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    double ref2 = 0, refmax = 0;
    for (float v : ref) ref2 += double(v) * v, refmax = std::max(refmax, double(std::fabs(v)));
    char shape[64];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);

    // cuBLASLt auto-tuning: every heuristic candidate of nn and tn (5 replays each), the fastest
    // kept and timed again below, interleaved with the artifacts.
    double lt_us = 0;
    std::string lt_name;
    int lt_tn = 0;
    size_t lt_algo = 0;
    if (do_time) {
      for (bool tn : {false, true}) {
        Lt& lt = lts[tn];
        lt.setup(m, n, k, tn);
        for (size_t ai = 0; ai < lt.algos.size(); ++ai) {
          GraphTimer g;
          auto fn = [&](cudaStream_t st) { lt.run(lt.algos[ai], A, tn ? Bt : B, C, st); };
          fn(s);
          CK(cudaStreamSynchronize(s));
          if (!g.make(fn, s, 20)) continue;
          g.replay(s);
          std::vector<double> v;
          for (int r = 0; r < 5; ++r) v.push_back(g.replay(s));
          const double t = median(v);
          if (lt_us == 0 || t < lt_us) {
            lt_us = t;
            lt_name = std::string(tn ? "cublaslt-autotune-tn #" : "cublaslt-autotune-nn #") + std::to_string(ai);
            lt_tn = tn, lt_algo = ai;
          }
        }
      }
    }
    std::vector<std::function<void(cudaStream_t)>> fns;
    std::vector<std::string> names;
    std::vector<double> errs;
    std::vector<void*> workspaces;  // freed with the shape
    for (auto& art : arts) {
      cudal2_gemm_args a{};
      a.m = m, a.n = n, a.k = k, a.A = A, a.B = art.tn ? Bt : B, a.C = C;
      a.raster = art.raster, a.swizzle = art.swizzle, a.decomposition = 0, a.splits = art.splits;
      std::string name = art.desc + " | r" + std::to_string(art.raster) + " s" + std::to_string(art.swizzle);
      if (art.splits != 1) name += art.splits == 0 ? " pA" : " p" + std::to_string(art.splits);
      char err[256] = {0};
      if (art.can(&a, err, sizeof err)) {
        std::printf("%-20s %-62s %8s %s\n", shape, name.c_str(), "refused", err);
        continue;
      }
      // The workspace the artifact asks for, zero-filled once (split-K counters re-arm themselves).
      a.workspace_bytes = art.ws ? art.ws(&a) : 0;
      if (a.workspace_bytes) {
        CK(cudaMalloc(&a.workspace, a.workspace_bytes));
        CK(cudaMemsetAsync(a.workspace, 0, a.workspace_bytes, s));
        workspaces.push_back(a.workspace);
      }
      std::vector<__half> out(m * n + guard), again;
      bool deterministic = true;
      int bad_run = 0;
      for (int call = 0; call < 2 && !bad_run; ++call) {  // the second on the same workspace
        fill_const<<<1024, 256, 0, s>>>(reinterpret_cast<uint16_t*>(C), m * n + guard, 0x7E00);  // NaN
        if (art.run(&a, s, err, sizeof err)) {
          bad_run = 1;
          break;
        }
        CK(cudaStreamSynchronize(s));
        CK(cudaGetLastError());
        auto& dst = call == 0 ? out : again;
        dst.resize(m * n + guard);
        CK(cudaMemcpy(dst.data(), C, dst.size() * 2, cudaMemcpyDeviceToHost));
        if (call == 1) deterministic = std::memcmp(out.data(), again.data(), out.size() * 2) == 0;
      }
      if (bad_run) {
        std::printf("%-20s %-62s %8s %s\n", shape, name.c_str(), "error", err);
        ++fails;
        continue;
      }
      double d2 = 0, dmax = 0;
      bool nan = false, guard_ok = true;
      for (size_t i = 0; i < size_t(m * n); ++i) {
        const double v = __half2float(out[i]);
        if (std::isnan(v)) nan = true;
        const double d = v - ref[i];
        d2 += d * d, dmax = std::max(dmax, std::fabs(d));
      }
      for (size_t i = m * n; i < out.size(); ++i)
        guard_ok &= reinterpret_cast<const uint16_t*>(out.data())[i] == 0x7E00;
      const double rel = std::sqrt(d2 / std::max(ref2, 1e-30));
      const double tol = art.f16 ? 2e-2 : 2e-3;
      const bool ok =
          !nan && guard_ok && deterministic && rel <= tol && dmax <= (art.f16 ? 5e-2 : 1e-2) * refmax + 1e-3;
      if (!ok) {
        ++fails;
        std::printf("%-20s %-62s %8s %9.2e maxerr=%.3g refmax=%.3g nan=%d guard=%d same-bits-twice=%d\n", shape,
                    name.c_str(), "WRONG", rel, dmax, refmax, nan, guard_ok, deterministic);
        continue;
      }
      if (!do_time) {  // with a hash of C's bits, to compare runs (same inputs: the seeds are fixed)
        uint64_t h = 1469598103934665603ull;  // FNV-1a
        for (size_t i = 0; i < size_t(m * n); ++i)
          h = (h ^ reinterpret_cast<const uint16_t*>(out.data())[i]) * 1099511628211ull;
        std::printf("%-20s %-62s %8s %9.2e bits=%016llx\n", shape, name.c_str(), "ok", rel, (unsigned long long)h);
        continue;
      }
      fns.push_back([a, art](cudaStream_t st) { art.run(&a, st, nullptr, 0); });
      names.push_back(name);
      errs.push_back(rel);
    }
    if (do_time && !fns.empty() && lt_us > 0) {
      Lt* lt = &lts[lt_tn];
      const cublasLtMatmulAlgo_t algo = lt->algos[lt_algo];
      const __half* lb = lt_tn ? Bt : B;
      fns.push_back([=](cudaStream_t st) { lt->run(algo, A, lb, C, st); });
      names.push_back(lt_name);
      errs.push_back(0);
      // Graphs sized for ~2 ms of work per replay, from one eager estimate.
      std::vector<std::unique_ptr<GraphTimer>> gs;
      const double flop = 2.0 * m * n * k;
      for (auto& fn : fns) {
        auto g = std::make_unique<GraphTimer>();
        GraphTimer g1;
        g1.make(fn, s, 1);
        g1.replay(s);
        const double est = g1.replay(s);
        g->make(fn, s, std::clamp(int(2000.0 / std::max(est, 1.0)), 1, 200));
        g->replay(s);
        gs.push_back(std::move(g));
      }
      std::vector<std::vector<double>> t(fns.size());
      for (int r = 0; r < reps; ++r)
        for (size_t i = 0; i < fns.size(); ++i) t[i].push_back(gs[i]->replay(s));
      lt_us = median(t.back());  // the baseline as timed interleaved with ours
      for (size_t i = 0; i + 1 < fns.size(); ++i) {
        const double us = median(t[i]);
        std::printf("%-20s %-62s %8s %9.2e %9.2f %9.1f %7.3f\n", shape, names[i].c_str(), "ok", errs[i], us,
                    flop / us * 1e-6, lt_us / us);
      }
      std::printf("%-20s %-62s %8s %9s %9.2f %9.1f\n", shape, lt_name.c_str(), "base", "", lt_us, flop / lt_us * 1e-6);
    }
    for (auto& lt : lts)
      if (lt.live) lt.destroy();
    CK(cudaStreamSynchronize(s));
    for (void* w : workspaces) cudaFree(w);
    cudaFree(A), cudaFree(B), cudaFree(Bt), cudaFree(C), cudaFree(R);
  }
  std::printf("failures: %d\n", fails);
  return fails ? 1 : 0;
}
