// The LLM proposer without a GPU: the chat client against a scripted OpenAI-compatible server on
// 127.0.0.1 (retries, timeouts, caps), prompt rendering and code extraction, and LlmPolicy's loop
// (repair turns, failure feedback, storage of every turn, trajectories) with the evaluation step
// stubbed; compile errors come from the real JIT where nvcc is installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "export/export.hpp"
#include "jit/compiler.hpp"
#include "llm/client.hpp"
#include "llm/policy.hpp"
#include "llm/prompt.hpp"
#include "llm/records.hpp"
#include "llm_test_server.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "tuner/tune.hpp"

namespace fs = std::filesystem;
using namespace cudal2;
using namespace cudal2::llm;
using cudal2::testing::ScriptedServer;
using cudal2::testing::Step;

namespace {

using cudal2::testing::TempDir;

// A correct free-form kernel (NN, fp32 accumulate): one thread per output element.
const char* kGoodKernel = R"(#include <cuda_fp16.h>
#include "cudal2_kernel_abi.h"
__global__ void gemm(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= m || j >= n) return;
  float acc = 0.f;
  for (int64_t p = 0; p < k; ++p) acc += __half2float(A[i * k + p]) * __half2float(B[p * n + j]);
  C[i * n + j] = __float2half(acc);
}
extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "llm test kernel"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  dim3 block(16, 16), grid((a->n + 15) / 16, (a->m + 15) / 16);
  gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const __half*>(a->A),
      static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
)";

std::string variant(const std::string& tag) { return std::string(kGoodKernel) + "// " + tag + "\n"; }
// The same kernel with a compile error (an undeclared identifier).
std::string broken() {
  std::string s = kGoodKernel;
  s.replace(s.find("float acc = 0.f;"), 16, "float acc = zero_value;");
  return s;
}
std::string fenced(const std::string& src, const std::string& words = "Here is the kernel.") {
  return words + "\n\n```cuda\n" + src + "```\n";
}

ClientOptions client_options(const std::string& url) {
  ClientOptions o;
  o.url = url, o.model = "scripted", o.api_key = "sk-test";
  o.read_timeout_s = 5, o.connect_timeout_s = 2, o.retries = 2, o.backoff_s = 0.5;
  return o;
}

Problem problem() { return Problem{{256, 128, 64}, Layout::NN, Accum::F32}; }

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(LlmUrl, ParsesOriginAndPrefix) {
  auto p = parse_url("http://127.0.0.1:8000/v1");
  EXPECT_EQ(p.origin, "http://127.0.0.1:8000");
  EXPECT_EQ(p.prefix, "/v1");
  EXPECT_EQ(parse_url("http://localhost:8080/v1/chat/completions").prefix, "/v1");
  EXPECT_EQ(parse_url("http://localhost:11434/").prefix, "");
  EXPECT_THROW(parse_url("localhost:8000"), InputError);
  EXPECT_THROW(parse_url("ftp://x/v1"), InputError);
}

TEST(LlmExtract, PicksTheBlockThatDefinesTheEntryPoint) {
  const std::string reply = "First a helper:\n```cpp\nint helper();\n```\nNow the kernel:\n```cuda\n" +
                            std::string(kGoodKernel) + "```\nDone.";
  const auto x = extract_code(reply);
  EXPECT_EQ(x.error, "");
  EXPECT_EQ(x.source, kGoodKernel);
  EXPECT_EQ(extract_code("I cannot help with that.").error, "no-code");
  EXPECT_EQ(extract_code("```python\nprint(1)\n```").error, "no-entry-point");
  EXPECT_EQ(extract_code("```cuda\nextern \"C\" int cudal2_run(").error, "unterminated");
  // A family's kernel header exports the ABI through the shim's macro.
  const std::string shim = "#include \"mma_gemm.cuh\"\nCUDAL2_EXPORT_KERNEL_ABI(k, \"mma\")\n";
  EXPECT_EQ(extract_code("```cpp\nint helper();\n```\n```cuda\n" + shim + "```").source, shim);
  // CRLF line ends and an indented fence.
  EXPECT_EQ(extract_code("x\r\n  ```cu\r\nint cudal2_run();\r\n  ```\r\n").source, "int cudal2_run();\n");
}

TEST(LlmPrompt, TemplateSectionsAndTheRepoTemplate) {
  EXPECT_EQ(render_template("a{{x}}b{{#y}}[{{y}}]{{/y}}c{{#z}}gone{{/z}}", {{"x", "1"}, {"y", "2"}}), "a1b[2]c");
  PromptInputs in;
  in.problem = problem();
  in.previous_errors = "error: identifier \"zero_value\" is undefined";
  in.previous_source = broken();
  const auto text = render_template(read_text_file(default_template_path()), prompt_vars(in));
  EXPECT_NE(text.find("M=256 N=128 K=64"), std::string::npos);
  EXPECT_NE(text.find("cudal2_run"), std::string::npos);  // the ABI header
  EXPECT_NE(text.find("zero_value\" is undefined"), std::string::npos);
  EXPECT_EQ(text.find("{{"), std::string::npos);
  EXPECT_EQ(text.find("The best kernel so far"), std::string::npos);  // no reference given
}

TEST(LlmPrompt, RetrievesTheNearestShapesBestFromTheStore) {
  TempDir dir;
  const auto db = dir / "t.db";
  auto st = store::Store::open(db);
  const std::string src = variant("reference");
  const std::string h = free_spec_hash(src, Layout::NN, Accum::F32);
  st.put_spec({h, "source", src, ""});
  for (auto [m, us] : {std::pair<std::int64_t, double>{4096, 90.0}, {512, 9.0}}) {
    store::MeasurementRow r;
    r.spec_hash = h, r.gpu = "NVIDIA H100", r.dtype = "f32", r.layout = "nn", r.m = m, r.n = 128, r.k = 64;
    r.mode = "offline", r.timer = "graph", r.status = "ok", r.median_us = r.p10_us = r.p90_us = r.min_us = us;
    r.samples_us = {us};
    st.put_measurement(r);
  }
  Records rec(db);
  ProfileRow pr;
  pr.spec_hash = h, pr.gpu = "NVIDIA H100", pr.dtype = "f32", pr.layout = "nn", pr.m = 512, pr.n = 128, pr.k = 64;
  pr.metrics_json = R"({"tensor_pipe_pct": 12.5, "dram_pct": 40})";
  pr.stalls_json = R"([["long_scoreboard", 0.6], ["barrier", 0.2]])";
  rec.put_profile(pr);
  const auto ref = retrieve_reference(db, problem());
  ASSERT_TRUE(ref);
  EXPECT_FALSE(ref->same_shape);
  EXPECT_EQ(ref->shape.m, 512);  // 256 is nearer 512 than 4096
  EXPECT_EQ(ref->source, src);
  EXPECT_NE(ref->metrics.find("tensor_pipe_pct: 12.5"), std::string::npos) << ref->metrics;
  EXPECT_NE(ref->metrics.find("long_scoreboard 60.0%"), std::string::npos) << ref->metrics;
  EXPECT_FALSE(retrieve_reference(db, Problem{{256, 128, 64}, Layout::TN, Accum::F32}));
  EXPECT_FALSE(retrieve_reference(dir / "missing.db", problem()));
}

// ---------------------------------------------------------------------------------------------
TEST(LlmClient, GoodReplyCountsTokensAndSpend) {
  ScriptedServer srv({Step{200, fenced(kGoodKernel)}});
  auto o = client_options(srv.url());
  o.usd_per_mtok_prompt = 1, o.usd_per_mtok_completion = 2;
  ChatClient c(o);
  const auto r = c.complete({{"user", "hi"}});
  ASSERT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(extract_code(r.content).source, kGoodKernel);
  EXPECT_EQ(c.tokens_used(), 150);
  EXPECT_DOUBLE_EQ(c.usd_spent(), (100 * 1 + 50 * 2) / 1e6);
  const auto req = srv.requests().at(0);
  EXPECT_EQ(req["model"], "scripted");
  EXPECT_EQ(req["messages"][0]["content"], "hi");
  EXPECT_EQ(srv.auth().at(0), "Bearer sk-test");
}

TEST(LlmClient, RetriesAfter429And500WithBackoff) {
  ScriptedServer srv({Step{429, "", "", 0, "3"}, Step{500}, Step{200, "ok"}});
  ChatClient c(client_options(srv.url()));
  std::vector<double> waits;
  c.sleep = [&](double s) { waits.push_back(s); };
  const auto r = c.complete({{"user", "hi"}});
  ASSERT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(waits, (std::vector<double>{3.0, 1.0}));  // Retry-After honoured, then 0.5 doubled
}

TEST(LlmClient, GivesUpAfterTheRetriesAndDoesNotRetryA400) {
  ScriptedServer srv({Step{500}, Step{503}, Step{502}, Step{400}});
  ChatClient c(client_options(srv.url()));
  c.sleep = [](double) {};
  auto r = c.complete({{"user", "hi"}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "http-502");
  EXPECT_EQ(r.attempts, 3);
  r = c.complete({{"user", "hi"}});
  EXPECT_EQ(r.error, "http-400");
  EXPECT_EQ(r.attempts, 1);
}

TEST(LlmClient, SlowReplyPastTheTimeout) {
  ScriptedServer srv({Step{200, "late", "", 1500}});
  auto o = client_options(srv.url());
  o.read_timeout_s = 0.3, o.retries = 0;
  ChatClient c(o);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = c.complete({{"user", "hi"}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "timeout") << r.detail;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.4);
}

TEST(LlmClient, MalformedRepliesAndNoServer) {
  ScriptedServer srv({Step{200, "", "this is not json"}, Step{200, "", R"({"choices": []})"}});
  ChatClient c(client_options(srv.url()));
  EXPECT_EQ(c.complete({{"user", "a"}}).error, "malformed");
  EXPECT_EQ(c.complete({{"user", "b"}}).error, "malformed");
  auto o = client_options("http://127.0.0.1:9/v1");  // nothing listens on the discard port
  o.retries = 1;
  ChatClient none(o);
  none.sleep = [](double) {};
  const auto r = none.complete({{"user", "c"}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 2);
}

TEST(LlmClient, TokenAndSpendCapsStopFurtherRequests) {
  ScriptedServer srv({Step{200, "a"}, Step{200, "b"}, Step{200, "c"}});
  auto o = client_options(srv.url());
  o.token_budget = 200;
  ChatClient c(o);
  EXPECT_TRUE(c.complete({{"user", "1"}}).ok);  // 150 used
  EXPECT_EQ(srv.requests().back()["max_tokens"], o.max_tokens > 200 ? 200 : o.max_tokens);
  EXPECT_TRUE(c.complete({{"user", "2"}}).ok);         // 300 used
  EXPECT_EQ(srv.requests().back()["max_tokens"], 50);  // never more than the cap leaves
  const auto r = c.complete({{"user", "3"}});
  EXPECT_EQ(r.error, "budget");
  EXPECT_EQ(srv.requests().size(), 2u);  // nothing sent

  ScriptedServer srv2({Step{200, "a"}, Step{200, "b"}});
  auto o2 = client_options(srv2.url());
  o2.budget_usd = 0.0001, o2.usd_per_mtok_prompt = 1000;  // 100 prompt tokens = $0.1
  ChatClient c2(o2);
  EXPECT_TRUE(c2.complete({{"user", "1"}}).ok);
  EXPECT_EQ(c2.complete({{"user", "2"}}).error, "budget");
  EXPECT_EQ(srv2.requests().size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// The policy with a scripted model and a stubbed judge: the loop the tuner runs, one proposal at
// a time. The stub compiles with the real JIT when nvcc is there (compile errors are nvcc's own);
// otherwise a source with "zero_value" fails to compile. Other verdicts are read from a marker.
namespace {

struct StubJudge {
  std::string db;
  bool real_jit = false;
  std::unique_ptr<Compiler> jit;
  explicit StubJudge(const std::string& db_path, const std::string& cache) : db(db_path) {
    std::error_code ec;
    real_jit = fs::exists("/usr/local/cuda/bin/nvcc", ec) || std::system("command -v nvcc >/dev/null 2>&1") == 0;
    if (real_jit) {
      CompileOptions co;
      co.cache_dir = cache, co.jobs = 1;
      jit = std::make_unique<Compiler>(co);
    }
  }
  search::Observation judge(const Problem& p, const search::Proposal& prop) {
    search::Observation o;
    o.problem = p, o.spec = prop.spec, o.source = prop.source;
    const std::string h = free_spec_hash(prop.source, p.layout, p.accum);
    auto st = store::Store::open(db);
    st.put_spec({h, "source", prop.source, ""});
    std::string status = "ok", log;
    // The real nvcc for the compile-error-then-fix pair (two compiles); the rest need no build.
    const bool compile =
        prop.source.find("zero_value") != std::string::npos || prop.source.find("// fixed") != std::string::npos;
    if (real_jit && compile) {
      const auto r = jit->compile(prop.source);
      if (!r.ok()) status = r.status, log = r.log;
    } else if (prop.source.find("zero_value") != std::string::npos) {
      status = "compile-error", log = "kernel.cu(6): error: identifier \"zero_value\" is undefined";
    }
    if (status != "ok") {
      store::BuildRow b;
      b.spec_hash = h, b.source_hash = h, b.status = status, b.log = log;
      st.put_build(b);
      o.status = status, o.reward = -1;
      return o;
    }
    for (const char* kind : {"wrong-result", "timing-mismatch"}) {
      if (prop.source.find(std::string("VERDICT ") + kind) != std::string::npos) {
        store::MeasurementRow r;
        r.spec_hash = h, r.gpu = "stub", r.dtype = "f32", r.layout = "nn", r.m = p.shape.m, r.n = p.shape.n,
        r.k = p.shape.k, r.mode = "offline", r.timer = "graph", r.status = kind,
        r.failure = std::string(kind) + ": element (3, 5) differs";
        st.put_measurement(r);
        o.status = kind, o.reward = -0.5;
        return o;
      }
    }
    store::MeasurementRow r;
    r.spec_hash = h, r.gpu = "stub", r.dtype = "f32", r.layout = "nn", r.m = p.shape.m, r.n = p.shape.n,
    r.k = p.shape.k, r.mode = "offline", r.timer = "graph", r.status = "ok";
    r.median_us = r.p10_us = r.p90_us = r.min_us = 20.0, r.samples_us = {20.0};
    st.put_measurement(r);
    o.status = "ok", o.time_us = 20, o.baseline_us = 10, o.reward = 0.5;
    return o;
  }
};

}  // namespace

TEST(LlmPolicy, ScriptedEpisodesEachHandledAsTheyShouldBe) {
  TempDir dir;
  const auto db = dir / "llm.db";
  const std::string fixed = variant("fixed");
  ScriptedServer srv({
      Step{200, fenced(kGoodKernel)},                                // 1 a good kernel
      Step{200, fenced(broken())},                                   // 2 a compile error ...
      Step{200, fenced(fixed, "Fixed: declared the accumulator.")},  // 3 ... then its fix (repair turn)
      Step{200, fenced(variant("VERDICT wrong-result"))},            // 4 a wrong result
      Step{200, fenced(variant("VERDICT timing-mismatch"))},         // 5 a cheating kernel
      Step{200, "", "{\"choices\": 42}"},                            // 6 a malformed reply
      Step{200, "I would use WGMMA with TMA here."},                 // 7 no code ...
      Step{200, fenced(variant("after no code"))},                   // 8 ... then code (repair turn)
      Step{429, "", "", 0, "0"},                                     // 9 rate limited, retried
      Step{500},                                                     // 10 server error, retried
      Step{200, fenced(variant("after 429 and 500"))},               // 11
      Step{200, "slow", "", 1500},                                   // 12 past the read timeout
      Step{200, "slow", "", 1500},                                   // 13 (its retries) also
      Step{200, "slow", "", 1500},                                   // 14
  });
  LlmConfig cfg;
  cfg.client = client_options(srv.url());
  cfg.client.read_timeout_s = 0.5, cfg.client.retries = 2, cfg.client.backoff_s = 0;
  cfg.repairs = 2, cfg.db_path = db, cfg.run_id = "run-test";
  LlmPolicy pol(cfg);
  StubJudge judge(db, dir / "jit");
  const Problem p = problem();
  auto step = [&]() -> std::vector<search::Observation> {
    auto props = pol.propose(p, 1, {});
    std::vector<search::Observation> obs;
    for (const auto& pr : props) obs.push_back(judge.judge(p, pr));
    pol.observe(obs);
    return obs;
  };
  // 1: good.
  auto obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].status, "ok");
  EXPECT_EQ(obs[0].source, kGoodKernel);
  EXPECT_EQ(pol.propose(p, 0, {}).size(), 0u);
  // 2: compile error (nvcc's own message when available).
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].status, "compile-error");
  // 3: the repair turn continues the conversation with the compiler's message.
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].status, "ok");
  {
    const auto req = srv.requests().at(2);
    const auto& msgs = req["messages"];
    ASSERT_EQ(msgs.size(), 4u);  // system, prompt, the broken reply, the error
    EXPECT_EQ(msgs[2]["role"], "assistant");
    EXPECT_NE(msgs[2]["content"].get<std::string>().find("zero_value"), std::string::npos);
    EXPECT_NE(msgs[3]["content"].get<std::string>().find("zero_value"), std::string::npos);
    EXPECT_NE(msgs[3]["content"].get<std::string>().find("undefined"), std::string::npos);
  }
  // 4: wrong result: no repair turn; the next episode's prompt shows the verifier's message.
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].status, "wrong-result");
  // 5: a cheat caught by the judge; its prompt carried the wrong-result feedback.
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].status, "timing-mismatch");
  {
    const auto req = srv.requests().at(4);
    ASSERT_EQ(req["messages"].size(), 2u);  // a fresh episode
    const auto prompt = req["messages"][1]["content"].get<std::string>();
    EXPECT_NE(prompt.find("element (3, 5) differs"), std::string::npos);
    EXPECT_NE(prompt.find("The best kernel so far"), std::string::npos);  // the stored best (step 1/3)
  }
  // 6 + 7 + 8: a malformed reply is skipped, a reply with no code gets a repair turn asking for a
  // code block, and that one proposes.
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_NE(obs[0].source.find("after no code"), std::string::npos);
  {
    const auto req = srv.requests().at(7);
    const auto last = req["messages"].back()["content"].get<std::string>();
    EXPECT_NE(last.find("fenced block"), std::string::npos);
  }
  // 9-11: 429 and 500 are retried inside one call.
  obs = step();
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_NE(obs[0].source.find("after 429 and 500"), std::string::npos);
  // 12-14: the model is too slow (three attempts time out), then the exhausted script answers
  // 500 three times: two failed calls in a row end this propose (bounded), nothing proposed.
  obs = step();
  EXPECT_EQ(obs.size(), 0u);
  EXPECT_FALSE(pol.exhausted());

  // Every turn is stored with its prompt, reply, source and outcome.
  Records rec(db);
  const auto turns = rec.turns("run-test");
  std::vector<std::string> statuses;
  for (const auto& t : turns) statuses.push_back(t.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "compile-error", "ok", "wrong-result", "timing-mismatch",
                                                "malformed", "no-code", "ok", "ok", "timeout", "http-500"}));
  ASSERT_EQ(turns.size(), 11u);
  EXPECT_EQ(turns[2].kind, "repair");
  EXPECT_EQ(turns[2].turn, 1);
  EXPECT_EQ(turns[2].episode, turns[1].episode);
  EXPECT_NE(turns[1].detail.find("zero_value"), std::string::npos);
  std::printf("compile errors from %s:\n%s\n", judge.real_jit ? "nvcc" : "the stub (no nvcc)", turns[1].detail.c_str());
  EXPECT_EQ(turns[0].reward, 0.5);
  EXPECT_EQ(turns[0].time_us, 20.0);
  EXPECT_EQ(turns[1].reward, -1.0);
  EXPECT_EQ(turns[4].reward, -0.5);
  EXPECT_EQ(turns[0].prompt_tokens, 100);
  EXPECT_NE(turns[0].prompt_json.find("The C ABI your kernel must export"), std::string::npos);
  EXPECT_EQ(turns[7].kind, "repair");

  // Trajectories: the scored turns as JSON lines.
  const auto out = dir / "traj.jsonl";
  ASSERT_EQ(exporter::write_trajectories({db}, out), 0);
  std::ifstream in(out);
  std::string line;
  std::vector<nlohmann::json> recs;
  while (std::getline(in, line)) recs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(recs.size(), 7u);  // ok, compile-error, ok, wrong-result, timing-mismatch, ok, ok
  EXPECT_EQ(recs[0]["reward"], 0.5);
  EXPECT_EQ(recs[0]["prompt"].size(), 2u);
  EXPECT_EQ(recs[0]["completion"][0]["role"], "assistant");
  EXPECT_EQ(recs[0]["measurement"]["speedup"], 0.5);
  EXPECT_EQ(recs[0]["problem"]["m"], 256);
  EXPECT_EQ(recs[1]["measurement"]["status"], "compile-error");
}

TEST(LlmPolicy, RepairTurnsAreCappedAndTheSpendCapEndsTheSearch) {
  TempDir dir;
  const auto db = dir / "llm.db";
  std::vector<Step> steps;
  for (int i = 0; i < 4; ++i) steps.push_back(Step{200, "no code " + std::to_string(i)});
  ScriptedServer srv(steps);
  LlmConfig cfg;
  cfg.client = client_options(srv.url());
  cfg.client.budget_usd = 0.00035, cfg.client.usd_per_mtok_prompt = 1, cfg.client.usd_per_mtok_completion = 1;
  cfg.repairs = 1, cfg.db_path = db;
  LlmPolicy pol(cfg);
  // Each call costs $0.00015: calls 1-3 are made (the third crosses the cap), the fourth is refused.
  EXPECT_TRUE(pol.propose(problem(), 1, {}).empty());
  EXPECT_TRUE(pol.exhausted());
  const auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0]["messages"].size(), 2u);
  EXPECT_EQ(reqs[1]["messages"].size(), 4u);  // the one repair turn
  EXPECT_EQ(reqs[2]["messages"].size(), 2u);  // repairs used up: a fresh episode
  EXPECT_TRUE(pol.propose(problem(), 1, {}).empty());
  EXPECT_EQ(srv.requests().size(), 3u);
  Records rec(db);
  EXPECT_EQ(rec.turns().back().status, "budget");
}

// ---------------------------------------------------------------------------------------------
// `tune --search llm` with fewer candidates per round than problems (here --round 1 and the two
// layouts of one shape): every source the model wrote is measured, none left pending. (A round
// used to keep the first problem's proposal and drop the other's, which the model had been paid
// for and which was never measured.)
TEST(LlmTune, SourcesARoundHasNoRoomForAreMeasuredInTheNextRound) {
  TempDir dir;
  const std::string judge = dir / "judge.py";
  std::ofstream(judge) << R"(#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    shapes = []
    for m, n, k in req["shapes"]:
        ms = [{"method": c["name"], "status": "ok", "failure": "", "reason": "", "rel_err": 1e-4,
               "timing": {"offline": {"graph": {"median": 10.0, "p10": 10.0, "p90": 10.0, "min": 10.0, "n": 5}}}}
              for c in req["candidates"]]
        ms += [{"method": b, "status": "ok", "failure": "", "reason": "", "rel_err": None,
                "timing": {"offline": {"graph": {"median": 12.0, "p10": 12.0, "p90": 12.0, "min": 12.0, "n": 5}}}}
               for b in req["baselines"]]
        shapes.append({"m": m, "n": n, "k": k, "methods": ms})
    print(json.dumps({"ok": True, "gpu": "unknown", "shapes": shapes}), flush=True)
)";
  fs::permissions(judge, fs::perms::owner_all);
  ScriptedServer srv({Step{200, fenced(variant("one"))}, Step{200, fenced(variant("two"))},
                      Step{200, fenced(variant("three"))}, Step{200, fenced(variant("four"))}});
  tuner::TuneOptions o;
  o.eval.shapes = {{64, 64, 64}};
  o.eval.timers = {true, false, false};
  o.eval.baselines = {"cublas-nn"};
  o.db_path = dir / "tune.db";
  o.eval.judge_exe = judge;
  o.eval.progress = false;
  o.families = {"tiny"};
  llm::register_llm_policy();  // as `cudal2 tune` does: search/ does not know the LLM policy
  o.search = "llm";
  o.policy.extra = {{"llm-url", srv.url()}, {"llm-model", "scripted"}, {"db", o.db_path}};
  o.round = 1;
  o.budget = 3;
  o.progress = false;
  o.check_gpu = false;
  const auto r = tuner::run_tune(o);
  EXPECT_EQ(r.outcomes.size(), 3u);
  Records rec(o.db_path);
  int pending = 0, measured = 0;
  for (const auto& t : rec.turns()) {
    pending += t.status == "pending";
    measured += t.status == "ok";
  }
  EXPECT_EQ(measured, 3);
  // The round that ended the budget may leave the one proposal it had no room for.
  EXPECT_LE(pending, 1);
  EXPECT_LE(srv.requests().size(), 4u);
}
