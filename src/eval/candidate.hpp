#pragma once
// Evaluating kernel candidates: the job a worker process runs (load artifacts, verify and time
// them against the baselines in one bench, on the same inputs), and the parent side that
// compiles, sends jobs to a sandboxed worker, attributes failures, and stores every outcome.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/spec.hpp"
#include "eval/bench.hpp"

namespace cudal2 {

// Worker side. Request:
//   {"op":"eval", "candidates":[{"artifact":PATH, "spec":TEXT or "", "layout":"nn"|"tn", "name":STR}],
//    "accum":"f32"|"f16", "shapes":[[m,n,k],...], "modes":["offline",...], "timers":["graph",...],
//    "reps":N, "verify_budget":X, "baselines":[names], "csv":PATH (optional; rows appended)}
// Response: {"ok":true, "gpu":NAME, "shapes":[{m,n,k, methods:[{method, status, failure, reason,
// rel_err, timing:{mode:{timer:{median,p10,p90,min,n}}}}]}]}; {"ok":false,"error":...} for a job
// that could not run; {"ok":false,"fatal":true,"kind":K,"exit_after":true,...} when a kernel left
// the CUDA context unusable (illegal address, device assert, ...): the worker then exits.
nlohmann::json run_eval_job(const nlohmann::json& request);
int worker_main();  // `cudal2 worker`: serves jobs on stdin/stdout until EOF

// What happened to a candidate, one word (stored as the measurement status):
//   ok, unsupported (refused every shape), compile-error, compile-timeout, wrong-result,
//   out-of-bounds (a guard band changed), illegal-address / device-assert / illegal-instruction /
//   cuda-fatal (the context was poisoned), crash (the worker died by a signal), hang (killed after
//   the timeout), exited, protocol-error, error (anything else, with a reason).
std::string failure_kind_of_check(const std::string& failed_check);  // verification check -> kind

struct EvalRequest {
  std::vector<KernelSpec> specs;
  std::vector<std::string> free_sources;  // `eval --source FILE.cu`: free-form candidates with the kernel ABI
  Layout free_layout = Layout::NN;
  Accum free_accum = Accum::F32;
  std::vector<Shape> shapes;
  std::vector<Mode> modes{Mode::Offline};
  std::array<bool, 3> timers{true, true, true};
  int reps = 20;
  double qps = 200;  // server mode: mean idle gap 1/qps seconds
  double verify_budget = double(1 << 28);
  std::vector<std::string> baselines{"cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn"};
  std::string db_path = "cudal2.db";
  std::string worker_exe;  // default: this executable
  int timeout_s = 120;     // per candidate in a job, on top of job_overhead_s
  int job_overhead_s = 180;  // baselines (auto-tuning), inputs, references
  int batch = 4;           // candidates per worker job; a failed job is retried one candidate at a time
  std::string csv_path;    // optional: the worker appends the bench's CSV rows here
  bool name_by_hash = false;  // method names "k-<hash>" instead of "candidate-<i>" (CSV rows)
  double deadline_minutes = 0;  // >0: start no new chunk of candidates after this long
  std::string command_line;
  bool progress = true;
  // Confine each candidate's runner process (docs/threat-model.md). Off only to diagnose a
  // machine where the confinement itself fails; results are then marked unconfined.
  bool confine = true;
};

struct CandidateOutcome {
  std::string spec_text, spec_hash;
  std::string status;  // a failure kind (above) or "ok"
  std::string detail;
  double compile_seconds = 0;
  double measure_seconds = 0;  // this candidate's share of its job's wall time
  // Offline graph-timer median per shape ("MxNxK" -> us) where the candidate passed.
  std::map<std::string, double> graph_us;
};

// Compiles the candidates (a parallel pool, overlapped with measuring), evaluates them in batches
// in a sandboxed worker, stores specs, builds and measurements (one transaction each, as they
// arrive), and returns what happened to each candidate, in input order.
std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req);

// Exhaustive search order over the families' spaces ("full": every valid compile-time
// configuration; "core": the sub-space docs/tuning.md describes), NN and TN, default runtime
// knobs plus the split counts of families that have them, minus specs the store already has a
// result for on every shape (that is what makes a rerun resume), at most `budget` (0: all).
std::vector<KernelSpec> search_space(const std::vector<std::string>& families, const std::string& space, Accum accum);
std::vector<KernelSpec> exhaustive_candidates(const std::string& db_path, const std::vector<Shape>& shapes, Mode mode,
                                              const std::vector<KernelSpec>& space, int budget);
// The `top` fastest specs per shape and layout in the store (offline, graph timer).
std::vector<std::pair<Shape, std::vector<KernelSpec>>> top_candidates(const std::string& db_path,
                                                                      const std::vector<Shape>& shapes, Accum accum,
                                                                      int top);
void print_outcomes(const std::vector<CandidateOutcome>& outcomes);
// Counts by outcome, compile and measure time, and the best candidate per shape.
void print_tune_summary(const std::vector<CandidateOutcome>& outcomes);
// `cudal2 show`: best spec per shape for a GPU (default: this machine's), with its speedup over
// the best cuBLAS and the best cuBLASLt auto-tuning time measured in the same job.
int print_best(const std::string& db_path, const std::string& gpu = "");

}  // namespace cudal2
