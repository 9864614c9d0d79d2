// Fault attribution (tuner/attribution.hpp) driven by a scripted candidate and canary: which
// verdict stands, how often each is asked, and how long it waits.
#include "tuner/attribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cudal2::attribution {
namespace {

const Trial kOk{Outcome(Status::Ok), "ok"};
const Trial kFault{Outcome(FailureKind::IllegalAddress), "64x64x64: illegal-address: cudaErrorIllegalAddress"};
const Trial kLaunchFailure{Outcome(FailureKind::CudaFatal), "cuda-fatal: cudaErrorLaunchFailure"};
const Trial kWrong{Outcome(FailureKind::NanInf), "64x64x64: wrong-result: NaN in the output"};
const Trial kImplausible{Outcome(FailureKind::ImplausibleTime), "implausible-time: 0.001 us"};
const Trial kOutOfBounds{Outcome(FailureKind::OutOfBounds), "out-of-bounds: a guard band changed"};
const Trial kHang{Outcome(FailureKind::Hang), "hang"};
const Health kHealthy{true, ""};
const Health kDisturbed{false, "cudaErrorLaunchFailure"};

// The first run's verdict, then the re-runs' (the last one repeated) and the canary's answers
// (the last one repeated); records every call in order: "run", "canary", "wait 0.5".
struct Script {
  Script(std::vector<Trial> r, std::vector<Health> c) : reruns(std::move(r)), canaries(std::move(c)) {}
  std::vector<Trial> reruns;
  std::vector<Health> canaries;
  std::vector<std::string> calls;
  double waited = 0;
  size_t r = 0, c = 0;

  Attribution run(const Trial& first, Options o = {}) {
    return attribute(
        first,
        [&] {
          calls.push_back("run");
          return reruns.at(std::min(r++, reruns.size() - 1));
        },
        [&] {
          calls.push_back("canary");
          return canaries.at(std::min(c++, canaries.size() - 1));
        },
        [&](double s) {
          calls.push_back("wait " + std::to_string(s).substr(0, 3));
          waited += s;
        },
        o);
  }
};

TEST(Attribution, AnOkVerdictOrOneNoDisturbanceCausesStandsWithoutAsking) {
  for (const Trial& t : {kOk, kOutOfBounds, kHang, Trial{Outcome(Status::Unsupported), ""}}) {
    Script s{{kOk}, {kHealthy}};
    const auto a = s.run(t);
    EXPECT_EQ(a.cause, Cause::Candidate);
    EXPECT_EQ(a.outcome, t.outcome);
    EXPECT_EQ(a.trial, 0);
    EXPECT_TRUE(a.note.empty());
    EXPECT_TRUE(s.calls.empty()) << t.detail;
  }
}

TEST(Attribution, WhichVerdictsAreSuspect) {
  EXPECT_EQ(suspect(Outcome(FailureKind::IllegalAddress)), Suspect::Fault);
  EXPECT_EQ(suspect(Outcome(FailureKind::DeviceAssert)), Suspect::Fault);
  EXPECT_EQ(suspect(Outcome(FailureKind::IllegalInstruction)), Suspect::Fault);
  EXPECT_EQ(suspect(Outcome(FailureKind::CudaFatal)), Suspect::Fault);
  EXPECT_EQ(suspect(Outcome(FailureKind::WrongResult)), Suspect::Result);
  EXPECT_EQ(suspect(Outcome(FailureKind::UnwrittenOutput)), Suspect::Result);
  EXPECT_EQ(suspect(Outcome(FailureKind::ImplausibleTime)), Suspect::Result);
  EXPECT_EQ(suspect(Outcome(FailureKind::InconsistentTime)), Suspect::Result);
  EXPECT_EQ(suspect(Outcome(FailureKind::TimingMismatch)), Suspect::Result);
  for (auto k : {FailureKind::OutOfBounds, FailureKind::InputModified, FailureKind::HostThread, FailureKind::Hang,
                 FailureKind::Crash, FailureKind::Exited, FailureKind::ProtocolError, FailureKind::Error})
    EXPECT_EQ(suspect(Outcome(k)), Suspect::No) << k;
  EXPECT_EQ(suspect(Outcome(Status::Ok)), Suspect::No);
  EXPECT_EQ(suspect(Outcome(Status::GpuDisturbed)), Suspect::Seen);
}

// A run the judge saw disturbed while it ran (another process on the GPU) is direct evidence: it is
// measured again after the backoff without asking the canary, and never stands as the candidate's.
const Trial kSeen{Outcome(Status::GpuDisturbed), "64x64x64: gpu-disturbed: another process used the GPU: pid 7"};

TEST(Attribution, ARunSeenDisturbedIsMeasuredAgainAfterTheBackoffWithoutTheCanary) {
  Script s{{kOk}, {kDisturbed}};
  const auto a = s.run(kSeen);
  EXPECT_EQ(a.cause, Cause::Transient);
  EXPECT_EQ(a.outcome, Outcome(Status::Ok));
  EXPECT_EQ(a.trial, 1);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"wait 0.5", "run"}));
  EXPECT_EQ(a.canaries, 0);
}

TEST(Attribution, RunsSeenDisturbedUntilTheAttemptsRunOutAreGpuDisturbedNeverTheCandidates) {
  Script s{{kSeen}, {kHealthy}};
  const auto a = s.run(kSeen);
  EXPECT_EQ(a.cause, Cause::Disturbed);
  EXPECT_EQ(a.outcome, Outcome(Status::GpuDisturbed));
  EXPECT_EQ(a.runs, 5);
  EXPECT_EQ(a.canaries, 0);
  EXPECT_DOUBLE_EQ(s.waited, 0.5 + 1 + 2 + 4);
  EXPECT_NE(a.note.find("another process"), std::string::npos) << a.note;
}

TEST(Attribution, ASuspectVerdictAfterARunSeenDisturbedGoesThroughTheCanaryRules) {
  // Seen disturbed, then a wrong result with the canary healthy: the wrong result is the candidate's.
  Script s{{kWrong}, {kHealthy}};
  const auto a = s.run(kSeen);
  EXPECT_EQ(a.cause, Cause::Candidate);
  EXPECT_EQ(a.outcome, kWrong.outcome);
  EXPECT_EQ(a.runs, 2);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"wait 0.5", "run", "canary"}));
}

TEST(Attribution, FaultThenHealthyThenOkIsTransientAndTheRerunStands) {
  Script s{{kOk}, {kHealthy}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Transient);
  EXPECT_EQ(a.outcome, Status::Ok);
  EXPECT_EQ(a.trial, 1);
  EXPECT_EQ(a.first, kFault.detail);
  EXPECT_NE(a.note.find("transient"), std::string::npos) << a.note;
  EXPECT_NE(a.note.find("illegal-address"), std::string::npos) << a.note;
  EXPECT_EQ(s.calls, (std::vector<std::string>{"canary", "run"}));
}

TEST(Attribution, AFaultReproducedWithTheCanaryHealthyBeforeAndAfterIsTheCandidates) {
  Script s{{kFault}, {kHealthy}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Candidate);
  EXPECT_EQ(a.outcome, FailureKind::IllegalAddress);
  EXPECT_EQ(a.trial, 1);
  EXPECT_NE(a.note.find("reproduced"), std::string::npos) << a.note;
  EXPECT_EQ(s.calls, (std::vector<std::string>{"canary", "run", "canary"}));
  EXPECT_EQ(a.runs, 2);
  EXPECT_EQ(a.canaries, 2);
}

TEST(Attribution, AFaultOfAnotherKindOnTheRerunIsTheCandidatesUnderItsOwnKind) {
  Script s{{kLaunchFailure}, {kHealthy}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Candidate);
  EXPECT_EQ(a.outcome, FailureKind::CudaFatal);
}

TEST(Attribution, FaultWhileDisturbedIsRetriedAfterBackoffUntilOk) {
  Script s{{kFault, kFault, kOk}, {kDisturbed, kDisturbed, kDisturbed}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Transient);
  EXPECT_EQ(a.outcome, Status::Ok);
  EXPECT_EQ(a.trial, 3);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"canary", "wait 0.5", "run", "canary", "wait 1.0", "run", "canary",
                                               "wait 2.0", "run"}));
  EXPECT_DOUBLE_EQ(a.waited_s, 3.5);
}

// A fault after a disturbed canary, then a healthy canary: that run was not bracketed by health,
// so it is run once more; the next fault, healthy before and after, is the candidate's.
TEST(Attribution, AFaultIsOnlyTheCandidatesInARunBracketedByHealthyCanaries) {
  Script s{{kFault}, {kDisturbed, kHealthy}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Candidate);
  EXPECT_EQ(a.outcome, FailureKind::IllegalAddress);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"canary", "wait 0.5", "run", "canary", "run", "canary"}));
  EXPECT_EQ(a.trial, 2);
}

TEST(Attribution, DisturbedForeverEndsAsGpuDisturbedWithinTheAttempts) {
  Script s{{kFault}, {kDisturbed}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Disturbed);
  EXPECT_EQ(a.outcome, Status::GpuDisturbed);
  EXPECT_FALSE(a.outcome.failed());  // not a failure: nobody's fault
  EXPECT_EQ(a.runs, 5);
  EXPECT_EQ(a.canaries, 5);
  EXPECT_DOUBLE_EQ(a.waited_s, 0.5 + 1 + 2 + 4);
  EXPECT_NE(a.note.find("gpu disturbed"), std::string::npos) << a.note;
  EXPECT_NE(a.note.find("cudaErrorLaunchFailure"), std::string::npos) << a.note;
}

TEST(Attribution, AttemptsAndBackoffAreBounded) {
  Options o;
  o.max_attempts = 8, o.first_backoff_s = 1, o.max_backoff_s = 3;
  Script s{{kWrong}, {kDisturbed}};
  const auto a = s.run(kWrong, o);
  EXPECT_EQ(a.cause, Cause::Disturbed);
  EXPECT_EQ(a.runs, 8);
  EXPECT_EQ(std::count(s.calls.begin(), s.calls.end(), "run"), 7);
  EXPECT_DOUBLE_EQ(a.waited_s, 1 + 2 + 3 + 3 + 3 + 3 + 3);  // doubled, capped at 3
  Options one;
  one.max_attempts = 1;
  Script t{{kOk}, {kDisturbed}};
  EXPECT_EQ(t.run(kFault, one).cause, Cause::Disturbed);
  EXPECT_EQ(t.calls, (std::vector<std::string>{"canary"}));
  Script u{{kOk}, {kHealthy}};
  const auto b = u.run(kFault, one);  // no re-runs allowed: a healthy canary makes it the candidate's
  EXPECT_EQ(b.cause, Cause::Candidate);
  EXPECT_EQ(b.outcome, FailureKind::IllegalAddress);
}

// A fault seen in a disturbed window and never bracketed by health when the attempts run out is
// not the candidate's.
TEST(Attribution, AFaultNeverBracketedByHealthIsNotTheCandidatesWhenAttemptsRunOut) {
  Options o;
  o.max_attempts = 2;
  Script s{{kFault}, {kDisturbed, kHealthy}};
  const auto a = s.run(kFault, o);
  EXPECT_EQ(a.cause, Cause::Disturbed);
  EXPECT_EQ(a.outcome, Status::GpuDisturbed);
}

TEST(Attribution, AWrongResultWithAHealthyCanaryIsTheCandidatesWithoutARerun) {
  for (const Trial& t : {kWrong, kImplausible}) {
    Script s{{kOk}, {kHealthy}};
    const auto a = s.run(t);
    EXPECT_EQ(a.cause, Cause::Candidate);
    EXPECT_EQ(a.outcome, t.outcome);
    EXPECT_EQ(a.trial, 0);
    EXPECT_EQ(s.calls, (std::vector<std::string>{"canary"})) << t.detail;  // no second chance
    EXPECT_TRUE(a.note.empty()) << a.note;                                 // the verdict stands as it came
  }
}

TEST(Attribution, AWrongResultWhileDisturbedIsRetried) {
  Script s{{kOk}, {kDisturbed}};
  const auto a = s.run(kWrong);
  EXPECT_EQ(a.cause, Cause::Transient);
  EXPECT_EQ(a.outcome, Status::Ok);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"canary", "wait 0.5", "run"}));
  Script w{{kWrong}, {kDisturbed, kHealthy}};
  const auto b = w.run(kImplausible);  // retried; wrong again with the GPU healthy: the candidate's
  EXPECT_EQ(b.cause, Cause::Candidate);
  EXPECT_EQ(b.outcome, FailureKind::WrongResult);
  EXPECT_EQ(b.trial, 1);
}

TEST(Attribution, AFailureNoDisturbanceCausesOnARerunIsTheCandidates) {
  Script s{{kOutOfBounds}, {kHealthy}};
  const auto a = s.run(kFault);
  EXPECT_EQ(a.cause, Cause::Candidate);
  EXPECT_EQ(a.outcome, FailureKind::OutOfBounds);
  EXPECT_NE(a.note.find("first run"), std::string::npos);
}

}  // namespace
}  // namespace cudal2::attribution
