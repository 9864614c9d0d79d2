// Statuses and failure kinds (protocol/outcome.hpp) and the judge protocol (protocol/protocol.hpp): every
// enum value's word round-trips and is today's word (stores, CSVs and docs depend on them), every
// message round-trips through its JSON form, and malformed messages are rejected with a clear
// error. CPU only; the last test talks to `cudal2 judge` itself (no GPU needed for refusals).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "protocol/outcome.hpp"
#include "protocol/protocol.hpp"
#include "run_command.hpp"

namespace cudal2 {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- status words

TEST(StatusWords, EveryStatusIsTodaysWordAndRoundTrips) {
  const std::vector<std::string> words{"ok",      "unsupported",  "failed", "error", "not-capturable",
                                       "not-run", "gpu-disturbed"};
  ASSERT_EQ(std::size(kStatuses), words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(to_string(kStatuses[i]), words[i]);
    EXPECT_EQ(parse_status(words[i]), kStatuses[i]) << words[i];
  }
  for (const char* bad : {"", "OK", "Ok", "fast", "not run", "ok "}) EXPECT_FALSE(parse_status(bad)) << bad;
}

TEST(StatusWords, EveryFailureKindIsTodaysWordAndRoundTrips) {
  const std::vector<std::string> words{"",
                                       "out-of-bounds write",
                                       "unwritten output",
                                       "NaN/Inf",
                                       "exact mismatch",
                                       "normal error",
                                       "wrong-result",
                                       "out-of-bounds",
                                       "input-modified",
                                       "implausible-time",
                                       "timing-mismatch",
                                       "inconsistent-time",
                                       "host-thread",
                                       "protocol-error",
                                       "illegal-address",
                                       "device-assert",
                                       "illegal-instruction",
                                       "cuda-fatal",
                                       "crash",
                                       "hang",
                                       "exited",
                                       "error",
                                       "compile-timeout",
                                       "compile-error"};
  ASSERT_EQ(std::size(kFailureKinds), words.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(to_string(kFailureKinds[i]), words[i]);
    EXPECT_EQ(parse_failure_kind(words[i]), kFailureKinds[i]) << words[i];
    EXPECT_TRUE(seen.insert(words[i]).second) << "two kinds share " << words[i];
  }
  for (const char* bad : {"ok", "nan/inf", "wrong result", "timeout", "Crash"}) EXPECT_FALSE(parse_failure_kind(bad));
}

TEST(StatusWords, ChecksAreStoredAsTheirKinds) {
  EXPECT_EQ(kind_of_check(FailureKind::OutOfBoundsWrite), FailureKind::OutOfBounds);
  for (auto c :
       {FailureKind::UnwrittenOutput, FailureKind::NanInf, FailureKind::ExactMismatch, FailureKind::NormalError})
    EXPECT_EQ(kind_of_check(c), FailureKind::WrongResult) << c;
  EXPECT_EQ(kind_of_check(FailureKind::None), FailureKind::Error);
  for (auto k : kFailureKinds) {
    if (k < FailureKind::WrongResult) continue;  // the checks and None, above
    EXPECT_EQ(kind_of_check(k), k) << k;
  }
  for (auto k : kFailureKinds)
    EXPECT_EQ(is_fatal_fault(k), k == FailureKind::IllegalAddress || k == FailureKind::DeviceAssert ||
                                     k == FailureKind::IllegalInstruction || k == FailureKind::CudaFatal)
        << k;
}

TEST(StatusWords, EveryStoredWordRoundTripsAsAnOutcome) {
  // What measurements.status holds: ok, unsupported, not-capturable, not-run and every failure kind.
  std::vector<Outcome> all{Status::Ok, Status::Unsupported, Status::NotCapturable, Status::NotRun};
  for (auto k : kFailureKinds)
    if (k != FailureKind::None && kind_of_check(k) == k) all.emplace_back(k);
  EXPECT_EQ(all.size(), 4u + 18u);
  std::set<std::string> words;
  for (const auto& o : all) {
    const std::string w(to_string(o));
    EXPECT_TRUE(words.insert(w).second) << w;
    const auto back = parse_outcome(w);
    ASSERT_TRUE(back) << w;
    EXPECT_EQ(*back, o) << w;
  }
  // Not stored words: "failed" (a bench status), check names, "".
  for (const char* bad : {"failed", "exact mismatch", "out-of-bounds write", "", "pending"})
    EXPECT_FALSE(parse_outcome(bad)) << bad;
}

TEST(StatusWords, OutcomesCompareAsTheirWords) {
  EXPECT_EQ(Outcome(), Status::NotRun);
  EXPECT_EQ(Outcome(Status::Error), FailureKind::Error);  // an error is a failure of kind error
  EXPECT_EQ(Outcome(Status::Failed), Status::Error);
  EXPECT_EQ(to_string(Outcome(Status::Error)), "error");
  const Outcome wrong = FailureKind::ExactMismatch;  // a check is stored as its kind
  EXPECT_EQ(wrong, FailureKind::WrongResult);
  EXPECT_EQ(wrong, FailureKind::NanInf);  // another check of the same kind
  EXPECT_EQ(to_string(wrong), "wrong-result");
  EXPECT_TRUE(wrong.failed());
  EXPECT_EQ(wrong, Status::Failed);
  EXPECT_NE(wrong, Status::Error);
  EXPECT_NE(wrong, Status::Ok);
  EXPECT_TRUE(Outcome(Status::Ok).ok());
  EXPECT_EQ(to_string(Outcome(FailureKind::None)), "error");  // a failure nobody named
}

// ---------------------------------------------------------------- judge protocol

protocol::EvalJob sample_job() {
  protocol::EvalJob j;
  j.candidates = {{"k-0123", "/tmp/a.so", "tiny tn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1", Layout::TN},
                  {"candidate-1", "/tmp/b.so", "", Layout::NN}};
  j.shapes = {{64, 64, 64}, {4096, 64, 1024}};
  j.modes = {Mode::Offline, Mode::Server};
  j.timers = {true, false, true};
  j.accum = Accum::F16;
  j.reps = 7;
  j.qps = 150.5;
  j.verify_budget = 1e6;
  j.baselines = {"cublas-nn", "cublaslt-autotune-tn"};
  j.csv = "/tmp/rows.csv";
  j.command = "tune --grid sample";
  j.runner = "/opt/cudal2";
  j.candidate_timeout = 33;
  j.confine = false;
  return j;
}

TEST(JudgeProtocol, EvalJobRoundTrips) {
  const auto job = sample_job();
  const json j = protocol::to_json(job);
  EXPECT_EQ(j["op"], "eval");
  EXPECT_EQ(j["timers"], json::parse(R"(["graph","host"])"));
  EXPECT_EQ(j["shapes"], json::parse("[[64,64,64],[4096,64,1024]]"));
  const auto back = std::get<protocol::EvalJob>(protocol::parse_judge_request(j));
  ASSERT_EQ(back.candidates.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.candidates[i].name, job.candidates[i].name);
    EXPECT_EQ(back.candidates[i].artifact, job.candidates[i].artifact);
    EXPECT_EQ(back.candidates[i].spec, job.candidates[i].spec);
    EXPECT_EQ(back.candidates[i].layout, job.candidates[i].layout);
  }
  EXPECT_EQ(back.shapes, job.shapes);
  EXPECT_EQ(back.modes, job.modes);
  EXPECT_EQ(back.timers, job.timers);
  EXPECT_EQ(back.accum, job.accum);
  EXPECT_EQ(back.reps, job.reps);
  EXPECT_DOUBLE_EQ(back.qps, job.qps);
  EXPECT_DOUBLE_EQ(back.verify_budget, job.verify_budget);
  EXPECT_EQ(back.baselines, job.baselines);
  EXPECT_EQ(back.csv, job.csv);
  EXPECT_EQ(back.command, job.command);
  EXPECT_EQ(back.runner, job.runner);
  EXPECT_EQ(back.candidate_timeout, job.candidate_timeout);
  EXPECT_EQ(back.confine, job.confine);
  EXPECT_EQ(protocol::to_json(back), j);
}

// The settings a tuner hands a job in one assignment arrive whole: every one of them on the wire
// and back, none reset to a default (a setting added to MeasureSettings but not to the wire fails
// here).
TEST(JudgeProtocol, MeasureSettingsTravelWholeThroughTheJob) {
  protocol::MeasureSettings m;
  m.modes = {Mode::Server};
  m.timers = {false, true, false, true};
  m.reps = 9;
  m.qps = 77.5;
  m.verify_budget = 5e5;
  m.interleave = false;
  ASSERT_FALSE(m == protocol::MeasureSettings{});
  protocol::EvalJob job;
  job.measure_settings() = m;
  job.shapes = {{64, 64, 64}};
  const auto back = std::get<protocol::EvalJob>(protocol::parse_judge_request(protocol::to_json(job)));
  EXPECT_TRUE(back.measure_settings() == m);
  EXPECT_EQ(back.modes, m.modes);  // the request's modes, not the default's plus them
}

TEST(JudgeProtocol, EvalJobOptionalFieldsTakeTheirDefaults) {
  protocol::EvalJob job;
  job.shapes = {{64, 64, 64}};
  job.modes = {Mode::Offline};
  const json j = protocol::to_json(job);
  EXPECT_FALSE(j.contains("csv"));  // optional fields are absent when unset, as the tuner always sent
  EXPECT_FALSE(j.contains("runner"));
  const json minimal = json::parse(R"({"op":"eval","candidates":[],"shapes":[[64,64,64]],"modes":["offline"],
                                       "baselines":[]})");
  const auto back = std::get<protocol::EvalJob>(protocol::parse_judge_request(minimal));
  EXPECT_EQ(back.timers, (cudal2::kDefaultTimers));
  EXPECT_EQ(back.accum, Accum::F32);
  EXPECT_EQ(back.reps, 20);
  EXPECT_DOUBLE_EQ(back.qps, 200);
  EXPECT_EQ(back.command, "judge");
  EXPECT_EQ(back.candidate_timeout, 60);
  EXPECT_TRUE(back.confine);
}

TEST(JudgeProtocol, LtSpaceJobAndAnswerRoundTrip) {
  const protocol::LtSpaceJob job{{{64, 64, 64}, {128, 256, 512}}, {Layout::NN, Layout::TN}, Accum::F16, 9};
  const json j = protocol::to_json(job);
  EXPECT_EQ(j["op"], "lt-space");
  const auto back = std::get<protocol::LtSpaceJob>(protocol::parse_judge_request(j));
  EXPECT_EQ(back.shapes, job.shapes);
  EXPECT_EQ(back.layouts, job.layouts);
  EXPECT_EQ(back.accum, job.accum);
  EXPECT_EQ(back.max, job.max);

  protocol::LtSpaceAnswer a;
  a.gpu = "NVIDIA H100";
  a.spaces = {{{64, 64, 64}, Layout::NN, {"cublaslt nn f32 algo=66", "cublaslt nn f32 algo=67"}},
              {{64, 64, 64}, Layout::TN, {}}};
  const json aj = protocol::to_json(a);
  EXPECT_FALSE(protocol::error_of(aj));
  const auto ab = protocol::parse_lt_space_answer(aj);
  EXPECT_EQ(ab.gpu, a.gpu);
  ASSERT_EQ(ab.spaces.size(), 2u);
  EXPECT_EQ(ab.spaces[0].shape, a.spaces[0].shape);
  EXPECT_EQ(ab.spaces[1].layout, Layout::TN);
  EXPECT_EQ(ab.spaces[0].specs, a.spaces[0].specs);
  EXPECT_EQ(protocol::to_json(ab), aj);
}

TEST(JudgeProtocol, CanaryJobAndAnswerRoundTrip) {
  protocol::CanaryJob job;
  job.seconds = 0.5, job.n = 256;
  const json j = protocol::to_json(job);
  EXPECT_EQ(j.at("op"), "canary");
  const auto back = std::get<protocol::CanaryJob>(protocol::parse_judge_request(j));
  EXPECT_DOUBLE_EQ(back.seconds, 0.5);
  EXPECT_EQ(back.n, 256);
  const auto defaults = std::get<protocol::CanaryJob>(protocol::parse_judge_request(json{{"op", "canary"}}));
  EXPECT_DOUBLE_EQ(defaults.seconds, 1.0);
  EXPECT_EQ(defaults.n, 512);
  for (const json& bad : {json{{"op", "canary"}, {"n", 100}}, json{{"op", "canary"}, {"seconds", 0}},
                          json{{"op", "canary"}, {"seconds", 600}}})
    EXPECT_THROW(protocol::parse_judge_request(bad), protocol::ProtocolError) << bad.dump();
  protocol::CanaryAnswer a;
  a.healthy = false, a.reason = "cudaErrorLaunchFailure", a.gpu = "g", a.launches = 7, a.median_us = 9.5;
  const auto got = protocol::parse_canary_answer(protocol::to_json(a));
  EXPECT_FALSE(got.healthy);
  EXPECT_EQ(got.reason, a.reason);
  EXPECT_EQ(got.launches, 7);
  EXPECT_DOUBLE_EQ(got.median_us, 9.5);
  EXPECT_THROW(protocol::parse_canary_answer(json{{"ok", false}, {"error", "unknown op"}}), protocol::ProtocolError);
}

TEST(JudgeProtocol, JobAnswersRoundTrip) {
  protocol::JobAnswer a;
  a.ok = true;
  a.gpu = "NVIDIA H100 80GB HBM3";
  protocol::ShapeAnswer s;
  s.shape = {96, 80, 40};
  Summary sum;
  sum.median = 2.5, sum.p10 = 2.4, sum.p90 = 2.75, sum.min = 2.25, sum.n = 30;
  protocol::MethodAnswer ok{"k-1", Status::Ok, FailureKind::None, "", 1.5e-4, {}};
  ok.timing[Mode::Offline][TimerKind::Graph] = sum;
  ok.timing[Mode::Server][TimerKind::Host] = sum;
  s.methods.push_back(ok);
  s.methods.push_back({"cublas-tn", Status::Unsupported, FailureKind::None, "refused", std::nullopt, {}});
  s.methods.push_back({"candidate-2", Status::Failed, FailureKind::ExactMismatch, "3 differ", 0.0, {}});
  s.methods.push_back({"candidate-3", Status::Failed, FailureKind::TimingMismatch, "clock", std::nullopt, {}});
  s.methods.push_back({"candidate-4", Status::Error, FailureKind::Error, "threw", std::nullopt, {}});
  a.shapes.push_back(s);
  const json j = protocol::to_json(a);
  EXPECT_EQ(j["shapes"][0]["methods"][1]["rel_err"], -1.0);  // not computed, as the judge always sent it
  EXPECT_EQ(j["shapes"][0]["methods"][2]["failure"], "exact mismatch");
  std::string why;
  const auto back = protocol::parse_job_answer(j, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_TRUE(back->ok);
  EXPECT_EQ(back->gpu, a.gpu);
  ASSERT_EQ(back->shapes.size(), 1u);
  EXPECT_EQ(back->shapes[0].shape, s.shape);
  ASSERT_EQ(back->shapes[0].methods.size(), s.methods.size());
  for (size_t i = 0; i < s.methods.size(); ++i) {
    const auto& x = back->shapes[0].methods[i];
    EXPECT_EQ(x.method, s.methods[i].method);
    EXPECT_EQ(x.status, s.methods[i].status);
    EXPECT_EQ(x.failure, s.methods[i].failure);
    EXPECT_EQ(x.reason, s.methods[i].reason);
    EXPECT_EQ(x.rel_err, s.methods[i].rel_err);
    EXPECT_EQ(x.timing.size(), s.methods[i].timing.size());
  }
  const auto& t = back->shapes[0].methods[0].timing.at(Mode::Server).at(TimerKind::Host);
  EXPECT_DOUBLE_EQ(t.median, 2.5);
  EXPECT_DOUBLE_EQ(t.p90, 2.75);
  EXPECT_EQ(t.n, 30u);
  EXPECT_EQ(protocol::to_json(*back), j);

  protocol::JobAnswer err;
  err.error = "no GPU";
  auto e = protocol::parse_job_answer(protocol::to_json(err), &why);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->ok);
  EXPECT_EQ(e->error, "no GPU");
  EXPECT_FALSE(e->fatal);

  protocol::JobAnswer fatal;
  fatal.error = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  fatal.fatal = true;
  fatal.kind = FailureKind::IllegalAddress;
  const json fj = protocol::to_json(fatal);
  EXPECT_EQ(fj["exit_after"], true);
  e = protocol::parse_job_answer(fj, &why);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->fatal);
  EXPECT_EQ(e->kind, FailureKind::IllegalAddress);
  EXPECT_EQ(e->error, fatal.error);
  EXPECT_EQ(protocol::to_json(*e), fj);
}

TEST(JudgeProtocol, FailureWordsTheTunerDoesNotKnowAreErrors) {
  json j = json::parse(R"({"ok":true,"gpu":"g","shapes":[{"m":1,"n":1,"k":1,"methods":[
    {"method":"k-1","status":"failed","failure":"a-new-check","reason":""},
    {"method":"k-2","status":"failed","failure":"compile-error","reason":""}]}]})");
  std::string why;
  const auto a = protocol::parse_job_answer(j, &why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->shapes[0].methods[0].failure, FailureKind::Error);
  EXPECT_EQ(a->shapes[0].methods[1].failure, FailureKind::Error);  // a bench never compiles
}

// Each malformed request: the words its error must contain.
struct BadRequest {
  const char* json;
  const char* says;
};

TEST(JudgeProtocol, MalformedRequestsAreRejectedWithWhereAndWhy) {
  const std::vector<BadRequest> bad{
      {R"([1,2])", "not an object"},
      {R"({"shapes":[]})", "no \"op\""},
      {R"({"op":7})", "no \"op\""},
      {R"({"op":"evaluate"})", "unknown op 'evaluate' (the judge serves eval, lt-space and canary)"},
      {R"({"op":"eval","shapes":[[64,64,64]],"modes":["offline"],"baselines":[]})",
       "malformed eval request: candidates is missing"},
      {R"({"op":"eval","candidates":[],"shapes":[[64,64]],"modes":["offline"],"baselines":[]})",
       "shapes[0] is not [m, n, k]"},
      {R"({"op":"eval","candidates":[],"shapes":[[64,0,64]],"modes":["offline"],"baselines":[]})",
       "shapes[0][1] is not a positive integer"},
      {R"({"op":"eval","candidates":[],"shapes":[],"modes":["warp"],"baselines":[]})", "unknown mode 'warp'"},
      {R"({"op":"eval","candidates":[],"shapes":[],"modes":[],"timers":["sundial"],"baselines":[]})",
       "timers[0]: unknown timer 'sundial'"},
      {R"({"op":"eval","candidates":[{"artifact":"a.so"}],"shapes":[],"modes":[],"baselines":[]})",
       "candidates[0].name is missing"},
      {R"({"op":"eval","candidates":[],"shapes":[],"modes":[],"baselines":[],"reps":"20"})",
       "reps is a string, not an integer"},
      {R"({"op":"eval","candidates":[],"shapes":[],"modes":[],"baselines":[],"accum":"bf16"})",
       "unknown accumulator 'bf16'"},
      {R"({"op":"lt-space","shapes":[[64,64,64]],"layouts":["nt"]})",
       "malformed lt-space request: layouts[0]: unknown layout 'nt'"},
      {R"({"op":"lt-space","shapes":[[64,64,64]]})", "layouts is missing"},
  };
  for (const auto& b : bad) {
    try {
      protocol::parse_judge_request(json::parse(b.json));
      ADD_FAILURE() << "accepted: " << b.json;
    } catch (const protocol::ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << b.json << " -> " << e.what();
    }
  }
}

TEST(JudgeProtocol, MalformedLtSpaceAnswersAreRejected) {
  for (const char* bad : {R"({"ok":true})", R"({"ok":true,"spaces":[{"shape":[64],"layout":"nn","specs":[]}]})",
                          R"({"ok":true,"spaces":[{"shape":[64,64,64],"layout":"nn","specs":[3]}]})"})
    EXPECT_THROW(protocol::parse_lt_space_answer(json::parse(bad)), protocol::ProtocolError) << bad;
}

TEST(JudgeProtocol, ErrorEnvelopes) {
  EXPECT_FALSE(protocol::error_of(json::parse(R"({"ok":true})")));
  auto e = protocol::error_of(json::parse(R"({"ok":false,"error":"no GPU"})"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, "no GPU");
  EXPECT_FALSE(e->fatal);
  e = protocol::error_of(json::parse(R"({"ok":false,"error":7})"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, "");
  // A fault cannot be turned into success or anything milder by what the process says.
  e = protocol::error_of(json::parse(R"({"ok":true,"fatal":true,"kind":"device-assert"})"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, FailureKind::DeviceAssert);
  e = protocol::error_of(json::parse(R"({"ok":false,"fatal":true,"kind":"unsupported"})"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, FailureKind::CudaFatal);
  for (const char* bad : {R"([])", R"({})", R"({"ok":"yes"})"})
    EXPECT_THROW(protocol::error_of(json::parse(bad)), protocol::ProtocolError) << bad;
  EXPECT_EQ(protocol::to_json(protocol::ErrorAnswer{"x"}), json::parse(R"({"ok":false,"error":"x"})"));
}

// ---------------------------------------------------------------- runner protocol

TEST(RunnerProtocol, EveryRequestRoundTrips) {
  const protocol::IpcBuffer buf{"00ff10ab", 4096, 8192};
  const std::vector<protocol::RunnerRequest> all{
      protocol::InitRequest{buf, true},
      protocol::CalibrateRequest{2000, 64},
      protocol::LoadRequest{"/tmp/a.so", "", Layout::TN, Accum::F16},
      protocol::QueryRequest{{96, 80, 40}},
      protocol::BindRequest{{96, 80, 40}, buf, {"aa", 0, 2}, {"bb", 1, 3}, protocol::IpcBuffer{"cc", 5, 7}},
      protocol::BindRequest{{96, 80, 40}, buf, buf, buf, std::nullopt},
      protocol::UnbindRequest{},
      protocol::RunRequest{},
      protocol::TimerRequest{Mode::Server, 1000, 64},
      protocol::SampleRequest{false, TimerKind::Eager},
      protocol::SampleRequest{true, TimerKind::Graph},
      protocol::TimerRequest{Mode::Offline, 1000, 64, protocol::InterludeBuffers{{"dd", 256, 8}, buf, true}},
      protocol::TimerRequest{Mode::Offline, 1000, 64, protocol::InterludeBuffers{{"dd", 256, 8}, std::nullopt, false}},
      protocol::SampleRequest{false, TimerKind::Chain},
  };
  std::set<std::string> ops;
  for (const auto& r : all) {
    const json j = protocol::to_json(r);
    EXPECT_EQ(j["op"], std::string(protocol::op_of(r)));
    ops.insert(std::string(protocol::op_of(r)));
    const auto back = protocol::parse_runner_request(j);
    EXPECT_EQ(back.index(), r.index()) << j;
    EXPECT_EQ(protocol::to_json(back), j);  // every field survives (the JSON form has them all)
  }
  EXPECT_EQ(ops.size(), std::variant_size_v<protocol::RunnerRequest>);
  EXPECT_EQ(protocol::to_json(all[1])["ns"], 2000u);
  EXPECT_EQ(protocol::to_json(all[5])["W"], nullptr);
  EXPECT_EQ(protocol::to_json(all[10])["timer"], "single");
  const auto bind = std::get<protocol::BindRequest>(protocol::parse_runner_request(protocol::to_json(all[4])));
  ASSERT_TRUE(bind.W);
  EXPECT_EQ(bind.W->handle, "cc");
  EXPECT_EQ(bind.W->offset, 5u);
  EXPECT_EQ(bind.W->bytes, 7u);
  EXPECT_EQ(bind.C.handle, "bb");
}

TEST(RunnerProtocol, ChainedTimersCarryTheJudgesBuffers) {
  const protocol::IpcBuffer seed{"5eed", 256, 8}, slots{"510c", 1 << 20, 4096};
  const json j = protocol::to_json(protocol::RunnerRequest{
      protocol::TimerRequest{Mode::Offline, 1000, 32, protocol::InterludeBuffers{seed, slots, true}}});
  EXPECT_EQ(j["interlude"]["seed"]["handle"], "5eed");
  EXPECT_EQ(j["interlude"]["slots"]["offset"], 1u << 20);
  EXPECT_EQ(j["interlude"]["interleave"], true);
  const auto back = std::get<protocol::TimerRequest>(protocol::parse_runner_request(j));
  ASSERT_TRUE(back.interlude);
  EXPECT_EQ(back.interlude->seed.handle, "5eed");
  ASSERT_TRUE(back.interlude->slots);
  EXPECT_EQ(back.interlude->slots->bytes, 4096u);
  EXPECT_TRUE(back.interlude->interleave);
  // A timer request without an interlude (the judge has no chains) has none; "chain" samples parse.
  const auto plain = std::get<protocol::TimerRequest>(
      protocol::parse_runner_request(json::parse(R"({"op":"timer","mode":"offline","target_us":200,"max_inner":8})")));
  EXPECT_FALSE(plain.interlude);
  const auto chain = std::get<protocol::SampleRequest>(
      protocol::parse_runner_request(json::parse(R"({"op":"sample","timer":"chain"})")));
  EXPECT_EQ(chain.timer, TimerKind::Chain);
  EXPECT_FALSE(chain.single);
  for (
      const auto& [bad, says] : std::vector<std::pair<const char*, const char*>>{
          {R"({"op":"timer","mode":"offline","target_us":1,"max_inner":4,"interlude":5})",
           "timer.interlude is not an object"},
          {R"({"op":"timer","mode":"offline","target_us":1,"max_inner":4,"interlude":{}})",
           "timer.interlude.seed is missing"},
          {R"({"op":"timer","mode":"offline","target_us":1,"max_inner":4,"interlude":{"seed":{"handle":"a","offset":0,"bytes":8},"slots":3}})",
           "timer.interlude.slots is not an object"},
          {R"({"op":"timer","mode":"offline","target_us":1,"max_inner":4,"interlude":{"seed":{"handle":"a","offset":0,"bytes":8},"interleave":"yes"}})",
           "interleave"}}) {
    try {
      protocol::parse_runner_request(json::parse(bad));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const protocol::ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << bad << " -> " << e.what();
    }
  }
}

TEST(JudgeProtocol, EvalJobsCarryInterleaveAndTheChainTimer) {
  protocol::EvalJob job;
  job.shapes = {{64, 64, 64}};
  job.modes = {Mode::Offline};
  job.timers = {true, false, false, true};
  job.interleave = false;
  const json j = protocol::to_json(job);
  EXPECT_EQ(j["timers"], json::parse(R"(["graph","chain"])"));
  EXPECT_EQ(j["interleave"], false);
  const auto back = std::get<protocol::EvalJob>(protocol::parse_judge_request(j));
  EXPECT_EQ(back.timers, job.timers);
  EXPECT_FALSE(back.interleave);
  // Absent: chained (the safe protocol), and the default timers leave chain out.
  const auto minimal = std::get<protocol::EvalJob>(protocol::parse_judge_request(
      json::parse(R"({"op":"eval","candidates":[],"shapes":[[64,64,64]],"modes":["offline"],"baselines":[]})")));
  EXPECT_TRUE(minimal.interleave);
  EXPECT_FALSE(minimal.timers[static_cast<int>(TimerKind::Chain)]);
  // An answer's chain timings survive the tuner's parser.
  protocol::JobAnswer a;
  a.ok = true, a.gpu = "H100";
  protocol::MethodAnswer m;
  m.method = "k-0123456789abcdef";
  m.timing[Mode::Offline][TimerKind::Chain] = Summary{10, 3.5, 3.4, 3.6, 3.3, 3.7, 3.5};
  a.shapes.push_back({{64, 64, 64}, {m}});
  std::string why;
  const auto parsed = protocol::parse_job_answer(protocol::to_json(a), &why);
  ASSERT_TRUE(parsed) << why;
  EXPECT_DOUBLE_EQ(parsed->shapes[0].methods[0].timing.at(Mode::Offline).at(TimerKind::Chain).median, 3.5);
}

TEST(RunnerProtocol, EveryAnswerRoundTrips) {
  EXPECT_EQ(protocol::parse_init_answer(protocol::to_json(protocol::InitAnswer{4242})).pid, 4242);
  const auto t = protocol::parse_time_answer(protocol::to_json(protocol::TimeAnswer{12.5, 64}), "sample");
  EXPECT_DOUBLE_EQ(t.us, 12.5);
  EXPECT_EQ(t.calls, 64);
  const auto q = protocol::parse_query_answer(protocol::to_json(protocol::QueryAnswer{"too small", 1u << 20}));
  EXPECT_EQ(q.refusal, "too small");
  EXPECT_EQ(q.workspace, 1u << 20);
  const auto tm = protocol::parse_timer_answer(protocol::to_json(protocol::TimerAnswer{8, "capture failed"}));
  EXPECT_EQ(tm.inner, 8);
  EXPECT_EQ(tm.graph_error, "capture failed");
  EXPECT_EQ(protocol::ok_answer(), json::parse(R"({"ok":true})"));
}

TEST(RunnerProtocol, MalformedRequestsAndAnswersAreRejected) {
  for (const auto& [bad, says] : std::vector<std::pair<const char*, const char*>>{
           {R"({"op":"fly"})", "unknown op 'fly'"},
           {R"({"m":1})", "op is missing"},
           {R"({"op":"bind","m":1,"n":1,"k":1,"B":{"handle":"a","offset":0,"bytes":1}})", "bind.A is missing"},
           {R"({"op":"sample","timer":"sundial"})", "sample.timer 'sundial'"},
           {R"({"op":"calibrate","ns":2000,"calls":0})", "calibrate.calls is not a positive integer"},
           {R"({"op":"query","m":64,"n":64})", "query.k is missing"},
           {R"({"op":"timer","mode":"offline","target_us":"x","max_inner":4})", "timer.target_us is a string"}}) {
    try {
      protocol::parse_runner_request(json::parse(bad));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const protocol::ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << bad << " -> " << e.what();
    }
  }
  auto rejects = [](auto parse, const char* answer, const char* says) {
    try {
      parse(json::parse(answer));
      ADD_FAILURE() << "accepted: " << answer;
    } catch (const protocol::ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << answer << " -> " << e.what();
    }
  };
  auto sample = [](const json& j) { return protocol::parse_time_answer(j, "sample"); };
  rejects(protocol::parse_query_answer, R"({"ok":true,"refusal":""})", "malformed answer to query: workspace");
  rejects(protocol::parse_query_answer, R"({"ok":true,"refusal":"","workspace":-1})", "workspace");
  rejects(sample, R"({"ok":true,"us":-1,"calls":1})", "malformed answer to sample: us = -1");
  rejects(sample, R"({"ok":true,"us":"1","calls":1})", "us is a string");
  rejects(sample, R"({"ok":true,"us":1,"calls":0})", "calls");
  rejects(protocol::parse_timer_answer, R"({"ok":true,"inner":0,"graph_error":""})", "inner");
  rejects(protocol::parse_timer_answer, R"({"ok":true,"inner":4})", "graph_error is missing");
  rejects(protocol::parse_init_answer, R"({"ok":true})", "pid is missing");
  rejects(protocol::parse_init_answer, R"({"ok":false,"pid":1})", "not ok");
}

// ---------------------------------------------------------------- `cudal2 judge` itself

TEST(JudgeProtocol, TheJudgeAnswersMalformedRequestsAndGoesOn) {
  // By the one name the tuner spawns it by (the old `worker` alias is gone: test_cli.cpp).
  for (const char* name : {"judge"}) {
    SCOPED_TRACE(name);
    // Three lines: an unknown op, a malformed eval job, not JSON; three refusals, one per line.
    const std::string cmd = std::string(
                                "printf '%s\\n' '{\"op\":\"evaluate\"}' '{\"op\":\"eval\",\"shapes\":[]}' "
                                "'not json' | ") +
                            CUDAL2_CLI + " " + name + " 2>/dev/null";
    const auto r = test_util::run_command(cmd);
    EXPECT_EQ(r.code, 0) << r.output;
    std::vector<json> answers;
    size_t at = 0;
    for (size_t nl; (nl = r.output.find('\n', at)) != std::string::npos; at = nl + 1)
      answers.push_back(json::parse(r.output.substr(at, nl - at)));
    ASSERT_EQ(answers.size(), 3u) << r.output;
    for (const auto& a : answers) EXPECT_EQ(a["ok"], false) << a;
    EXPECT_NE(answers[0]["error"].get<std::string>().find("unknown op 'evaluate'"), std::string::npos) << answers[0];
    EXPECT_NE(answers[1]["error"].get<std::string>().find("malformed eval request: candidates is missing"),
              std::string::npos)
        << answers[1];
    EXPECT_NE(answers[2]["error"].get<std::string>().find("not JSON"), std::string::npos) << answers[2];
  }
}

}  // namespace
}  // namespace cudal2
