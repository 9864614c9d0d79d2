#pragma once
// What a method came to and why, in every process: statuses (Status), failure kinds
// (FailureKind), a candidate's stored outcome (Outcome), and the two exceptions a method throws
// (CandidateFault, also what a check returns; MethodUnsupported). A method's verification record
// with its numbers is measure/verify.hpp's Verdict. The code uses these enums; their words exist
// only at the boundaries (the judge protocol, protocol/protocol.hpp; the bench CSV; the store's
// measurements.status and the committed CSVs of stores; the console), converted by to_string and
// parse_* below. The words
// are fixed: stores, CSVs and docs (docs/tuning.md, docs/threat-model.md) depend on them.
// C++17: included by .cu files (verify.hpp, device.hpp).
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cudal2 {

// What a method came to on one shape of a bench (MethodResult::status, the judge's answer, the
// bench CSV's status column); a stored measurement may also be not-capturable or not-run.
enum class Status : std::uint8_t {
  Ok,             // "ok": verified (and timed where asked)
  Unsupported,    // "unsupported": the method refused the shape
  Failed,         // "failed": a check failed or the candidate faulted; a FailureKind says which
  Error,          // "error": verifying or timing it threw
  NotCapturable,  // "not-capturable": a row of an ok method that this timer could not time
  NotRun,         // "not-run": a candidate the budget left unmeasured
  // "gpu-disturbed": not measured, because the GPU itself was disturbed (a trusted canary failed
  // while the candidate was evaluated: tuner/attribution.hpp). Not the candidate's fault: no
  // reward, no stored row; a later run measures it again.
  GpuDisturbed,
};
inline constexpr Status kStatuses[] = {Status::Ok,          Status::Unsupported,   Status::Failed,
                                       Status::Error,       Status::NotCapturable, Status::NotRun,
                                       Status::GpuDisturbed};

// What went wrong. Two vocabularies in one enum, each value with its own word: the classic
// checks by name (what Verdict::failure and the CSV's failure column hold), and the failure kinds
// a candidate's measurements are stored under (docs/threat-model.md; their rewards in
// docs/tuning.md). kind_of_check maps the first onto the second.
enum class FailureKind : std::uint8_t {
  None,  // "": nothing failed
  // Classic checks (judge/classic_checks.cpp verify_once).
  OutOfBoundsWrite,  // "out-of-bounds write" -> out-of-bounds
  UnwrittenOutput,   // "unwritten output"    -> wrong-result
  NanInf,            // "NaN/Inf"             -> wrong-result
  ExactMismatch,     // "exact mismatch"      -> wrong-result
  NormalError,       // "normal error"        -> wrong-result
  // Failure kinds.
  WrongResult,         // "wrong-result"
  OutOfBounds,         // "out-of-bounds": a guard band changed
  InputModified,       // "input-modified"
  ImplausibleTime,     // "implausible-time": faster than the hardware allows
  TimingMismatch,      // "timing-mismatch": the runner's times disagree with the judge's clock
  InconsistentTime,    // "inconsistent-time": batched calls far faster than a fresh single call
  HostThread,          // "host-thread": threads or processes left behind
  ProtocolError,       // "protocol-error": an answer that is not the protocol
  IllegalAddress,      // "illegal-address"      (a poisoned CUDA context, measure/device.hpp)
  DeviceAssert,        // "device-assert"
  IllegalInstruction,  // "illegal-instruction"
  CudaFatal,           // "cuda-fatal"
  Crash,               // "crash": the process died by a signal
  Hang,                // "hang": killed after the timeout
  Exited,              // "exited": the process exited without answering
  Error,               // "error": anything else
  CompileTimeout,      // "compile-timeout"
  CompileError,        // "compile-error"
};
inline constexpr FailureKind kFailureKinds[] = {FailureKind::None,
                                                FailureKind::OutOfBoundsWrite,
                                                FailureKind::UnwrittenOutput,
                                                FailureKind::NanInf,
                                                FailureKind::ExactMismatch,
                                                FailureKind::NormalError,
                                                FailureKind::WrongResult,
                                                FailureKind::OutOfBounds,
                                                FailureKind::InputModified,
                                                FailureKind::ImplausibleTime,
                                                FailureKind::TimingMismatch,
                                                FailureKind::InconsistentTime,
                                                FailureKind::HostThread,
                                                FailureKind::ProtocolError,
                                                FailureKind::IllegalAddress,
                                                FailureKind::DeviceAssert,
                                                FailureKind::IllegalInstruction,
                                                FailureKind::CudaFatal,
                                                FailureKind::Crash,
                                                FailureKind::Hang,
                                                FailureKind::Exited,
                                                FailureKind::Error,
                                                FailureKind::CompileTimeout,
                                                FailureKind::CompileError};

std::string_view to_string(Status s);
std::string_view to_string(FailureKind k);
// The enum value of a word, or nullopt for any other string (case and spelling exact).
std::optional<Status> parse_status(std::string_view word);
std::optional<FailureKind> parse_failure_kind(std::string_view word);

// The failure kind a failed check is stored as: out-of-bounds write -> OutOfBounds, the other
// classic checks -> WrongResult, None -> Error (a failure nobody named); kinds map to themselves.
constexpr FailureKind kind_of_check(FailureKind check) {
  switch (check) {
    case FailureKind::None:
      return FailureKind::Error;
    case FailureKind::OutOfBoundsWrite:
      return FailureKind::OutOfBounds;
    case FailureKind::UnwrittenOutput:
    case FailureKind::NanInf:
    case FailureKind::ExactMismatch:
    case FailureKind::NormalError:
      return FailureKind::WrongResult;
    default:
      return check;
  }
}
// The kinds that say a CUDA context was poisoned (a faulting kernel): its process must exit.
constexpr bool is_fatal_fault(FailureKind k) {
  return k == FailureKind::IllegalAddress || k == FailureKind::DeviceAssert || k == FailureKind::IllegalInstruction ||
         k == FailureKind::CudaFatal;
}

// What a candidate came to (on a shape, or overall): the one word a measurement is stored under
// (measurements.status), the reward is keyed by and the console prints: "ok", "unsupported",
// "not-capturable", "not-run", or a failure kind. status is never Error: an error is Failed with
// kind Error; kind is a failure kind (never a check name) when status is Failed, else None.
struct Outcome {
  Status status = Status::NotRun;
  FailureKind kind = FailureKind::None;

  constexpr Outcome() = default;
  // Failed and Error give Failed with kind Error.
  constexpr Outcome(Status s)  // NOLINT(google-explicit-constructor): `co.status = Status::Ok`
      : status(s == Status::Error ? Status::Failed : s),
        kind(s == Status::Error || s == Status::Failed ? FailureKind::Error : FailureKind::None) {}
  // Failed with kind_of_check(k).
  constexpr Outcome(FailureKind k)  // NOLINT(google-explicit-constructor): `co.status = FailureKind::Hang`
      : status(Status::Failed), kind(kind_of_check(k)) {}

  bool ok() const { return status == Status::Ok; }
  bool failed() const { return status == Status::Failed; }
};

inline bool operator==(const Outcome& a, const Outcome& b) { return a.status == b.status && a.kind == b.kind; }
inline bool operator!=(const Outcome& a, const Outcome& b) { return !(a == b); }
// `o == Status::Failed`: any failure; `o == Status::Error`: the failure kind error.
inline bool operator==(const Outcome& o, Status s) {
  return s == Status::Error ? o.failed() && o.kind == FailureKind::Error : o.status == s;
}
inline bool operator!=(const Outcome& o, Status s) { return !(o == s); }
// `o == FailureKind::WrongResult`: failed with that kind (a check name compares as its kind).
inline bool operator==(const Outcome& o, FailureKind k) { return o == Outcome(k); }
inline bool operator!=(const Outcome& o, FailureKind k) { return !(o == k); }

std::string_view to_string(const Outcome& o);
// The outcome a stored word stands for; nullopt for anything else ("failed" and the check names
// are not stored words).
std::optional<Outcome> parse_outcome(std::string_view word);

// What a candidate did wrong: a failure kind (docs/threat-model.md) and one line for humans, what().
// Thrown when it is found while the candidate runs (its runner crashed, hung, poisoned its CUDA
// context or broke the protocol); returned by a check after the fact (guard bands, inputs, outputs,
// times), where kind None (false) says the check found nothing.
struct CandidateFault : std::runtime_error {
  CandidateFault() : std::runtime_error("") {}
  CandidateFault(FailureKind k, const std::string& detail) : std::runtime_error(detail), kind(k) {}
  FailureKind kind = FailureKind::None;
  explicit operator bool() const { return kind != FailureKind::None; }
};

// A method cannot handle this problem (unsupported shape, library refused, plugin missing): its
// status on the shape is unsupported (Status::Unsupported), which is no failure.
struct MethodUnsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// For test failure messages and logs: the word.
inline std::ostream& operator<<(std::ostream& os, Status s) { return os << to_string(s); }
inline std::ostream& operator<<(std::ostream& os, FailureKind k) { return os << to_string(k); }
inline std::ostream& operator<<(std::ostream& os, const Outcome& o) { return os << to_string(o); }

}  // namespace cudal2
