#pragma once
// Evaluating kernel candidates: the job a worker process runs (load an artifact, verify and time
// it against baselines in one bench), and the parent side that compiles, sends the job to a
// sandboxed worker, and stores every outcome, failures included.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/spec.hpp"
#include "eval/bench.hpp"

namespace cudal2 {

// Worker side. Request: {"op":"eval","artifact":PATH,"spec":TEXT,"name":STR,"shapes":[[m,n,k],...],
// "modes":["offline",...],"reps":N,"verify_budget":X,"baselines":[names]}. Response:
// {"ok":true,"gpu":NAME,"shapes":[{m,n,k,methods:[{method,status,failure,reason,rel_err,
// timing:{mode:{timer:{median,p10,p90,min,n}}}}]}]} or {"ok":false,"error":...}.
nlohmann::json run_eval_job(const nlohmann::json& request);
int worker_main();  // `cudal2 worker`: serves jobs on stdin/stdout until EOF

struct EvalRequest {
  std::vector<KernelSpec> specs;
  std::string free_source;  // `eval --source FILE.cu`: a free-form candidate with the kernel ABI
  std::vector<Shape> shapes;
  std::vector<Mode> modes{Mode::Offline};
  int reps = 20;
  double verify_budget = double(1 << 28);
  std::vector<std::string> baselines{"cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn"};
  std::string db_path = "cudal2.db";
  std::string worker_exe;  // default: this executable
  int timeout_s = 300;     // per candidate job
  std::string command_line;
  std::string gpu;  // set by evaluate_candidates from the local device
};

struct CandidateOutcome {
  std::string spec_text, spec_hash;
  std::string status;  // ok | compile-error | timeout | failed | crashed | hung | exited | protocol_error | error
  std::string detail;
  nlohmann::json response;  // the worker's answer when there was one
};

// Compiles each candidate (in parallel), evaluates it in a sandboxed worker, stores specs, builds
// and measurements (one transaction each), and returns what happened to each candidate.
std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req);

// Exhaustive search order: every valid compile-time configuration of sm90_cutlass (NN and TN,
// fp32 accumulation, default runtime knobs), minus those the store already has a result for on
// every shape (that is what makes a rerun resume), at most `budget` of them (0: all).
std::vector<KernelSpec> exhaustive_candidates(const std::string& db_path, const std::vector<Shape>& shapes, Mode mode,
                                              int budget);
void print_outcomes(const std::vector<CandidateOutcome>& outcomes);
// `cudal2 show`: best spec per shape for a GPU (default: this machine's), with its speedup over
// the best cuBLAS and the best cuBLASLt auto-tuning time measured in the same job.
int print_best(const std::string& db_path, const std::string& gpu = "");

}  // namespace cudal2
