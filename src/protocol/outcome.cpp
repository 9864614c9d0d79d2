#include "protocol/outcome.hpp"

#include <array>
#include <utility>

namespace cudal2 {

namespace {

// The words, one table each: the only place they are spelled.
constexpr std::array<std::pair<Status, std::string_view>, 7> kStatusWords{{
    {Status::Ok, "ok"},
    {Status::Unsupported, "unsupported"},
    {Status::Failed, "failed"},
    {Status::Error, "error"},
    {Status::NotCapturable, "not-capturable"},
    {Status::NotRun, "not-run"},
    {Status::GpuDisturbed, "gpu-disturbed"},
}};

constexpr std::array<std::pair<FailureKind, std::string_view>, 24> kFailureWords{{
    {FailureKind::None, ""},
    {FailureKind::OutOfBoundsWrite, "out-of-bounds write"},
    {FailureKind::UnwrittenOutput, "unwritten output"},
    {FailureKind::NanInf, "NaN/Inf"},
    {FailureKind::ExactMismatch, "exact mismatch"},
    {FailureKind::NormalError, "normal error"},
    {FailureKind::WrongResult, "wrong-result"},
    {FailureKind::OutOfBounds, "out-of-bounds"},
    {FailureKind::InputModified, "input-modified"},
    {FailureKind::ImplausibleTime, "implausible-time"},
    {FailureKind::TimingMismatch, "timing-mismatch"},
    {FailureKind::InconsistentTime, "inconsistent-time"},
    {FailureKind::HostThread, "host-thread"},
    {FailureKind::ProtocolError, "protocol-error"},
    {FailureKind::IllegalAddress, "illegal-address"},
    {FailureKind::DeviceAssert, "device-assert"},
    {FailureKind::IllegalInstruction, "illegal-instruction"},
    {FailureKind::CudaFatal, "cuda-fatal"},
    {FailureKind::Crash, "crash"},
    {FailureKind::Hang, "hang"},
    {FailureKind::Exited, "exited"},
    {FailureKind::Error, "error"},
    {FailureKind::CompileTimeout, "compile-timeout"},
    {FailureKind::CompileError, "compile-error"},
}};

static_assert(std::size(kStatuses) == kStatusWords.size(), "every Status has a word");
static_assert(std::size(kFailureKinds) == kFailureWords.size(), "every FailureKind has a word");

}  // namespace

std::string_view to_string(Status s) {
  for (const auto& [v, w] : kStatusWords)
    if (v == s) return w;
  return "error";  // not reached: every value is in the table (tests/unit/protocol_test.cpp)
}

std::string_view to_string(FailureKind k) {
  for (const auto& [v, w] : kFailureWords)
    if (v == k) return w;
  return "error";  // not reached
}

std::optional<Status> parse_status(std::string_view word) {
  for (const auto& [v, w] : kStatusWords)
    if (w == word) return v;
  return std::nullopt;
}

std::optional<FailureKind> parse_failure_kind(std::string_view word) {
  for (const auto& [v, w] : kFailureWords)
    if (w == word) return v;
  return std::nullopt;
}

std::string_view to_string(const Outcome& o) {
  if (o.status == Status::Failed || o.status == Status::Error) return to_string(kind_of_check(o.kind));
  return to_string(o.status);
}

std::optional<Outcome> parse_outcome(std::string_view word) {
  if (const auto s = parse_status(word); s && *s != Status::Failed) return Outcome(*s);
  const auto k = parse_failure_kind(word);
  if (!k || *k == FailureKind::None || kind_of_check(*k) != *k) return std::nullopt;  // "" and check names
  return Outcome(*k);
}

}  // namespace cudal2
