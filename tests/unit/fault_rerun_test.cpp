// Faults are attributed, not assumed (tuner/attribution.hpp, wired into evaluate_candidates): a
// candidate whose runner (or judge) faulted is evaluated again in a fresh job before anything is
// recorded; a fault that does not come back is transient and the re-run's measurement stands, one
// that comes back with the trusted canary healthy before and after it is the candidate's; a wrong
// result is re-run only when the canary says the GPU is disturbed; when it stays disturbed nothing
// is recorded (gpu-disturbed). CPU only: the judge is a script answering eval jobs from one list
// and canary requests from another, counting both.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tuner/evaluate.hpp"

namespace cudal2 {
namespace {

struct MemorySink : EvalSink {
  std::vector<MeasurementRecord> rows;
  void spec(const SpecRecord&) override {}
  void build(const BuildRecord&) override {}
  void measurement(const MeasurementRecord& m) override { rows.push_back(m); }
};

const char* kOk =
    R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"ok","failure":"","reason":"","rel_err":0.0002,"timing":{"offline":{"graph":{"median":2.5,"p10":2.4,"p90":2.6,"min":2.3,"n":20}}}}]}]})";
const char* kFaulted =
    R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"failed","failure":"illegal-address","reason":"cudaErrorIllegalAddress: an illegal memory access was encountered","rel_err":-1,"timing":{}}]}]})";
const char* kWrong =
    R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"failed","failure":"wrong-result","reason":"3 beyond tolerance","rel_err":-1,"timing":{}}]}]})";
// The judge saw another process on the GPU while it measured the candidate (judge/contention.hpp).
const char* kSeenDisturbed =
    R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"gpu-disturbed","failure":"timing-mismatch","reason":"the GPU was disturbed while it was measured: another process used the GPU: pid 7","rel_err":-1,"timing":{}}]}]})";
const char* kNoResult = R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[]}]})";
const char* kHealthy = R"({"ok":true,"healthy":true,"reason":"","gpu":"g","launches":100,"median_us":5,"max_us":6})";
const char* kDisturbed =
    R"({"ok":true,"healthy":false,"reason":"cudaErrorLaunchFailure","gpu":"g","launches":3,"median_us":5,"max_us":6})";
const char* kJudgeDied =
    R"({"ok":false,"fatal":true,"kind":"illegal-address","error":"cudaErrorIllegalAddress","exit_after":true})";

class FaultRerun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_rerun_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A judge answering the i-th eval job (over all its restarts) with answers[i] and the i-th canary
  // request with canaries[i] (the last of each after).
  std::string judge(const std::vector<std::string>& answers, const std::vector<std::string>& canaries = {kHealthy}) {
    std::string body = "#!/bin/sh\nwhile read line; do\n  case \"$line\" in\n";
    body += "  *'\"op\":\"canary\"'*)\n" + answer_from("canaries", canaries) + "  ;;\n";
    body += "  *)\n" + answer_from("jobs", answers) + "  ;;\n";
    body += "  esac\ndone\n";
    const auto p = dir_ / "judge.sh";
    std::ofstream(p) << body;
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  }
  std::string answer_from(const std::string& counter, const std::vector<std::string>& answers) {
    const auto count = dir_ / counter;
    std::filesystem::remove(count);
    std::string body = "    n=$(cat '" + count.string() + "' 2>/dev/null || echo 0)\n    echo $((n + 1)) > '" +
                       count.string() + "'\n    case $n in\n";
    for (size_t i = 0; i < answers.size(); ++i)
      body += "      " + (i + 1 == answers.size() ? std::string("*") : std::to_string(i)) + ") printf '%s\\n' '" +
              answers[i] + "' ;;\n";
    return body + "    esac\n";
  }
  int canaries() const {
    std::ifstream in(dir_ / "canaries");
    int n = 0;
    in >> n;
    return n;
  }
  int jobs() const {
    std::ifstream in(dir_ / "jobs");
    int n = 0;
    in >> n;
    return n;
  }
  CandidateOutcome run(const std::string& w, bool chained = false) {
    EvalRequest req;
    req.free_sources = {R"(#include "cudal2_kernel_abi.h"
extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "never run"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args*, void*, char*, size_t) { return 0; }
)"};
    req.shapes = {{64, 64, 64}};
    req.timers = {true, false, false, chained};  // graph, eager, host, chain
    req.baselines = {};
    req.judge_exe = w;
    req.timeout_s = 5;
    req.job_overhead_s = 5;
    req.progress = false;
    req.attribution.first_backoff_s = 0.01;
    req.attribution.max_backoff_s = 0.04;
    sink_.rows.clear();
    const auto out = evaluate_candidates(req, sink_);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? CandidateOutcome{} : out[0];
  }
  std::filesystem::path dir_;
  MemorySink sink_;
};

TEST_F(FaultRerun, AFaultThatDoesNotComeBackIsTransientAndTheRerunStands) {
  const auto out = run(judge({kFaulted, kOk}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  EXPECT_NE(out.transient_fault.find("illegal-address"), std::string::npos) << out.transient_fault;
  EXPECT_DOUBLE_EQ(out.graph_us.at("64x64x64"), 2.5);
  ASSERT_EQ(sink_.rows.size(), 1u);  // only the re-run's rows are recorded
  EXPECT_EQ(sink_.rows[0].status, "ok");
  EXPECT_NE(sink_.rows[0].failure.find("transient, not reproduced in a fresh runner"), std::string::npos)
      << sink_.rows[0].failure;
  EXPECT_EQ(canaries(), 1);
}

// Beside the faults: a job timed with the chain timer records the chain median on the graph row
// (the store keeps graph, eager and host rows only; `cudal2 export` ranks by both timers).
TEST_F(FaultRerun, AChainTimeGoesOnTheGraphRow) {
  const std::string chained =
      R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"ok","failure":"","reason":"","rel_err":0.0002,"timing":{"offline":{"graph":{"median":2.5,"p10":2.4,"p90":2.6,"min":2.3,"n":20},"chain":{"median":3.25,"p10":3.2,"p90":3.3,"min":3.1,"n":20}}}}]}]})";
  const auto out = run(judge({chained}), true);
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  ASSERT_EQ(sink_.rows.size(), 1u);  // no row of its own for the chain timer
  EXPECT_EQ(sink_.rows[0].timer, "graph");
  ASSERT_TRUE(sink_.rows[0].chain_us.has_value());
  EXPECT_DOUBLE_EQ(*sink_.rows[0].chain_us, 3.25);
  run(judge({kOk}));  // timed back to back only: none
  ASSERT_EQ(sink_.rows.size(), 1u);
  EXPECT_FALSE(sink_.rows[0].chain_us.has_value());
}

TEST_F(FaultRerun, AFaultThatComesBackIsTheCandidates) {
  const auto out = run(judge({kFaulted, kFaulted, kOk}));
  EXPECT_EQ(jobs(), 2);  // once more, not again and again
  EXPECT_EQ(out.status, FailureKind::IllegalAddress);
  EXPECT_TRUE(out.transient_fault.empty());
  EXPECT_NE(out.detail.find("reproduced in a fresh runner"), std::string::npos) << out.detail;
  ASSERT_FALSE(sink_.rows.empty());
  for (const auto& r : sink_.rows) {  // one per timer: only the re-run's
    EXPECT_EQ(r.status, "illegal-address");
    EXPECT_NE(r.failure.find("reproduced in a fresh runner"), std::string::npos) << r.failure;
  }
  EXPECT_EQ(sink_.rows.size(), 3u);
}

// Seen on the H100: a device assert poisons the fresh runner's context before it can answer, and
// the re-run's answer lists no result for the candidate; that is the fault coming back, recorded
// under its own kind, not as the judge's protocol error.
TEST_F(FaultRerun, ARerunWithNoResultIsTheFaultComingBack) {
  const auto out = run(judge({kFaulted, kNoResult}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(out.status, FailureKind::IllegalAddress) << out.detail;
  EXPECT_NE(out.detail.find("reproduced in a fresh runner"), std::string::npos) << out.detail;
  ASSERT_FALSE(sink_.rows.empty());
  for (const auto& r : sink_.rows) EXPECT_EQ(r.status, "illegal-address");
}

TEST_F(FaultRerun, AJudgeThatDiedOfAFaultIsRetriedToo) {
  const auto out = run(judge({kJudgeDied, kOk}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  EXPECT_FALSE(out.transient_fault.empty());
}

TEST_F(FaultRerun, AWrongResultWithTheGpuHealthyIsTheCandidatesWithoutARerun) {
  const auto out = run(judge({kWrong, kOk}));
  EXPECT_EQ(jobs(), 1);
  EXPECT_EQ(canaries(), 1);
  EXPECT_EQ(out.status, FailureKind::WrongResult);
  ASSERT_FALSE(sink_.rows.empty());
  for (const auto& r : sink_.rows) EXPECT_EQ(r.status, "wrong-result");
}

TEST_F(FaultRerun, AWrongResultWhileTheGpuIsDisturbedIsRerunAndTheOkRerunStands) {
  const auto out = run(judge({kWrong, kOk}, {kDisturbed, kHealthy}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(canaries(), 1);
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  EXPECT_NE(out.transient_fault.find("wrong-result"), std::string::npos) << out.transient_fault;
  ASSERT_EQ(sink_.rows.size(), 1u);
  EXPECT_EQ(sink_.rows[0].status, "ok");
}

TEST_F(FaultRerun, AFaultSeenOnlyWhileTheGpuIsDisturbedIsNotTheCandidatesAndNothingIsRecorded) {
  const auto out = run(judge({kFaulted}, {kDisturbed}));
  EXPECT_EQ(jobs(), 5);  // attempts bounded (Options::max_attempts)
  EXPECT_EQ(canaries(), 5);
  EXPECT_EQ(out.status, Status::GpuDisturbed) << out.detail;
  EXPECT_NE(out.detail.find("gpu disturbed"), std::string::npos) << out.detail;
  EXPECT_EQ(out.disturbed_shapes, std::vector<std::string>{"64x64x64"});
  EXPECT_TRUE(sink_.rows.empty());  // no row: measured again later
  EXPECT_TRUE(out.score.empty());
}

// A judge that does not serve the canary (a replaying or scripted one: no GPU to ask) gives no
// evidence of a disturbance: a fault is re-run once as before, a wrong result stands.
TEST_F(FaultRerun, AJudgeWithoutACanaryCountsAsHealthy) {
  const char* unknown = R"({"ok":false,"error":"unknown op"})";
  auto out = run(judge({kFaulted, kFaulted}, {unknown}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(out.status, FailureKind::IllegalAddress);
  out = run(judge({kWrong, kOk}, {kOk}));  // answers a canary request with an eval answer
  EXPECT_EQ(jobs(), 1);
  EXPECT_EQ(out.status, FailureKind::WrongResult);
}

// Contention seen by the judge: measured again without asking the canary, never recorded as the
// candidate's; a re-run measured clean stands.
TEST_F(FaultRerun, AMeasurementTheJudgeSawDisturbedIsRunAgainAndNeverCharged) {
  const auto out = run(judge({kSeenDisturbed, kOk}));
  EXPECT_EQ(jobs(), 2);
  EXPECT_EQ(canaries(), 0);
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  ASSERT_EQ(sink_.rows.size(), 1u);
  EXPECT_EQ(sink_.rows[0].status, "ok");
}

TEST_F(FaultRerun, AMeasurementDisturbedOnEveryRunIsGpuDisturbedWithNothingRecorded) {
  const auto out = run(judge({kSeenDisturbed}));
  EXPECT_EQ(jobs(), 5);
  EXPECT_EQ(canaries(), 0);
  EXPECT_EQ(out.status, Status::GpuDisturbed) << out.detail;
  EXPECT_NE(out.detail.find("pid 7"), std::string::npos) << out.detail;
  EXPECT_TRUE(sink_.rows.empty());
}

}  // namespace
}  // namespace cudal2
