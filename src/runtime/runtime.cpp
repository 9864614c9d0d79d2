// libcudal2_runtime: the C API of include/cudal2/cudal2.h. Dispatch: the exact shape in the
// compiled table -> its kernel (or cuBLASLt where cuBLASLt was measured faster); otherwise the
// nearest table shape's kernel when it is close enough, can run the shape and beat cuBLASLt
// there; otherwise cuBLASLt's heuristic top-1. docs/runtime.md has the rule and the contract.
// The library carries one table per GPU it was tuned on; a handle uses its device's
// (runtime/select.hpp), and an off-table M of a tuned (N, K) takes a tuned M's decision
// (runtime/bucket.hpp).
// A table kernel of the `cublaslt` family is no compiled code but an algorithm configuration
// (KernelInfo::lt): planned once per shape (descriptors, cudal2_lt::configure with the entry's
// split count, cublasLtMatmulAlgoCheck), then each call is one cublasLtMatmul.
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudal2/cudal2.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cublaslt_plan.h"
#include "runtime/background_tuner.hpp"
#include "runtime/bucket.hpp"
#include "runtime/device_table.hpp"
#include "runtime/kernel_call.hpp"
#include "runtime/last_error.hpp"
#include "runtime/lt_autotune.hpp"
#include "runtime/padded_rows.hpp"
#include "runtime/scratch_fill.hpp"
#include "runtime/select.hpp"
#include "runtime/stream_portfolio.hpp"
#include "runtime/stream_rule.hpp"
#include "runtime/table.hpp"
#include "runtime/weight_recency.hpp"

using cudal2::rt::device_name;
using cudal2::rt::device_table;
using cudal2::rt::Entry;
using cudal2::rt::fail;
using cudal2::rt::KernelCall;
using cudal2::rt::KernelInfo;
using cudal2::rt::kNumTables;
using cudal2::rt::kTables;
using cudal2::rt::kZone;
using cudal2::rt::LtPlan;
using cudal2::rt::plan_kernel;
using cudal2::rt::run_kernel;
using cudal2::rt::run_lt;
using cudal2::rt::Table;

namespace {

constexpr int64_t kMaxDim = INT32_MAX;

struct Plan {
  cudal2_path_t path = CUDAL2_PATH_CUBLASLT;
  KernelCall call;
  const Entry* from = nullptr;  // the table entry (exact or neighbour)
  std::unique_ptr<LtPlan> lt;
  // Background tuning: queued once; when done, `tuned` points at tuned_owner (written before the
  // pointer is published, never changed after) and calls use it instead of lt.
  mutable std::atomic<bool> queued{false};
  // C's rows off 16 bytes: cuBLASLt's aligned kernels write the first N rounded down to 8 columns
  // of a padded C (row stride lt->ldc) into the last c_scratch bytes of the workspace, and the call
  // finishes it and copies it into C (runtime/padded_rows.hpp), chunk_m rows at a time (M, or fewer
  // when the workspace cannot hold them all); c_scratch 0: none.
  size_t c_scratch = 0;
  int64_t chunk_m = 0;
  mutable std::unique_ptr<LtPlan> tuned_owner;
  mutable std::atomic<const LtPlan*> tuned{nullptr};
  const LtPlan& lt_now() const {
    const LtPlan* t = tuned.load(std::memory_order_acquire);
    return t ? *t : *lt;
  }
};

using PlanKey = std::tuple<int, int, int64_t, int64_t, int64_t, size_t>;

const Entry* find_entry(const Table* t, int accum, int layout, int64_t m, int64_t n, int64_t k) {
  if (!t) return nullptr;
  const auto key = std::make_tuple(accum, layout, m, n, k);
  const Entry* lo = t->entries;
  const Entry* hi = t->entries + t->num_entries;
  auto cmp = [](const Entry& e, const decltype(key)& k2) { return std::tie(e.accum, e.layout, e.m, e.n, e.k) < k2; };
  const Entry* it = std::lower_bound(lo, hi, key, cmp);
  if (it != hi && std::tie(it->accum, it->layout, it->m, it->n, it->k) == key) return it;
  return nullptr;
}

}  // namespace

using NKKey = std::tuple<int, int, int64_t, int64_t>;  // accumulator, layout, N, K

// The tuned M of each (accumulator, layout, N, K) of a table, ascending, and their entries.
struct Buckets {
  std::vector<int64_t> ms;
  std::vector<const Entry*> entries;
};

struct cudal2_context {
  int device = 0;
  bool table_on = false;
  const Table* table = nullptr;  // this device's table (null: none; every call goes to cuBLASLt)
  cudal2::rt::BucketRule bucket_rule = cudal2::rt::BucketRule::Off;
  std::map<NKKey, Buckets> buckets;
  double neighbour_factor = 0.0;
  bool tune_unseen = false;      // CUDAL2_TUNE_BLOCKING
  bool tune_background = false;  // CUDAL2_TUNE_BACKGROUND
  std::string tune_log;          // CUDAL2_TUNE_LOG: a file each tuned shape's ranking is appended to
  int tune_passes = 2;           // CUDAL2_TUNE_PASSES: rankings a shape's tuning runs (rank_lt)
  std::mutex tuner_mu;
  std::unique_ptr<cudal2::rt::BackgroundTuner> tuner;  // made by the first shape it tunes
  // The stream portfolio (runtime/stream_rule.hpp) on an sm_90 device, unless CUDAL2_STREAM=0.
  std::vector<cudal2::rt::StreamKernel> stream;
  cudal2::rt::StreamBounds stream_bounds;
  // Which weights this handle read recently, for the cold band (runtime/stream_rule.hpp), and the
  // band's stream kernel per shape (planned once; ok false: it cannot run the shape).
  cudal2::rt::WeightRecency recency;
  std::map<PlanKey, KernelCall> cold_calls;
  int sm_count = 0;
  int l2_bytes = 0;
  cublasLtHandle_t lt = nullptr;
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::vector<KernelCall> entry_calls;  // per table->entries row, planned once (cublaslt kernels too)
  std::shared_mutex mu;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;  // off-table shapes; never erased (stable pointers)
};

namespace {

// The plan runs r's algorithm from now on.
void use_algo(LtPlan& p, const cublasLtMatmulHeuristicResult_t& r) {
  p.algo = r.algo;
  p.ws = r.workspaceSize;
  char text[256];
  cudal2_lt::config_text(cudal2_lt::read_config(r.algo), p.tn, p.f16, text, sizeof text);
  p.spec = text;
}

// Descriptors and cuBLASLt's heuristic top-1 for an off-table shape; with cands, also its top
// kTuneCandidates (for tune_lt), from the same heuristic call.
cudal2_status_t build_lt(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_avail,
                         LtPlan& p, std::vector<cublasLtMatmulHeuristicResult_t>* cands = nullptr,
                         cublasLtHandle_t lt = nullptr) {
  auto ck = [&](cublasStatus_t st, const char* what) {
    return st == CUBLAS_STATUS_SUCCESS ? CUDAL2_STATUS_SUCCESS
                                       : fail(CUDAL2_STATUS_CUBLAS_ERROR, "%s: %s", what, cublasLtGetStatusString(st));
  };
  p.tn = layout == CUDAL2_LAYOUT_TN, p.f16 = accum == CUDAL2_ACCUM_F16;
  if (!cudal2_lt::make_problem(m, n, k, p.tn, p.f16, p.pr, p.ldc)) return ck(p.pr.status, p.pr.failed);
  std::vector<cublasLtMatmulHeuristicResult_t> r(cands ? cudal2::rt::kTuneCandidates : 1);
  int returned = 0;
  if (auto s =
          ck(cudal2_lt::heuristic(lt ? lt : h->lt, p.pr, ws_avail, static_cast<int>(r.size()), r.data(), &returned),
             "cublasLtMatmulAlgoGetHeuristic"))
    return s;
  if (returned < 1 || r[0].state != CUBLAS_STATUS_SUCCESS)
    return fail(CUDAL2_STATUS_CUBLAS_ERROR, "cuBLASLt heuristic found no algorithm for %lldx%lldx%lld", (long long)m,
                (long long)n, (long long)k);
  use_algo(p, r[0]);
  if (cands) *cands = {r.begin(), r.begin() + returned};
  return CUDAL2_STATUS_SUCCESS;
}

// Operands of the call that makes a plan, for timing candidates on them (tune_unseen).
struct TuneOn {
  const void *A, *B;
  void* C;
  void* ws;
  size_t ws_bytes;
  cudaStream_t stream;
};

// Where a padded C of `pad` bytes starts in a workspace of ws_bytes (256-byte aligned; the
// cuBLASLt workspace ends there), and whether the workspace holds it beside the zero area.
size_t padded_c_offset(size_t ws_bytes, size_t pad) { return ws_bytes >= pad ? (ws_bytes - pad) / 256 * 256 : 0; }
bool padded_c_fits(size_t ws_bytes, size_t pad) { return pad > 0 && padded_c_offset(ws_bytes, pad) >= kZone; }

// CUDAL2_TUNE_LOG (set): one line a ranking (how: blocking or background; what the ranking saw).
void log_tuning(const cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, const char* how,
                const std::string& trace) {
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  if (FILE* f = std::fopen(h->tune_log.c_str(), "a")) {
    std::fprintf(f, "%lldx%lldx%lld %s %s %s: %s\n", (long long)m, (long long)n, (long long)k,
                 layout == CUDAL2_LAYOUT_TN ? "tn" : "nn", accum == CUDAL2_ACCUM_F16 ? "f16" : "f32", how,
                 trace.c_str());
    std::fclose(f);
  }
}

// The fastest of cands on the operands `call` reads, ranked h->tune_passes times, the last ranking
// kept. The first ranking of a shape in a process timed candidates other than the heuristic's first
// 10-50% slower than a ranking right after it, or one in another handle later (H200, held-out
// off-grid shapes; not lazy module loading: CUDA_MODULE_LOADING=EAGER changed nothing, and not an
// idle GPU: 2 ms of the first candidate before it changed nothing): so the first handle to tune a
// shape kept configurations up to 18% slower than auto-tuning's (bench/results/h200/tuning/). A
// second ranking agrees with later handles; it doubles the tuning's GPU time (tens of ms a shape).
int rank_lt(const cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k,
            const std::vector<cublasLtMatmulHeuristicResult_t>& cands, size_t ws_avail, const cudal2::rt::LtCall& call,
            cudaStream_t stream, const char* how, const std::atomic<bool>* stop = nullptr) {
  int best = -1;
  for (int pass = 0; pass < h->tune_passes && !(stop && *stop); ++pass) {
    std::string trace;
    best = cudal2::rt::fastest_lt_candidate(cands, ws_avail, call, stream, h->tune_log.empty() ? nullptr : &trace);
    if (!h->tune_log.empty())
      log_tuning(h, layout, accum, m, n, k, how, "pass " + std::to_string(pass + 1) + ": " + trace);
  }
  return best;
}

// tune_unseen: cuBLASLt auto-tuning for one off-table shape, done once, on the caller's operands
// (runtime/lt_autotune.hpp: the heuristic's candidates ranked by graph-replay time, as the judge's
// auto-tuning baseline ranks them); the fastest is kept in p. If none runs, p keeps the
// heuristic's top-1.
void tune_lt(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, LtPlan& p, size_t ws_avail,
             const TuneOn& on, const std::vector<cublasLtMatmulHeuristicResult_t>& r) {
  if (r.size() < 2) return;
  void* w = static_cast<char*>(on.ws) + kZone;
  const int best = rank_lt(
      h, layout, accum, m, n, k, r, ws_avail,
      [&](const cublasLtMatmulAlgo_t& algo, cudaStream_t s) {
        return cudal2_lt::matmul(h->lt, p.pr, accum == CUDAL2_ACCUM_F16, &algo, on.A, on.B, on.C, w, ws_avail, s);
      },
      on.stream, "blocking");
  if (best >= 0) use_algo(p, r[static_cast<size_t>(best)]);
}

// The nearest table shape (same layout and accumulator) whose kernel beat cuBLASLt, with every
// dimension within neighbour_factor; distance = sum of |log ratio| over M, N, K.
const Entry* nearest(const cudal2_context* h, int accum, int layout, int64_t m, int64_t n, int64_t k) {
  if (!(h->neighbour_factor > 1.0)) return nullptr;
  const double lim = std::log(h->neighbour_factor) + 1e-9;
  const Entry* best = nullptr;
  double best_d = 0;
  for (int i = 0; i < h->table->num_entries; ++i) {
    const Entry& e = h->table->entries[i];
    if (e.accum != accum || e.layout != layout || e.kernel < 0) continue;
    if (e.fallback_us > 0 && !(e.us < e.fallback_us)) continue;
    const double dm = std::fabs(std::log(double(m) / double(e.m))), dn = std::fabs(std::log(double(n) / double(e.n))),
                 dk = std::fabs(std::log(double(k) / double(e.k)));
    if (dm > lim || dn > lim || dk > lim) continue;
    const double d = dm + dn + dk;
    if (!best || d < best_d) best = &e, best_d = d;
  }
  return best;
}

// The entry of the tuned M the bucket rule picks for an off-table (m, n, k), or null.
const Entry* bucket_entry(const cudal2_context* h, int accum, int layout, int64_t m, int64_t n, int64_t k) {
  const auto it = h->buckets.find(NKKey{accum, layout, n, k});
  if (it == h->buckets.end()) return nullptr;
  const int i = cudal2::rt::pick_bucket(it->second.ms, m, h->bucket_rule);
  return i < 0 ? nullptr : it->second.entries[static_cast<size_t>(i)];
}

// A table entry of a bandwidth-bound shape (the stream class, the sweep band or an NN band) gives way to the
// stream rule unless it is a stream kernel itself: the tables' entries were chosen among families
// that did not include them, and there the stream kernels were measured ahead of cuBLASLt
// auto-tuning, which the tables' cuBLASLt entries match (docs/kernels-stream.md).
bool stream_preempts(const cudal2_context* h, const Entry* e) {
  if (h->stream.empty() ||
      !cudal2::rt::in_stream_rule(e->layout, e->accum, e->m, e->n, e->k, h->l2_bytes, h->stream_bounds))
    return false;
  if (e->kernel < 0) return true;
  const std::string_view family = h->table->kernels[e->kernel].family;
  return family != "stream" && family != "stream_sweep";
}

const KernelCall& entry_call(const cudal2_context* h, const Entry* e) {
  return h->entry_calls[static_cast<size_t>(e - h->table->entries)];
}

// The table's entry that serves the shape itself: found, not given way to the stream rule, its
// kernel planned. *neighbours: whether the shape may take a neighbour's kernel instead; not where
// the table has the shape but its kernel could not be planned (a table shape on cuBLASLt stays on
// cuBLASLt). *held (optional): whether the table chose cuBLASLt's heuristic for the shape itself,
// having measured it ahead of the configurations its job tried. Such a shape is not tuned again:
// on the 180 such (shape, layout) pairs the H200 table then had, the runtime's own ranking moved 47
// to another configuration, which ran 0.4-0.5% behind auto-tuning back to back and 2.4% behind it
// cold, where the heuristic ran 0.4% and 0.8% ahead (one process; bench/results/h200/floor/README.md).
const Entry* table_entry(const cudal2_context* h, int accum, int layout, int64_t m, int64_t n, int64_t k,
                         bool* neighbours, bool* held = nullptr) {
  *neighbours = true;
  if (held) *held = false;
  if (!h->table_on) return nullptr;
  const Entry* e = find_entry(h->table, accum, layout, m, n, k);
  if (!e || stream_preempts(h, e)) return nullptr;
  if (entry_call(h, e).ok) return e;
  *neighbours = false;
  if (held) *held = e->kernel < 0;
  return nullptr;
}

// CUDAL2_STREAM (on/off), the class's bounds, CUDAL2_STREAM_MAX_M (tokens) and
// CUDAL2_STREAM_MIN_MB (weights), the cold band's, CUDAL2_STREAM_COLD_MAX_M and
// CUDAL2_STREAM_COLD_MIN_MB, and the sweep band's tokens, CUDAL2_STREAM_SWEEP_MAX_M (0: off), and
// the share of the L2 up to which it takes warm weights, CUDAL2_STREAM_SWEEP_WARM_PCT, and whether
// its kernels keep warm weights in the L2, CUDAL2_STREAM_KEEP; checked once when the handle is made.
cudal2_status_t read_stream_env(cudal2::rt::StreamBounds& b) {
  if (const char* s = std::getenv("CUDAL2_STREAM"); !cudal2::rt::stream_env_valid(s))
    return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM=%.40s: not 0 or 1", s);
  if (const char* s = std::getenv("CUDAL2_STREAM_MAX_M"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 1, 256);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_MAX_M=%.40s: not a whole number in 1..256", s);
    b.max_m = *v;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_MIN_MB"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, 1 << 20);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_MIN_MB=%.40s: not a whole number of MiB", s);
    b.min_weight_bytes = *v << 20;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_COLD_MIN_MB"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, 1 << 20);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_COLD_MIN_MB=%.40s: not a whole number of MiB", s);
    b.cold_min_weight_bytes = *v << 20;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_COLD_MAX_M"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, 256);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_COLD_MAX_M=%.40s: not a whole number in 0..256", s);
    b.cold_max_m = *v;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_SWEEP_MAX_M"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, cudal2::rt::kSweepMaxM);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_SWEEP_MAX_M=%.40s: not a whole number in 0..8", s);
    b.sweep_max_m = *v;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_SWEEP_WARM_PCT"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, 100);
    if (!v)
      return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_SWEEP_WARM_PCT=%.40s: not a whole number in 0..100", s);
    b.sweep_warm_pct = *v;
  }
  if (const char* s = std::getenv("CUDAL2_STREAM_KEEP"); s && *s) {
    const auto v = cudal2::rt::parse_stream_bound(s, 0, 1);
    if (!v) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_STREAM_KEEP=%.40s: not 0 or 1", s);
    b.keep = static_cast<int>(*v);
  }
  return CUDAL2_STATUS_SUCCESS;
}

// The stream rule's kernel and splits for a shape of its class (cold: of the cold band), planned
// for this workspace; ok false when the rule does not take the shape or the kernel cannot run it.
KernelCall stream_call(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_bytes,
                       bool cold) {
  KernelCall c;
  const auto sp =
      cudal2::rt::pick_stream(h->stream, layout, accum, m, n, k, h->sm_count, h->l2_bytes, h->stream_bounds, cold);
  if (sp.kernel < 0) return c;
  c.table = &cudal2::rt::stream_table(), c.kernel = sp.kernel, c.splits = sp.splits;
  char why[256] = "";
  c.ok = plan_kernel(h->lt, c, m, n, k, why, sizeof why) && c.need_total <= ws_bytes;
  return c;
}

// C's rows off 16 bytes (runtime/padded_rows.hpp): whether p computes into a padded C in a
// workspace of ws_bytes, all M rows a call or in chunks (p's c_scratch and chunk_m).
bool plan_padded_c(int layout, int64_t m, int64_t n, int64_t k, size_t ws_bytes, Plan& p) {
  const int64_t ldc = cudal2::rt::padded_ldc(layout == CUDAL2_LAYOUT_TN, n, k);
  if (ldc == 0) return false;
  int64_t rows = m;
  if (!padded_c_fits(ws_bytes, cudal2::rt::padded_c_bytes(m, ldc))) {
    rows = cudal2::rt::padded_chunk_rows(ws_bytes > kZone ? ws_bytes - kZone : 0, ldc);
    if (rows == 0 || rows >= m) return false;
  }
  const size_t pad = cudal2::rt::padded_c_bytes(rows, ldc);
  if (!padded_c_fits(ws_bytes, pad)) return false;
  p.c_scratch = pad, p.chunk_m = rows;
  return true;
}

// neighbours false: the shape is in the table and cuBLASLt was measured faster there than any
// kernel, so neither a bucket's nor a neighbour's kernel is tried.
// tune: the call's operands when the plan may be tuned (tune_unseen, not capturing), else null.
cudal2_status_t make_plan(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_bytes,
                          bool neighbours, const TuneOn* tune, std::unique_ptr<Plan>& out) {
  auto p = std::make_unique<Plan>();
  const size_t ws_avail = ws_bytes > kZone ? ws_bytes - kZone : 0;
  // Bandwidth-bound: the stream rule's kernel and splits, before any table neighbour or cuBLASLt.
  if (KernelCall c = stream_call(h, layout, accum, m, n, k, ws_bytes, /*cold=*/false); c.ok) {
    p->path = CUDAL2_PATH_STREAM_KERNEL, p->call = c;
    out = std::move(p);
    return CUDAL2_STATUS_SUCCESS;
  }
  // C's rows off 16 bytes: cuBLASLt's aligned kernels into a padded C, before any table neighbour
  // (whose kernels would meet the same unaligned rows).
  if (plan_padded_c(layout, m, n, k, ws_bytes, *p)) neighbours = false;
  if (h->table_on && neighbours) {
    if (const Entry* e = bucket_entry(h, accum, layout, m, n, k)) {
      // The tuned M's decision: its kernel, or cuBLASLt where cuBLASLt was measured faster there.
      neighbours = false;
      if (e->kernel >= 0) {
        KernelCall c;
        c.table = h->table, c.kernel = e->kernel, c.raster = e->raster, c.swizzle = e->swizzle;
        c.decomposition = e->decomposition, c.splits = e->splits;
        char why[256] = "";
        if (plan_kernel(h->lt, c, m, n, k, why, sizeof why) && c.need_total <= ws_bytes) {
          p->path = CUDAL2_PATH_BUCKET_KERNEL, p->call = c, p->from = e;
          out = std::move(p);
          return CUDAL2_STATUS_SUCCESS;
        }
      }
    }
  }
  if (h->table_on && neighbours) {
    if (const Entry* e = nearest(h, accum, layout, m, n, k)) {
      KernelCall c;
      c.table = h->table, c.kernel = e->kernel, c.raster = e->raster, c.swizzle = e->swizzle,
      c.decomposition = e->decomposition;
      c.splits = e->splits;
      char why[256] = "";
      if (plan_kernel(h->lt, c, m, n, k, why, sizeof why) && c.need_total <= ws_bytes) {
        p->path = CUDAL2_PATH_NEIGHBOUR_KERNEL, p->call = c, p->from = e;
        out = std::move(p);
        return CUDAL2_STATUS_SUCCESS;
      }
    }
  }
  p->path = CUDAL2_PATH_CUBLASLT;
  p->lt = std::make_unique<LtPlan>();
  size_t lt_avail = ws_avail;
  TuneOn on = tune ? *tune : TuneOn{};
  int64_t lt_m = m, lt_n = n;  // the rows and columns of C the (tuned) plan computes a call
  if (p->c_scratch) {          // set above: cuBLASLt writes the padded C where its workspace ends
    const size_t at = padded_c_offset(ws_bytes, p->c_scratch);
    p->lt->ldc = cudal2::rt::padded_ldc(layout == CUDAL2_LAYOUT_TN, n, k), lt_m = p->chunk_m, lt_n = n / 8 * 8;
    lt_avail = at - kZone;
    if (tune) on.C = static_cast<char*>(on.ws) + at;
  }
  std::vector<cublasLtMatmulHeuristicResult_t> cands;
  if (auto s = build_lt(h, layout, accum, lt_m, lt_n, k, lt_avail, *p->lt, tune ? &cands : nullptr)) return s;
  if (tune) tune_lt(h, layout, accum, lt_m, lt_n, k, *p->lt, lt_avail, on, cands);
  out = std::move(p);
  return CUDAL2_STATUS_SUCCESS;
}

// Background tuning (CUDAL2_TUNE_BACKGROUND). Operands of a shape beyond this many bytes (A, B,
// C and cuBLASLt's workspace) are not allocated: such a shape is compute-bound and keeps the
// heuristic's pick (measured within 1-2% of auto-tuning on large shapes, docs/runtime.md), and the
// tuning never takes more than a fraction of the GPU's memory from the caller.
constexpr size_t kTuneScratchMax = size_t(512) << 20;

// The handles whose tuners run: stopped before the process's exit tears CUDA down (the default
// handle is never destroyed; a handle the program forgot would otherwise run CUDA work in a dying
// process). Registered after CUDA's own exit handlers, so it runs before them.
std::mutex g_tuners_mu;
std::vector<cudal2::rt::BackgroundTuner*> g_tuners;

void stop_all_tuners() {
  const std::lock_guard<std::mutex> lock(g_tuners_mu);
  for (auto* t : g_tuners) t->stop();
}

void stop_tuner(cudal2_context* h) {
  std::unique_ptr<cudal2::rt::BackgroundTuner> t;
  {
    const std::lock_guard<std::mutex> lock(h->tuner_mu);
    t = std::move(h->tuner);
  }
  if (!t) return;
  {
    const std::lock_guard<std::mutex> lock(g_tuners_mu);
    g_tuners.erase(std::remove(g_tuners.begin(), g_tuners.end(), t.get()), g_tuners.end());
  }
  t->stop();
}

// Device memory freed when the job ends, on its stream.
struct Scratch {
  void* p = nullptr;
  cudaStream_t s = nullptr;
  ~Scratch() {
    if (p) cudaFreeAsync(p, s);
    if (s) {
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
    }
    cudaGetLastError();
  }
};

// One shape's tuning on the worker thread: the heuristic's candidates for the plan's workspace,
// timed on operands of the worker's own (random, the shape's sizes) as blocking tuning times them
// on the caller's; the winner, if not the heuristic's own top-1, published in the plan.
void tune_job(cudal2_context* h, const Plan* plan, int layout, int accum, int64_t m, int64_t n, int64_t k,
              size_t ws_avail, const std::atomic<bool>& stop) {
  const int64_t ldc = plan->lt->ldc;  // the plan's padded C, timed as the calls run it
  const size_t a = size_t(m * k), b = size_t(k * n), c = size_t(m * (ldc > 0 ? ldc : n));
  const size_t bytes = 2 * (a + b + c) + ws_avail + 256;
  if (bytes > kTuneScratchMax || stop) return;
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b < 4 * bytes) {
    cudaGetLastError();
    return;
  }
  // The worker's own cuBLASLt handle: asking the heuristic for 100 candidates takes milliseconds,
  // and on the handle's own cuBLASLt handle the caller's next calls could wait for it.
  struct OwnLt {
    cublasLtHandle_t h = nullptr;
    OwnLt() {
      if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) h = nullptr;
    }
    ~OwnLt() {
      if (h) cublasLtDestroy(h);
    }
  };
  static thread_local OwnLt own;
  if (!own.h) return;
  auto tuned = std::make_unique<LtPlan>();
  tuned->ldc = ldc;
  std::vector<cublasLtMatmulHeuristicResult_t> cands;
  if (build_lt(h, layout, accum, m, n, k, ws_avail, *tuned, &cands, own.h) != CUDAL2_STATUS_SUCCESS || cands.size() < 2)
    return;
  Scratch sc;
  if (cudaStreamCreateWithFlags(&sc.s, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMallocAsync(&sc.p, bytes, sc.s) != cudaSuccess)
    return;
  auto* base = static_cast<char*>(sc.p);
  void *A = base, *B = base + 2 * a, *C = base + 2 * (a + b);
  void* w = base + ((2 * (a + b + c) + 255) / 256) * 256;
  if (cudaSuccess != cudal2::rt::fill_scratch(A, a, 1u, sc.s) ||
      cudaSuccess != cudal2::rt::fill_scratch(B, b, 2u, sc.s))
    return;
  const int best = rank_lt(
      h, layout, accum, m, n, k, cands, ws_avail,
      [&](const cublasLtMatmulAlgo_t& algo, cudaStream_t s) {
        if (stop) return CUBLAS_STATUS_NOT_SUPPORTED;  // the handle is going: every candidate fails fast
        return cudal2_lt::matmul(own.h, tuned->pr, accum == CUDAL2_ACCUM_F16, &algo, A, B, C, w, ws_avail, s);
      },
      sc.s, "background", &stop);
  if (best <= 0 || stop) return;
  use_algo(*tuned, cands[static_cast<size_t>(best)]);
  plan->tuned_owner = std::move(tuned);
  plan->tuned.store(plan->tuned_owner.get(), std::memory_order_release);
}

// The handle's tuner, made, registered and started on first use (cudal2_create starts it).
cudal2::rt::BackgroundTuner* tuner_of(cudal2_context* h) {
  const std::lock_guard<std::mutex> lock(h->tuner_mu);
  if (!h->tuner) {
    h->tuner = std::make_unique<cudal2::rt::BackgroundTuner>(h->device);
    static std::once_flag registered;
    std::call_once(registered, [] { std::atexit(stop_all_tuners); });
    const std::lock_guard<std::mutex> reg(g_tuners_mu);
    g_tuners.push_back(h->tuner.get());
  }
  h->tuner->start();
  return h->tuner.get();
}

void queue_tuning(cudal2_context* h, const Plan* plan, int layout, int accum, int64_t m, int64_t n, int64_t k,
                  size_t ws_avail) {
  tuner_of(h)->enqueue(
      [=](const std::atomic<bool>& stop) { tune_job(h, plan, layout, accum, m, n, k, ws_avail, stop); });
}

// Queues a cuBLASLt plan's background tuning, once, whichever call comes first. lt_bytes: the
// workspace its calls hand cuBLASLt (the zero zone included, a padded C's buffer not).
void queue_plan_tuning(cudal2_context* h, const Plan* p, int layout, int accum, int64_t m, int64_t n, int64_t k,
                       size_t lt_bytes) {
  if (p->queued.exchange(true)) return;
  queue_tuning(h, p, layout, accum, p->c_scratch ? p->chunk_m : m, p->c_scratch ? n / 8 * 8 : n, k,
               lt_bytes > kZone ? lt_bytes - kZone : 0);
}

// The plan for a shape that has no usable table kernel: from the cache, or made once.
// tune_unseen: a plan is cached only when made by a call that could tune it (tune non-null) or
// for a shape the table holds on the heuristic (held: never tuned); otherwise (cudal2_query, or a
// call being captured) it is made in *temp, used once, and the shape stays unseen.
cudal2_status_t get_plan(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_bytes,
                         bool neighbours, const TuneOn* tune, std::unique_ptr<Plan>& temp, const Plan*& plan,
                         bool held = false) {
  const PlanKey key{layout, accum, m, n, k, ws_bytes > kZone ? ws_bytes - kZone : 0};
  {
    std::shared_lock lock(h->mu);
    if (auto it = h->plans.find(key); it != h->plans.end()) {
      plan = it->second.get();
      return CUDAL2_STATUS_SUCCESS;
    }
  }
  std::unique_lock lock(h->mu);
  if (auto it = h->plans.find(key); it != h->plans.end()) {
    plan = it->second.get();
    return CUDAL2_STATUS_SUCCESS;
  }
  std::unique_ptr<Plan> p;
  if (auto s = make_plan(h, layout, accum, m, n, k, ws_bytes, neighbours, tune, p)) return s;
  plan = p.get();
  if (h->tune_unseen && !tune && !held && p->path == CUDAL2_PATH_CUBLASLT)
    temp = std::move(p);
  else
    h->plans.emplace(key, std::move(p));
  return CUDAL2_STATUS_SUCCESS;
}

// Queues the background tuning of the plan a warm call of this shape would run, from the call that
// planned the shape's cold-band stream kernel (that call made no other plan). A shape's tuning then
// starts at its first call whichever kernel that call ran, as for every other shape. Before, it
// started at the shape's first warm call, in the middle of the caller's work: a program that timed
// warm calls right after the first one (the bench's runtime methods, after cudal2_tune_wait) had the
// tuner's replays beside its own and a plan swapped in while it timed (H200, decode shapes of 24-60
// MB: one of three copies of the library 8-46% slower than the others in the same process). Nothing
// happens where the warm call takes a table kernel, or where planning fails (the cold call itself ran).
void queue_warm_tuning(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_bytes) {
  bool neighbours = true, held = false;
  if (table_entry(h, accum, layout, m, n, k, &neighbours, &held) || held) return;
  const Plan* p = nullptr;
  std::unique_ptr<Plan> temp;
  if (get_plan(h, layout, accum, m, n, k, ws_bytes, neighbours, nullptr, temp, p) != CUDAL2_STATUS_SUCCESS) {
    cudal2::rt::clear_error();
    return;
  }
  if (!temp && p->path == CUDAL2_PATH_CUBLASLT)
    queue_plan_tuning(h, p, layout, accum, m, n, k, p->c_scratch ? padded_c_offset(ws_bytes, p->c_scratch) : ws_bytes);
}

// The stream kernel of a cold-band shape (runtime/stream_rule.hpp), planned on first use (*planned
// set for the call that planned it); null if none can run it with this workspace.
const KernelCall* cold_call(cudal2_context* h, int layout, int accum, int64_t m, int64_t n, int64_t k, size_t ws_bytes,
                            bool* planned) {
  const PlanKey key{layout, accum, m, n, k, ws_bytes};
  {
    std::shared_lock lock(h->mu);
    if (auto it = h->cold_calls.find(key); it != h->cold_calls.end()) return it->second.ok ? &it->second : nullptr;
  }
  std::unique_lock lock(h->mu);
  auto it = h->cold_calls.find(key);
  if (it == h->cold_calls.end()) {
    it = h->cold_calls.emplace(key, stream_call(h, layout, accum, m, n, k, ws_bytes, /*cold=*/true)).first;
    *planned = true;
  }
  return it->second.ok ? &it->second : nullptr;
}

// A planned table kernel (exact shape or neighbour): a `cublaslt` configuration goes straight to
// cublasLtMatmul (no lock: the plan is immutable and the handle thread-safe), others through the
// kernel C ABI.
inline cudal2_status_t run_call(cudal2_context* h, const KernelCall& c, int accum, int64_t m, int64_t n, int64_t k,
                                const void* A, const void* B, void* C, void* ws, size_t ws_bytes, cudaStream_t stream) {
  if (c.lt) return run_lt(h->lt, *c.lt, accum, A, B, C, ws, ws_bytes, stream);
  return run_kernel(c, m, n, k, A, B, C, ws, ws_bytes, stream);
}

cudal2_status_t check_problem(int layout, int accum, int64_t m, int64_t n, int64_t k) {
  if (layout != CUDAL2_LAYOUT_NN && layout != CUDAL2_LAYOUT_TN)
    return fail(CUDAL2_STATUS_INVALID_VALUE, "unknown layout %d", layout);
  if (accum != CUDAL2_ACCUM_F32 && accum != CUDAL2_ACCUM_F16)
    return fail(CUDAL2_STATUS_INVALID_VALUE, "unknown accumulator %d", accum);
  if (m < 1 || n < 1 || k < 1 || m > kMaxDim || n > kMaxDim || k > kMaxDim)
    return fail(CUDAL2_STATUS_INVALID_VALUE, "sizes must be in 1..2^31-1 (got %lldx%lldx%lld)", (long long)m,
                (long long)n, (long long)k);
  return CUDAL2_STATUS_SUCCESS;
}

cudal2_context* g_default = nullptr;
cudal2_status_t g_default_status = CUDAL2_STATUS_SUCCESS;
std::once_flag g_default_once;

cudal2_status_t resolve(cudal2_handle_t& h) {
  if (h) return CUDAL2_STATUS_SUCCESS;
  std::call_once(g_default_once, [] { g_default_status = cudal2_create(&g_default, nullptr); });
  if (g_default_status) return fail(g_default_status, "creating the default handle failed");
  h = g_default;
  return CUDAL2_STATUS_SUCCESS;
}

// The handle's device's table, or none.
cudal2_status_t pick_table(cudal2_context* h, int major, int minor) {
  std::string name;
  if (const cudaError_t ce = device_name(h->device, name); ce != cudaSuccess)
    return fail(CUDAL2_STATUS_CUDA_ERROR, "cudaGetDeviceProperties: %s", cudaGetErrorString(ce));
  h->table = device_table(name, major, minor);
  return CUDAL2_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cudal2_status_t cudal2_create(cudal2_handle_t* handle, const cudal2_options* options) {
  cudal2::rt::clear_error();
  if (!handle) return fail(CUDAL2_STATUS_INVALID_VALUE, "handle is NULL");
  *handle = nullptr;
  auto h = std::make_unique<cudal2_context>();
  const char* env_tune = std::getenv("CUDAL2_TUNE_UNSEEN");
  const auto env_mode = cudal2::rt::parse_tune_env(env_tune);
  if (!options && !env_mode)
    return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_TUNE_UNSEEN=%.40s: not 0 (off), 1 (blocking) or 2 (background)",
                env_tune);
  cudal2_options opt{0, 0.0, 1, env_mode.value_or(CUDAL2_TUNE_BACKGROUND)};
  if (options) opt = *options;
  if (opt.tune_unseen < CUDAL2_TUNE_OFF || opt.tune_unseen > CUDAL2_TUNE_BACKGROUND)
    return fail(CUDAL2_STATUS_INVALID_VALUE, "tune_unseen %d: not CUDAL2_TUNE_OFF, _BLOCKING or _BACKGROUND",
                opt.tune_unseen);
  h->neighbour_factor = opt.neighbour_factor;
  h->tune_unseen = opt.tune_unseen == CUDAL2_TUNE_BLOCKING;
  h->tune_background = opt.tune_unseen == CUDAL2_TUNE_BACKGROUND;
  if (const char* log = std::getenv("CUDAL2_TUNE_LOG"); log && *log) {
    FILE* f = std::fopen(log, "a");
    if (!f) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_TUNE_LOG=%.200s: cannot append to it", log);
    std::fclose(f);
    h->tune_log = log;
  }
  if (const char* v = std::getenv("CUDAL2_TUNE_PASSES"); v && *v) {
    const auto p = cudal2::rt::parse_stream_bound(v, 1, 3);
    if (!p) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_TUNE_PASSES=%.40s: not 1, 2 or 3", v);
    h->tune_passes = static_cast<int>(*p);
  }
  cudaError_t ce = cudaGetDevice(&h->device);
  int major = 0, minor = 0;
  if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, h->device);
  if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, h->device);
  if (ce != cudaSuccess) return fail(CUDAL2_STATUS_CUDA_ERROR, "no usable CUDA device: %s", cudaGetErrorString(ce));
  // This device's table, by name and compute capability; none: everything goes to cuBLASLt.
  if (auto st = pick_table(h.get(), major, minor)) return st;
  h->table_on = opt.use_table != 0 && h->table && h->table->num_kernels > 0;
  if (const char* rule = std::getenv("CUDAL2_M_BUCKETS"); rule && *rule) {
    const auto r = cudal2::rt::parse_bucket_rule(rule);
    if (!r) return fail(CUDAL2_STATUS_INVALID_VALUE, "CUDAL2_M_BUCKETS=%s: not one of up, down, nearest, off", rule);
    h->bucket_rule = *r;
  }
  if (auto st = read_stream_env(h->stream_bounds)) return st;
  if (const char* s = std::getenv("CUDAL2_STREAM"); major == 9 && cudal2::rt::stream_enabled(s)) {
    h->stream = cudal2::rt::stream_portfolio();
    if (cudaDeviceGetAttribute(&h->sm_count, cudaDevAttrMultiProcessorCount, h->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&h->l2_bytes, cudaDevAttrL2CacheSize, h->device) != cudaSuccess) {
      cudaGetLastError();
      h->stream.clear();
    }
    h->recency.set_window(int64_t(h->l2_bytes) / 2);
  }
  if (auto st = cublasLtCreate(&h->lt); st != CUBLAS_STATUS_SUCCESS)
    return fail(CUDAL2_STATUS_CUBLAS_ERROR, "cublasLtCreate: %s", cublasLtGetStatusString(st));
  // Plan every table entry once; the workspace must hold what the largest needs.
  size_t need = 0;
  const int num_entries = h->table_on ? h->table->num_entries : 0;
  h->entry_calls.resize(static_cast<size_t>(num_entries));
  for (int i = 0; i < num_entries; ++i) {
    const Entry& e = h->table->entries[i];
    // Entries are sorted by (accum, layout, m, n, k): each (N, K)'s M come in ascending order.
    auto& b = h->buckets[NKKey{e.accum, e.layout, e.n, e.k}];
    b.ms.push_back(e.m), b.entries.push_back(&e);
    if (e.kernel < 0) continue;
    KernelCall& c = h->entry_calls[i];
    c.table = h->table, c.kernel = e.kernel, c.raster = e.raster, c.swizzle = e.swizzle,
    c.decomposition = e.decomposition;
    c.splits = e.splits;
    char why[256];
    if (plan_kernel(h->lt, c, e.m, e.n, e.k, why, sizeof why)) need = std::max(need, c.need_total);
  }
  h->ws_bytes = opt.workspace_bytes ? opt.workspace_bytes : std::max(CUDAL2_DEFAULT_WORKSPACE_BYTES, need);
  if (h->ws_bytes < kZone) h->ws_bytes = kZone;
  if ((ce = cudaMalloc(&h->ws, h->ws_bytes)) != cudaSuccess ||
      (ce = cudaMemset(h->ws, 0, h->ws_bytes)) != cudaSuccess || (ce = cudaDeviceSynchronize()) != cudaSuccess) {
    if (h->ws) cudaFree(h->ws);
    cublasLtDestroy(h->lt);
    return fail(CUDAL2_STATUS_ALLOC_FAILED, "workspace of %zu bytes: %s", h->ws_bytes, cudaGetErrorString(ce));
  }
  if (h->tune_background) tuner_of(h.get());  // the worker's start is not the first call's cost
  *handle = h.release();
  return CUDAL2_STATUS_SUCCESS;
}

cudal2_status_t cudal2_destroy(cudal2_handle_t h) {
  cudal2::rt::clear_error();
  if (!h) return CUDAL2_STATUS_SUCCESS;
  stop_tuner(h);  // before what its job uses (plans, the cuBLASLt handle) goes
  if (h->ws) cudaFree(h->ws);
  h->plans.clear();
  h->entry_calls.clear();
  if (h->lt) cublasLtDestroy(h->lt);
  delete h;
  return CUDAL2_STATUS_SUCCESS;
}

cudal2_status_t cudal2_gemm(cudal2_handle_t h, cudal2_layout_t layout, cudal2_accum_t accum, int64_t m, int64_t n,
                            int64_t k, const void* A, const void* B, void* C, void* workspace, size_t workspace_bytes,
                            cudal2_stream_t stream) {
  cudal2::rt::clear_error();
  if (auto s = check_problem(layout, accum, m, n, k)) return s;
  if (!A || !B || !C) return fail(CUDAL2_STATUS_INVALID_VALUE, "A, B and C must not be NULL");
  if ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B) | reinterpret_cast<uintptr_t>(C)) % 16)
    return fail(CUDAL2_STATUS_MISALIGNED, "A, B and C must be 16-byte aligned");
  if (auto s = resolve(h)) return s;
  if (!workspace) {
    workspace = h->ws, workspace_bytes = h->ws_bytes;
  } else if (reinterpret_cast<uintptr_t>(workspace) % 256) {
    return fail(CUDAL2_STATUS_MISALIGNED, "workspace must be 256-byte aligned");
  }
  auto s_ = reinterpret_cast<cudaStream_t>(stream);
  if (!h->stream.empty()) {
    // Weights of the cold band that this handle has not read recently stream from DRAM whatever
    // else knows the shape (table entries were tuned, and plans chosen, with the weights in L2).
    const bool warm = h->recency.note(B, n * k * 2, (m * k + n * k + m * n) * 2);
    bool planned = false;
    if (!warm && cudal2::rt::in_cold_band(layout, accum, m, n, k, h->l2_bytes, h->stream_bounds))
      if (const KernelCall* c = cold_call(h, layout, accum, m, n, k, workspace_bytes, &planned)) {
        const cudal2_status_t rc = run_call(h, *c, accum, m, n, k, A, B, C, workspace, workspace_bytes, s_);
        if (planned && rc == CUDAL2_STATUS_SUCCESS && h->tune_background)
          queue_warm_tuning(h, layout, accum, m, n, k, workspace_bytes);
        return rc;
      }
  }
  bool neighbours = true, held = false;
  if (const Entry* e = table_entry(h, accum, layout, m, n, k, &neighbours, &held))
    return run_call(h, entry_call(h, e), accum, m, n, k, A, B, C, workspace, workspace_bytes, s_);
  const Plan* p = nullptr;
  std::unique_ptr<Plan> temp;
  TuneOn on{A, B, C, workspace, workspace_bytes, s_};
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  const bool can_tune =
      h->tune_unseen && !held && cudaStreamIsCapturing(s_, &cs) == cudaSuccess && cs == cudaStreamCaptureStatusNone;
  if (auto s =
          get_plan(h, layout, accum, m, n, k, workspace_bytes, neighbours, can_tune ? &on : nullptr, temp, p, held))
    return s;
  if (p->path != CUDAL2_PATH_CUBLASLT)
    return run_call(h, p->call, accum, m, n, k, A, B, C, workspace, workspace_bytes, s_);
  // The call is launched before its shape's tuning is queued, so that none of the worker's first
  // steps (a stream, device memory for its operands, its kernels) can come before it.
  size_t lt_bytes = workspace_bytes;
  cudal2_status_t rc;
  if (p->c_scratch) {
    lt_bytes = padded_c_offset(workspace_bytes, p->c_scratch);
    auto* padded = static_cast<char*>(workspace) + lt_bytes;
    rc = CUDAL2_STATUS_SUCCESS;
    for (int64_t r0 = 0; r0 < m; r0 += p->chunk_m) {
      const int64_t row0 = std::min(r0, m - p->chunk_m);  // the last chunk ends at M
      const void* a = static_cast<const char*>(A) + row0 * k * 2;
      if ((rc = run_lt(h->lt, p->lt_now(), accum, a, B, padded, workspace, lt_bytes, s_)) != CUDAL2_STATUS_SUCCESS)
        break;
      if (const cudaError_t e = cudal2::rt::finish_padded_c(a, B, padded, p->lt->ldc, C, row0, p->chunk_m, n, k, s_);
          e != cudaSuccess) {
        rc = fail(CUDAL2_STATUS_CUDA_ERROR, "finishing the padded C: %s", cudaGetErrorString(e));
        break;
      }
    }
  } else {
    rc = run_lt(h->lt, p->lt_now(), accum, A, B, C, workspace, workspace_bytes, s_);
  }
  if (rc == CUDAL2_STATUS_SUCCESS && h->tune_background && !held)
    queue_plan_tuning(h, p, layout, accum, m, n, k, lt_bytes);
  return rc;
}

cudal2_status_t cudal2_tune_wait(cudal2_handle_t h, long* tuned) {
  cudal2::rt::clear_error();
  if (auto s = resolve(h)) return s;
  cudal2::rt::BackgroundTuner* t = nullptr;
  {
    const std::lock_guard<std::mutex> lock(h->tuner_mu);
    t = h->tuner.get();
  }
  if (t) t->wait();
  if (tuned) *tuned = t ? t->finished() : 0;
  return CUDAL2_STATUS_SUCCESS;
}

cudal2_status_t cudal2_query(cudal2_handle_t h, cudal2_layout_t layout, cudal2_accum_t accum, int64_t m, int64_t n,
                             int64_t k, cudal2_dispatch_info* info) {
  cudal2::rt::clear_error();
  if (!info) return fail(CUDAL2_STATUS_INVALID_VALUE, "info is NULL");
  if (auto s = check_problem(layout, accum, m, n, k)) return s;
  if (auto s = resolve(h)) return s;
  *info = cudal2_dispatch_info{CUDAL2_PATH_CUBLASLT, "cublaslt", 0, 0, 0, 0};
  bool neighbours = true, held = false;
  if (const Entry* e = table_entry(h, accum, layout, m, n, k, &neighbours, &held)) {
    *info = {CUDAL2_PATH_TABLE_KERNEL, e->spec, e->m, e->n, e->k, entry_call(h, e).need_total};
    return CUDAL2_STATUS_SUCCESS;
  }
  const Plan* p = nullptr;
  std::unique_ptr<Plan> temp;
  if (auto s = get_plan(h, layout, accum, m, n, k, h->ws_bytes, neighbours, nullptr, temp, p, held)) return s;
  if (p->path == CUDAL2_PATH_STREAM_KERNEL)
    *info = {p->path, p->call.table->kernels[p->call.kernel].spec, m, n, k, p->call.need_total};
  else if (p->path != CUDAL2_PATH_CUBLASLT)
    *info = {p->path, p->from->spec, p->from->m, p->from->n, p->from->k, p->call.need_total};
  else {
    // A plan the handle keeps reports the configuration its calls run now (the tuned one once
    // tuning has finished); a plan made for this query alone stays "cublaslt".
    const LtPlan& lt = p->lt_now();
    if (!temp && !lt.spec.empty()) info->spec = lt.spec.c_str();
    info->workspace_bytes = lt.ws ? kZone + lt.ws : 0;
    if (p->c_scratch) info->workspace_bytes = (kZone + lt.ws + 255) / 256 * 256 + p->c_scratch;
  }
  return CUDAL2_STATUS_SUCCESS;
}

}  // extern "C"
