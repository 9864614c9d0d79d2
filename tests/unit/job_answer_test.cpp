// The tuner survives any answer from its evaluation judge: each malformed answer is recognised
// by the typed parser (here), and a whole tuning call over a fake judge that gives it records a
// protocol-error and goes on (below). CPU only: the fake judge is a shell script.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "codegen/family.hpp"
#include "codegen/family_cublaslt.hpp"
#include "protocol/protocol.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/record.hpp"

namespace cudal2 {
namespace {

using nlohmann::json;
using protocol::parse_job_answer;

json good_answer() {
  return json::parse(R"({"ok":true,"gpu":"NVIDIA H100","shapes":[{"m":64,"n":64,"k":64,"methods":[
    {"method":"k-1","status":"ok","failure":"","reason":"","rel_err":0.0002,
     "timing":{"offline":{"graph":{"median":2.5,"p10":2.4,"p90":2.6,"min":2.3,"n":20}}}},
    {"method":"cublas-nn","status":"ok","failure":"","reason":"","rel_err":null,"timing":{}}]}]})");
}

TEST(JobAnswer, AGoodAnswerParses) {
  std::string why;
  const auto a = parse_job_answer(good_answer(), &why);
  ASSERT_TRUE(a) << why;
  EXPECT_TRUE(a->ok);
  ASSERT_EQ(a->shapes.size(), 1u);
  EXPECT_EQ(a->shapes[0].shape.k, 64);
  ASSERT_EQ(a->shapes[0].methods.size(), 2u);
  EXPECT_DOUBLE_EQ(a->shapes[0].methods[0].timing.at(Mode::Offline).at(TimerKind::Graph).median, 2.5);
  EXPECT_FALSE(a->shapes[0].methods[1].rel_err.has_value());  // null: unknown, not an error
}

TEST(JobAnswer, AMethodTheJudgeSawDisturbedParsesAsGpuDisturbed) {
  json j = good_answer();
  j["shapes"][0]["methods"][0]["status"] = "gpu-disturbed";
  j["shapes"][0]["methods"][0]["reason"] = "the GPU was disturbed while it was measured: pid 7";
  std::string why;
  const auto a = parse_job_answer(j, &why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->shapes[0].methods[0].status, Status::GpuDisturbed);
  // Statuses a bench never reports stay malformed.
  j["shapes"][0]["methods"][0]["status"] = "not-run";
  EXPECT_FALSE(parse_job_answer(j, &why));
}

TEST(JobAnswer, FatalAnswersKeepOnlyKnownKinds) {
  std::string why;
  auto a = parse_job_answer(json{{"ok", false}, {"fatal", true}, {"kind", "illegal-address"}}, &why);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, FailureKind::IllegalAddress);
  a = parse_job_answer(json{{"ok", false}, {"fatal", true}, {"kind", "ok"}}, &why);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, FailureKind::CudaFatal);  // a judge cannot turn a fault into success by naming it
  a = parse_job_answer(json{{"ok", false}, {"error", 7}}, &why);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->error, "job failed");
}

// Each case breaks one thing in a good answer.
struct Broken {
  const char* name;
  std::function<void(json&)> edit;
};

const std::vector<Broken>& broken_answers() {
  static const std::vector<Broken> b{
      {"not-an-object",
       [](json& j) {
         j = json::array({1, 2});
       }},
      {"null", [](json& j) { j = nullptr; }},
      {"ok-missing", [](json& j) { j.erase("ok"); }},
      {"ok-not-boolean", [](json& j) { j["ok"] = "yes"; }},
      {"gpu-missing", [](json& j) { j.erase("gpu"); }},
      {"gpu-number", [](json& j) { j["gpu"] = 3; }},
      {"shapes-not-array", [](json& j) { j["shapes"] = json::object(); }},
      {"shape-m-zero", [](json& j) { j["shapes"][0]["m"] = 0; }},
      {"shape-n-string", [](json& j) { j["shapes"][0]["n"] = "64"; }},
      {"shape-k-null", [](json& j) { j["shapes"][0]["k"] = nullptr; }},
      {"methods-missing", [](json& j) { j["shapes"][0].erase("methods"); }},
      {"method-name-missing", [](json& j) { j["shapes"][0]["methods"][0].erase("method"); }},
      {"status-unknown", [](json& j) { j["shapes"][0]["methods"][0]["status"] = "fast"; }},
      {"status-number", [](json& j) { j["shapes"][0]["methods"][0]["status"] = 1; }},
      {"timing-not-object", [](json& j) { j["shapes"][0]["methods"][0]["timing"] = 5; }},
      {"timing-unknown-mode", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["warp"] = json::object(); }},
      {"timing-unknown-timer",
       [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["sundial"] = json::object(); }},
      {"median-null", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["median"] = nullptr; }},
      {"median-string", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["median"] = "0.5"; }},
      {"median-negative", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["median"] = -1; }},
      {"median-zero", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["median"] = 0; }},
      {"p90-missing", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"].erase("p90"); }},
      {"n-zero", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["n"] = 0; }},
      {"n-float", [](json& j) { j["shapes"][0]["methods"][0]["timing"]["offline"]["graph"]["n"] = 2.5; }},
  };
  return b;
}

TEST(JobAnswer, EveryMalformedAnswerIsRejectedWithItsPath) {
  for (const auto& b : broken_answers()) {
    json j = good_answer();
    b.edit(j);
    std::string why;
    EXPECT_FALSE(parse_job_answer(j, &why)) << b.name;
    EXPECT_NE(why.find("malformed judge answer"), std::string::npos) << b.name << ": " << why;
  }
}

// The whole tuning call over a judge that answers each malformed line (or garbage, or nothing):
// the candidate is recorded as protocol-error/exited and the call returns normally.
class FakeJudge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_fake_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string script(const std::string& name, const std::string& body) {
    const auto p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\nread line\n" << body << "\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  }
  // timeout_s (per candidate, and again for the job's overhead): ample for a judge that answers;
  // one that is meant to hang is waited out for all of it, so that case asks for less.
  CandidateOutcome run(const std::string& judge, int timeout_s = 5) {
    EvalRequest req;
    // The free-form control candidate: compiled by the JIT (nvcc is on CI), never run here.
    req.free_sources = {R"(#include "cudal2_kernel_abi.h"
extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "never run"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args*, void*, char*, size_t) { return 0; }
)"};
    req.shapes = {{64, 64, 64}};
    req.judge_exe = judge;
    req.timeout_s = timeout_s;
    req.job_overhead_s = timeout_s;
    req.progress = false;
    const auto out = tuner::evaluate_and_record(req, (dir_ / "t.db").string());
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? CandidateOutcome{} : out[0];
  }
  std::filesystem::path dir_;
};

TEST_F(FakeJudge, MalformedAnswersAreRecordedNotThrown) {
  int i = 0;
  for (const auto& b : broken_answers()) {
    json j = good_answer();
    b.edit(j);
    std::string line = j.dump();
    std::string quoted;
    for (char c : line) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    const auto out = run(script("w" + std::to_string(i++) + ".sh", "printf '%s\\n' '" + quoted + "'"));
    EXPECT_EQ(out.status, FailureKind::ProtocolError) << b.name << ": " << out.detail;
  }
}

TEST_F(FakeJudge, GarbageSilenceAndDeathAreRecorded) {
  EXPECT_EQ(run(script("garbage.sh", "echo 'ok, 0.5 us'")).status, FailureKind::ProtocolError);
  EXPECT_EQ(run(script("silent.sh", "sleep 60"), 1).status, FailureKind::Hang);
  EXPECT_EQ(run(script("dies.sh", "exit 3")).status, FailureKind::Exited);
  EXPECT_EQ(run(script("killed.sh", "kill -SEGV $$")).status, FailureKind::Crash);
  // A well-formed answer that does not mention the candidate cannot make it pass.
  EXPECT_EQ(run(script("other.sh", "echo '{\"ok\":true,\"gpu\":\"g\",\"shapes\":[]}'")).status,
            FailureKind::ProtocolError);
}

}  // namespace
}  // namespace cudal2

TEST(JudgeProcess, OnlyGeneratedCublasLtSpecsRunInTheJudge) {
  // A cuBLASLt configuration generated from a spec runs beside the baselines, in the judge; any
  // other family, and every free-form source (no spec text, whatever it claims), in a runner.
  const std::string lt =
      "cublaslt nn f32 algo=66 tile=20 stages=8 reduction=0 swizzle=0 custom=0 inner=0 cluster=auto | splits=1";
  EXPECT_TRUE(cudal2::runs_in_judge(cudal2::parse_spec(lt), lt));
  cudal2::KernelSpec claimed = cudal2::parse_spec(lt);
  EXPECT_FALSE(cudal2::runs_in_judge(claimed, ""));
  const std::string wg = "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4";
  EXPECT_FALSE(cudal2::runs_in_judge(cudal2::parse_spec(wg), wg));
  const std::string tiny = "tiny tn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1";
  EXPECT_FALSE(cudal2::runs_in_judge(cudal2::parse_spec(tiny), tiny));
}

namespace cudal2 {
namespace {

TEST_F(FakeJudge, SpecsOfOneShapeAreMeasuredOnThatShapeAlone) {
  // run_tune gives cuBLASLt-neighbourhood specs the shapes whose space holds them: then each job
  // is one shape with the candidates measured on it (a judge that logs each job, then dies).
  const auto log = dir_ / "jobs.log";
  EvalRequest req;
  for (int algo : {66, 67}) {
    KernelSpec s = default_spec(kCublasLtFamily);
    s.lt_algo = algo;
    req.specs.push_back(s);
  }
  req.shapes = {{64, 64, 64}, {128, 64, 64}, {256, 64, 64}};
  req.spec_shapes = {{{64, 64, 64}, {128, 64, 64}}, {{128, 64, 64}, {256, 64, 64}}};
  req.judge_exe = script("logs.sh", "printf '%s\\n' \"$line\" >> '" + log.string() + "'; exit 3");
  req.timeout_s = 5, req.job_overhead_s = 5, req.progress = false;
  const auto out = tuner::evaluate_and_record(req, (dir_ / "t.db").string());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, FailureKind::Exited);
  EXPECT_EQ(out[1].status, FailureKind::Exited);
  std::ifstream in(log);
  std::vector<json> jobs;
  for (std::string line; std::getline(in, line);) jobs.push_back(json::parse(line));
  // 64: spec 0 alone; 128: both (the job dies, so each is retried alone); 256: spec 1 alone.
  ASSERT_EQ(jobs.size(), 5u);
  for (const auto& j : jobs) EXPECT_EQ(j["shapes"].size(), 1u) << j["shapes"];
  EXPECT_EQ(jobs[0]["shapes"], json::parse("[[64,64,64]]"));
  EXPECT_EQ(jobs[1]["candidates"].size(), 2u);
  EXPECT_EQ(jobs[4]["shapes"], json::parse("[[256,64,64]]"));
  EXPECT_EQ(jobs[4]["candidates"].size(), 1u);
  // cuBLASLt configurations are not compiled: the judge builds the call from the spec's fields.
  for (const auto& j : jobs)
    for (const auto& c : j["candidates"]) EXPECT_EQ(c["artifact"], "") << c;
  for (const auto& o : out) EXPECT_EQ(o.compile_seconds, 0.0);
  req.spec_shapes = {{}};  // one entry for two specs
  EXPECT_THROW(tuner::evaluate_and_record(req, (dir_ / "t.db").string()), InputError);
  req.spec_shapes = {{}, {{512, 64, 64}}};  // not a shape of the request
  EXPECT_THROW(tuner::evaluate_and_record(req, (dir_ / "t.db").string()), InputError);
}

// Every record evaluate_candidates hands its sink, kept in memory in the order it came.
class RecordingSink final : public EvalSink {
 public:
  void spec(const SpecRecord& s) override { specs.push_back(s), events.emplace_back("spec"); }
  void build(const BuildRecord& b) override { builds.push_back(b), events.emplace_back("build"); }
  void measurement(const MeasurementRecord& m) override {
    measurements.push_back(m), events.emplace_back("measurement");
  }
  std::vector<SpecRecord> specs;
  std::vector<BuildRecord> builds;
  std::vector<MeasurementRecord> measurements;
  std::vector<std::string> events;
};

TEST_F(FakeJudge, EvaluatesIntoASinkWithoutAStore) {
  // eval/ returns measurements through the caller's sink and opens no store: a candidate that
  // passes one shape and computes the wrong result on the other, and one that does not compile.
  EvalRequest req;
  req.free_sources = {R"(#include "cudal2_kernel_abi.h"
extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "scripted"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args*, void*, char*, size_t) { return 0; }
)",
                      "this is not CUDA\n"};
  req.shapes = {{64, 64, 64}, {128, 64, 64}};
  req.timers = {true, false, false};
  req.baselines = {"cublas-nn"};
  req.timeout_s = 5, req.job_overhead_s = 5, req.progress = false;
  req.score = [](const ScoreInput& in) -> std::optional<double> {
    return in.status == Status::Ok ? in.baseline_us / in.time_us : -1.0;
  };
  const std::string answer = R"({"ok":true,"gpu":"Scripted GPU","shapes":[
{"m":64,"n":64,"k":64,"methods":[
 {"method":"candidate-0","status":"ok","failure":"","reason":"","rel_err":0.0001,
  "timing":{"offline":{"graph":{"median":10.0,"p10":9.0,"p90":11.0,"min":8.5,"n":5}}}},
 {"method":"cublas-nn","status":"ok","failure":"","reason":"","rel_err":null,
  "timing":{"offline":{"graph":{"median":12.0,"p10":12.0,"p90":12.0,"min":12.0,"n":5}}}}]},
{"m":128,"n":64,"k":64,"methods":[
 {"method":"candidate-0","status":"failed","failure":"wrong-result","reason":"max rel err 0.5","rel_err":0.5,
  "timing":{}},
 {"method":"cublas-nn","status":"ok","failure":"","reason":"","rel_err":null,
  "timing":{"offline":{"graph":{"median":20.0,"p10":20.0,"p90":20.0,"min":20.0,"n":5}}}}]}]})";
  req.judge_exe = script("answers.sh", "printf '%s\\n' '" + json::parse(answer).dump() + "'");
  RecordingSink sink;
  const auto out = evaluate_candidates(req, sink);

  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, FailureKind::WrongResult) << out[0].detail;  // a failure wins over ok
  EXPECT_EQ(out[0].detail, "128x64x64: max rel err 0.5");
  EXPECT_DOUBLE_EQ(out[0].graph_us.at("64x64x64"), 10.0);
  EXPECT_FALSE(out[0].graph_us.count("128x64x64"));
  EXPECT_DOUBLE_EQ(out[0].baseline_us.at("128x64x64"), 20.0);
  EXPECT_DOUBLE_EQ(out[0].score.at("64x64x64"), 1.2);
  EXPECT_DOUBLE_EQ(out[0].score.at("128x64x64"), -1.0);
  EXPECT_EQ(out[1].status, FailureKind::CompileError);
  EXPECT_DOUBLE_EQ(out[1].score.at("64x64x64"), -1.0);

  // In the order they happened: both specs, both builds, the failed build's rows, then the job's.
  const std::vector<std::string> order{"spec",        "spec",        "build",       "build",       "measurement",
                                       "measurement", "measurement", "measurement", "measurement", "measurement"};
  EXPECT_EQ(sink.events, order);
  ASSERT_EQ(sink.specs.size(), 2u);
  EXPECT_EQ(sink.specs[0].hash, out[0].spec_hash);
  EXPECT_EQ(sink.specs[0].family, "source");
  EXPECT_EQ(sink.specs[0].text, req.free_sources[0]);  // a free-form candidate's text is its source
  EXPECT_EQ(sink.specs[1].hash, out[1].spec_hash);
  ASSERT_EQ(sink.builds.size(), 2u);
  EXPECT_EQ(sink.builds[0].spec_hash, out[0].spec_hash);
  EXPECT_EQ(sink.builds[0].status, "ok");
  EXPECT_FALSE(sink.builds[0].artifact_path.empty());
  EXPECT_EQ(sink.builds[1].spec_hash, out[1].spec_hash);
  EXPECT_EQ(sink.builds[1].status, "compile-error");
  EXPECT_TRUE(sink.builds[1].artifact_path.empty());
  EXPECT_FALSE(sink.builds[1].log.empty());

  ASSERT_EQ(sink.measurements.size(), 6u);
  // The candidate that did not compile: one failure row per shape, so a resumed run skips it.
  for (size_t i = 0; i < 2; ++i) {
    const auto& m = sink.measurements[i];
    EXPECT_EQ(m.spec_hash, out[1].spec_hash);
    EXPECT_EQ(m.m, req.shapes[i].m);
    EXPECT_EQ(m.mode, "offline");
    EXPECT_EQ(m.timer, "graph");
    EXPECT_EQ(m.status, "compile-error");
    EXPECT_FALSE(m.median_us);
    EXPECT_EQ(m.reward, -1.0);
  }
  // 64x64x64 passed: its graph row with the times and the job's baselines.
  const auto& ok = sink.measurements[2];
  EXPECT_EQ(ok.spec_hash, out[0].spec_hash);
  EXPECT_EQ(ok.gpu, "Scripted GPU");  // the judge's device, not this machine's
  EXPECT_EQ(ok.dtype, "f32");
  EXPECT_EQ(ok.layout, "nn");
  EXPECT_EQ(std::make_tuple(ok.m, ok.n, ok.k), std::make_tuple(std::int64_t{64}, std::int64_t{64}, std::int64_t{64}));
  EXPECT_EQ(ok.mode, "offline");
  EXPECT_EQ(ok.timer, "graph");
  EXPECT_EQ(ok.status, "ok");
  EXPECT_EQ(ok.median_us, 10.0);
  EXPECT_EQ(ok.p10_us, 9.0);
  EXPECT_EQ(ok.p90_us, 11.0);
  EXPECT_EQ(ok.min_us, 8.5);
  EXPECT_EQ(ok.rel_err, 0.0001);
  EXPECT_EQ(ok.reward, 1.2);
  EXPECT_EQ(json::parse(ok.baseline_json)["cublas-nn"]["offline"]["graph"]["median"], 12.0);
  // 128x64x64 computed the wrong result: one row per timer, none with a time.
  const std::vector<std::string> timers{"graph", "eager", "host"};
  for (size_t i = 0; i < 3; ++i) {
    const auto& m = sink.measurements[3 + i];
    EXPECT_EQ(m.spec_hash, out[0].spec_hash);
    EXPECT_EQ(m.m, 128);
    EXPECT_EQ(m.timer, timers[i]);
    EXPECT_EQ(m.status, "wrong-result");
    EXPECT_EQ(m.failure, "max rel err 0.5");
    EXPECT_FALSE(m.median_us);
    EXPECT_EQ(m.rel_err, 0.5);
    EXPECT_EQ(m.reward, -1.0);
  }
}

}  // namespace
}  // namespace cudal2
