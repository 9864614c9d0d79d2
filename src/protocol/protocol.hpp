#pragma once
// The judge protocol: every message between the tuner, the judge (`cudal2 judge`) and a
// candidate's runner (`cudal2 runner`), as typed structs with their JSON forms, used by both sides
// of each pipe. docs/judge-protocol.md lists every op with its fields and an example. Transport:
// sandbox::serve, one JSON object per line each way; every answer carries a boolean "ok".
//
// Requests are parsed strictly: an unknown op, a missing or mistyped field, or an unknown word
// throws ProtocolError naming where ("eval request: shapes[1] is not [m, n, k]"); the serving
// side answers it as {"ok": false, "error": ...}. Answers are parsed strictly too, because the
// judge must survive anything a runner (untrusted) or a broken judge writes: parse_job_answer
// never throws (the tuner records protocol-error), the runner answers' parsers throw
// ProtocolError (the judge fails the candidate with protocol-error).
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/problem.hpp"
#include "core/stats.hpp"
#include "protocol/measure_settings.hpp"
#include "protocol/modes.hpp"
#include "protocol/outcome.hpp"

namespace cudal2::protocol {

// A message that is not the protocol: what is wrong and where.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- answers' common forms

// {"ok": false, "error": E}: a request that could not be served. With "fatal": true, "kind": K,
// "exit_after": true: a fault poisoned the process's CUDA context (K one of is_fatal_fault's
// kinds); the process exits after answering and the parent starts a new one.
struct ErrorAnswer {
  std::string error;
  bool fatal = false;
  FailureKind kind = FailureKind::None;  // fatal only
};
nlohmann::json to_json(const ErrorAnswer& a);
// nullopt when j is an object with "ok": true (and no "fatal": true); the error otherwise. A
// missing or non-string error reads as "", a fatal answer's unknown kind as cuda-fatal (a process
// cannot turn a fault into anything milder by naming it). Throws ProtocolError when j is not an
// object with a boolean "ok".
std::optional<ErrorAnswer> error_of(const nlohmann::json& j);
// {"ok": true}: the answer of requests that return nothing else.
nlohmann::json ok_answer();

// The summary of one timer's samples in an answer: {"median","p10","p90","min","n"}.
nlohmann::json summary_json(const Summary& s);

// ---------------------------------------------------------------- cudal2 judge

inline constexpr const char* kEvalOp = "eval";
inline constexpr const char* kLtSpaceOp = "lt-space";
inline constexpr const char* kCanaryOp = "canary";

// One candidate of an eval job.
struct EvalCandidate {
  std::string name;            // the method name of its rows ("k-<hash>" or "candidate-<i>")
  std::string artifact;        // the compiled shared object ("" for a spec run in the judge)
  std::string spec;            // canonical spec text; "" for a free-form source
  Layout layout = Layout::NN;  // a free-form source's layout (a spec carries its own)
};

// op "eval": verify and time the candidates against the baselines on each shape, in one bench.
// The measure settings (modes, timers, reps, qps, verify budget, interleave) are the base; on the
// wire each is a field of its own (timers absent: graph, eager, host; interleave absent: true).
struct EvalJob : MeasureSettings {
  std::vector<EvalCandidate> candidates;
  std::vector<Shape> shapes;
  Accum accum = Accum::F32;
  std::vector<std::string> baselines;  // method names (baselines/registry)
  std::string csv;                     // "": none; else the bench appends its rows there
  std::string command = "judge";       // the command line recorded in the CSV header
  std::string runner;                  // the runner executable; "": the judge's own
  int candidate_timeout = 60;          // seconds per request to a runner
  bool confine = true;                 // confine the runners (docs/threat-model.md)
};

// One method's result on one shape.
struct MethodAnswer {
  std::string method;
  Status status = Status::Ok;  // ok | unsupported | failed | error
  // The failed check or failure kind (None when ok); a word the tuner does not know reads as error.
  FailureKind failure = FailureKind::None;
  std::string reason;
  // The random-normal check's relative error; nullopt when not computed (-1 on the wire; null
  // for a NaN error).
  std::optional<double> rel_err;
  std::map<Mode, std::map<TimerKind, Summary>> timing;
};

struct ShapeAnswer {
  Shape shape;
  std::vector<MethodAnswer> methods;
};

// The answer to an eval job.
struct JobAnswer {
  bool ok = false;
  // ok: the measurements.
  std::string gpu;
  std::vector<ShapeAnswer> shapes;
  // !ok: why the job did not run; fatal: the judge's CUDA context was poisoned (kind says how).
  std::string error;
  bool fatal = false;
  FailureKind kind = FailureKind::None;
};

// op "lt-space": the cublaslt family's specs for each shape and layout on this GPU.
struct LtSpaceJob {
  std::vector<Shape> shapes;
  std::vector<Layout> layouts;
  Accum accum = Accum::F32;
  int max = 16;  // specs per problem
};

struct LtSpace {
  Shape shape;
  Layout layout = Layout::NN;
  std::vector<std::string> specs;  // canonical spec texts
};

struct LtSpaceAnswer {
  std::string gpu;
  std::vector<LtSpace> spaces;  // one per shape and layout, in the job's order
};

// op "canary": is the GPU healthy right now? A trusted check that loads no candidate code
// (judge/canary.hpp): cuBLAS GEMMs on fixed inputs for `seconds`, every output verified, every
// launch timed.
struct CanaryJob {
  double seconds = 1.0;  // how long to keep the GPU busy with checked GEMMs
  int n = 512;           // n x n x n GEMMs (a multiple of 64, at most 2048: the output stays exact)
};

struct CanaryAnswer {
  bool healthy = false;
  std::string reason;  // not healthy: what the canary saw
  std::string gpu;
  int launches = 0;
  double median_us = 0, max_us = 0;  // per launch (CUDA events)
};

using JudgeRequest = std::variant<EvalJob, LtSpaceJob, CanaryJob>;

nlohmann::json to_json(const CanaryJob& job);
nlohmann::json to_json(const CanaryAnswer& a);
// Throws ProtocolError when j is not a canary answer (an error answer included).
CanaryAnswer parse_canary_answer(const nlohmann::json& j);

nlohmann::json to_json(const EvalJob& job);
nlohmann::json to_json(const LtSpaceJob& job);
nlohmann::json to_json(const JobAnswer& a);
nlohmann::json to_json(const LtSpaceAnswer& a);
// Throws ProtocolError: not an object, an unknown op, or a malformed job.
JudgeRequest parse_judge_request(const nlohmann::json& j);
// Never throws. The typed answer, or nullopt with *why saying what is malformed (path and problem).
std::optional<JobAnswer> parse_job_answer(const nlohmann::json& j, std::string* why);
// The answer of an "ok": true lt-space answer (check error_of first); throws ProtocolError.
LtSpaceAnswer parse_lt_space_answer(const nlohmann::json& j);

// ---------------------------------------------------------------- cudal2 runner (one candidate)

// A judge's device buffer exported through CUDA IPC: the allocation's handle (hex) and where in
// it the buffer starts.
struct IpcBuffer {
  std::string handle;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
// The handle's hex text (to_hex, the judge) and back into its bytes (from_hex, the runner; throws
// InputError when the text is not n bytes of hex).
std::string to_hex(const void* p, std::size_t n);
void from_hex(const std::string& hex, void* p, std::size_t n);

// "init": set up CUDA (map and unmap `warm`, capture a graph) and, with deny_sockets, forbid
// sockets before any candidate code is loaded. Answer: InitAnswer.
struct InitRequest {
  IpcBuffer warm;
  bool deny_sockets = false;
};
// "calibrate": replay a graph of `calls` trusted spin kernels of `ns` each. Answer: TimeAnswer.
struct CalibrateRequest {
  std::uint64_t ns = 0;
  int calls = 1;
};
// "load": load the candidate. Answer: ok_answer().
struct LoadRequest {
  std::string artifact;
  std::string spec;  // "" for a free-form source: then layout and accum describe it
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
};
// "query": can the candidate run this shape, with how much workspace. Answer: QueryAnswer.
struct QueryRequest {
  Shape shape;
};
// "bind": the shape's operands (and workspace) in the judge's buffers. Answer: ok_answer().
struct BindRequest {
  Shape shape;
  IpcBuffer A, B, C;
  std::optional<IpcBuffer> W;  // null on the wire: no workspace
};
// "unbind": forget the bound operands. Answer: ok_answer().
struct UnbindRequest {};
// "run": one call on the bound operands, synchronized. Answer: ok_answer().
struct RunRequest {};
// The judge's buffers for chained batches (measure/interlude.hpp): the seed word it sets before each
// batch and the slots that keep every call's output but the last.
struct InterludeBuffers {
  IpcBuffer seed;
  std::optional<IpcBuffer> slots;  // null on the wire: outputs are not kept
  bool interleave = false;         // graph and eager batches are chains too (else only "chain")
};
// "timer": set up the timers of one mode. Answer: TimerAnswer.
struct TimerRequest {
  Mode mode = Mode::Offline;
  double target_us = 200;  // device time an offline batch aims at
  int max_inner = 1000;
  std::optional<InterludeBuffers> interlude;  // absent: no chains
};
// "sample": one sample of a timer, or (single) one fresh call. Answer: TimeAnswer; a chained
// batch answers its whole time per call, interludes included (the judge subtracts its own timing
// of them).
struct SampleRequest {
  bool single = false;  // "single" on the wire
  TimerKind timer = TimerKind::Graph;
};

using RunnerRequest = std::variant<InitRequest, CalibrateRequest, LoadRequest, QueryRequest, BindRequest, UnbindRequest,
                                   RunRequest, TimerRequest, SampleRequest>;

struct InitAnswer {
  std::int64_t pid = 0;  // the runner's pid in its own namespace (informational)
};
// calibrate, sample: microseconds per call, over `calls` calls.
struct TimeAnswer {
  double us = 0;
  int calls = 1;
};
struct QueryAnswer {
  std::string refusal;  // "" : it can; else why not
  std::size_t workspace = 0;
};
struct TimerAnswer {
  int inner = 1;            // calls per batch
  std::string graph_error;  // "" : the graph timer works
};

nlohmann::json to_json(const RunnerRequest& r);
// Throws ProtocolError: not an object, an unknown op, or a malformed request.
RunnerRequest parse_runner_request(const nlohmann::json& j);
std::string_view op_of(const RunnerRequest& r);  // "init", "calibrate", ...

nlohmann::json to_json(const InitAnswer& a);
nlohmann::json to_json(const TimeAnswer& a);
nlohmann::json to_json(const QueryAnswer& a);
nlohmann::json to_json(const TimerAnswer& a);
// The payload of an "ok": true answer (check error_of first); each throws ProtocolError naming
// the answer and the field.
InitAnswer parse_init_answer(const nlohmann::json& j);
TimeAnswer parse_time_answer(const nlohmann::json& j, const char* op);  // op: "calibrate" or "sample"
QueryAnswer parse_query_answer(const nlohmann::json& j);
TimerAnswer parse_timer_answer(const nlohmann::json& j);

}  // namespace cudal2::protocol
