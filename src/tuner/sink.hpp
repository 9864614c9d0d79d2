#pragma once
// Where evaluate_candidates (tuner/evaluate.hpp) puts what it learns, as it learns it: a sink the
// caller supplies. The evaluation measures and keeps nothing: it never opens the store. The tuner's sink
// writes each record to the store under a run of its own (tuner/record.hpp), a judge job's
// measurements in one transaction as the job ends, so a killed run loses at most the job in
// flight; a test can keep them in memory.
// The records carry what eval knows; the sink adds what it owns (the store's run id, timestamps).
#include <cstdint>
#include <optional>
#include <string>

namespace cudal2 {

// A candidate, given once per evaluation before anything else about it.
struct SpecRecord {
  std::string hash;    // KernelSpec::hash(), or a free-form candidate's hash of its text
  std::string family;  // the spec's family, or "source" for a free-form candidate
  std::string text;    // KernelSpec::text(), or a free-form candidate's source
};

// A candidate's build: compiled (or cached), failed, or "built" without a compile (runs_in_judge).
struct BuildRecord {
  std::string spec_hash;
  std::string source_hash;  // the JIT's cache key ("in-judge": no artifact needed)
  std::string status;       // "ok", "compile-error" or "timeout" (CompileResult::status)
  double compile_seconds = 0;
  std::string log;
  std::string artifact_path;  // "" when the build produced none
};

// One (shape, mode, timer) of a candidate: its times when ok, else the failure it is known by.
struct MeasurementRecord {
  std::string spec_hash;
  std::string gpu;     // the device name of the judge that measured it
  std::string dtype;   // the accumulator ("f32", "f16")
  std::string layout;  // "nn", "tn"
  std::int64_t m = 0, n = 0, k = 0;
  std::string mode;    // "offline" or "server"
  std::string timer;   // "graph", "eager", "host" or "chain"
  std::string status;  // "ok" or the outcome's word (protocol/outcome.hpp)
  std::string failure;
  std::optional<double> median_us, p10_us, p90_us, min_us;  // set when status is "ok"
  std::optional<double> rel_err;
  std::string baseline_json = "{}";  // the job's baselines: {name: {mode: {timer: summary}}}
  std::optional<double> reward;      // EvalRequest::score of this row (none without a scorer)
  std::optional<double> chain_us;    // a graph row's chain-timer median, where the job timed chained
};

// Called on the thread that called evaluate_candidates, in the order things happen: every spec
// first, then each build as its compile finishes (with failure rows on each of its shapes when it
// did not compile) and each measurement as its job answers. A sink that throws stops the
// evaluation with its error.
class EvalSink {
 public:
  EvalSink() = default;
  EvalSink(const EvalSink&) = delete;
  EvalSink& operator=(const EvalSink&) = delete;
  virtual ~EvalSink() = default;
  virtual void spec(const SpecRecord& s) = 0;
  virtual void build(const BuildRecord& b) = 0;
  virtual void measurement(const MeasurementRecord& m) = 0;
  // The end of a judge job's records (and of a failed build's): a sink that holds measurements
  // writes them now, together.
  virtual void flush() {}
};

}  // namespace cudal2
