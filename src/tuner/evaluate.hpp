#pragma once
// Evaluating kernel candidates: the job a judge process runs (load artifacts, verify and time
// them against the baselines in one bench, on the same inputs), and the parent side that
// compiles, sends jobs to a sandboxed judge, attributes failures, and hands every record to the
// caller's sink (tuner/sink.hpp) as it arrives. The evaluation never opens the store.
#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"
#include "protocol/measure_settings.hpp"
#include "protocol/modes.hpp"
#include "protocol/outcome.hpp"
#include "tuner/attribution.hpp"
#include "tuner/sink.hpp"

namespace cudal2 {
class Compiler;
struct CompileOptions;
namespace sandbox {
class Child;
}

// What happened to a candidate is an Outcome (protocol/outcome.hpp), recorded as the measurement's
// status: ok, unsupported (refused every shape), not-run, gpu-disturbed (not measured: the GPU
// itself was disturbed, tuner/attribution.hpp), or a failure kind: compile-error,
// compile-timeout, wrong-result, out-of-bounds (a guard band changed), illegal-address /
// device-assert / illegal-instruction / cuda-fatal (the context was poisoned), crash (the judge
// died by a signal), hang (killed after the timeout), exited, protocol-error, error (anything
// else, with a reason), and the judge's findings (docs/threat-model.md).

// What a measurement record is scored on (the tuner passes search::reward; eval itself scores
// nothing: it measures).
struct ScoreInput {
  Outcome status;          // ok, or the failure stored (also not-capturable)
  double time_us = 0;      // the row's median when ok
  double baseline_us = 0;  // the best baseline of the same job, same mode and timer (0: none)
  std::optional<double> rel_err;
  size_t source_bytes = 0;  // free-form candidates' source length (0 for generated sources)
};

// One (spec, problem) a judge job would measure: what tuners sharing a store claim.
struct WorkItem {
  std::string spec_hash;
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
  Shape shape;
};

// How to measure (modes, timers, reps, qps, verify budget, interleave) is the base: handed to each
// judge job whole (protocol::MeasureSettings).
struct EvalRequest : protocol::MeasureSettings {
  std::vector<KernelSpec> specs;
  // Parallel to specs (or empty): the shapes each spec is measured on; an empty entry means every
  // shape of `shapes`. Each must be one of `shapes`.
  std::vector<std::vector<Shape>> spec_shapes;
  std::vector<std::string> free_sources;  // `eval --source FILE.cu`: free-form candidates with the kernel ABI
  Layout free_layout = Layout::NN;
  Accum free_accum = Accum::F32;
  // `eval --artifact`: kernels built elsewhere (a .so with the kernel C ABI), judged as they are,
  // nothing compiled. The spec it was built from, when given, supplies the runtime knobs, layout
  // and accumulator; without one the artifact runs like a free-form source (free_layout/accum).
  struct Prebuilt {
    std::string path;  // absolute: the runner opens it from its own directory
    std::optional<KernelSpec> spec;
  };
  std::vector<Prebuilt> artifacts;
  std::vector<Shape> shapes;
  std::vector<std::string> baselines{"cublas-nn", "cublas-tn", "cublaslt-autotune-nn", "cublaslt-autotune-tn"};
  std::string judge_exe;  // default: this executable
  // A judge process to evaluate with, kept running after the evaluation (a tune lane's, for the
  // whole tune; started on first use, restarted after a fault); null: the evaluation starts one of
  // its own and stops it at the end. Started from this request's judge_exe, visible_devices and
  // timeouts, so every request given the same one must agree on them.
  sandbox::Child* judge = nullptr;
  // The JIT compiler to build candidates with (a tune lane's, for the whole tune: it asks nvcc for
  // its version once, not once a round); null: the evaluation makes one from compile_jobs.
  const Compiler* compiler = nullptr;
  int timeout_s = 120;          // per candidate in a job, on top of job_overhead_s
  int job_overhead_s = 180;     // baselines (auto-tuning), inputs, references
  int batch = 4;                // candidates per judge job; a failed job is retried one candidate at a time
  std::string csv_path;         // optional: the judge appends the bench's CSV rows here
  bool name_by_hash = false;    // method names "k-<hash>" instead of "candidate-<i>" (CSV rows)
  double deadline_minutes = 0;  // >0: start no new chunk of candidates after this long
  std::string command_line;
  bool progress = true;
  // Confine each candidate's runner process (docs/threat-model.md). Off only to diagnose a
  // machine where the confinement itself fails; results are then marked unconfined.
  bool confine = true;
  // Scores every measurement record before it goes to the sink (its reward); empty: none.
  std::function<std::optional<double>(const ScoreInput&)> score;
  // Non-empty: the judge (and through it the runners) is started with
  // CUDA_VISIBLE_DEVICES set to this, so it measures on that GPU alone (`tune --gpus`: one
  // judge per GPU). Empty: the judge inherits this process's devices and measures on the first.
  std::string visible_devices;
  // The GPU the rows this side writes itself are stored under (a candidate that did not compile,
  // or whose job answered nothing for it): this process's first GPU, as the caller found it
  // (LocalGpus::first_name; the tuner does not call CUDA). "unknown" without one.
  std::string local_gpu = "unknown";
  int compile_jobs = 0;  // parallel compiles of this call (0: the JIT's default, one per core)
  // Whose a fault, a wrong result or an implausible time is: the trusted canary, re-runs and
  // backoff of tuner/attribution.hpp (docs/threat-model.md, "Faults are attributed").
  attribution::Options attribution;
  // Tuners sharing a store (store/claims.hpp): asked just before each judge job (and before a
  // failed build is recorded) with the specs it would measure, true for each that is now this
  // call's. Asked job by job, not for the whole request up front: tuners started together then
  // take the jobs between them (claimed up front, the first took everything and the others had
  // nothing to do; claimed a shape at a time, a few shapes left most tuners idle). Only with
  // spec_shapes (as the tuner gives). Empty: everything is this call's.
  std::function<std::vector<bool>(const std::vector<WorkItem>&)> claim;
  // Set (by SIGTERM): start no new judge job; what was not measured is not-run.
  const std::atomic<bool>* stop = nullptr;
};

struct CandidateOutcome {
  std::string spec_text, spec_hash;
  Outcome status;  // ok, unsupported, not-run or a failure kind (above)
  std::string detail;
  double compile_seconds = 0;
  double measure_seconds = 0;  // this candidate's share of its job's wall time
  // Offline graph-timer median per shape ("MxNxK" -> us) where the candidate passed.
  std::map<std::string, double> graph_us;
  // Per shape: the best baseline's offline graph median in the same job, and the score of the
  // candidate's offline graph row (or of its failure), when EvalRequest::score is set.
  std::map<std::string, double> baseline_us;
  std::map<std::string, double> score;
  std::string device;  // EvalRequest::visible_devices of the judge that measured it ("": the default)
  // Non-empty: an earlier run of it faulted (or failed while the GPU was disturbed) and a later
  // run in a fresh runner was ok; what the earlier run hit. The later run's verified measurement
  // is the one recorded.
  std::string transient_fault;
  // Shapes ("MxNxK") it was not measured on because the GPU was disturbed (status gpu-disturbed
  // when it was measured on none): no row, no reward, no observation; measured again later.
  std::vector<std::string> disturbed_shapes;
  // Shapes ("MxNxK") another tuner on the store claimed (EvalRequest::claim): not measured here,
  // nothing observed; status not-run when that was every shape of it.
  std::vector<std::string> elsewhere_shapes;
};

// Compiles the candidates (a parallel pool, overlapped with measuring), evaluates them in batches
// in a sandboxed judge, gives the sink specs, builds and measurements as they arrive (the
// tuner's sink writes each at once: tuner/record.hpp), and returns what happened to each
// candidate, in input order.
std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req, EvalSink& sink);

// The JIT's options for a request's compiles (its share of the cores: compile_jobs), for a
// request that brings no compiler of its own and for a tune lane's.
CompileOptions compile_options(const EvalRequest& req);

void print_outcomes(const std::vector<CandidateOutcome>& outcomes);

}  // namespace cudal2
