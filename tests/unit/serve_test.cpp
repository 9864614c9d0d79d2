// `cudal2 serve` without a GPU: the HTTP service on 127.0.0.1 with the evaluation stubbed.
// Concurrent clients, one worker per "GPU", the bearer token, malformed and oversized requests,
// the rate limit, the queue limit and /health.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "serve/serve.hpp"

using namespace cudal2;
using namespace cudal2::serve;

namespace {

const char* kToken = "s3cret-token";

struct Running {
  Server server;
  std::thread thread;
  int port = 0;
  Running(ServeOptions o, EvalFn f) : server(std::move(o), std::move(f)) {
    port = server.start();
    thread = std::thread([this] { server.run(); });
  }
  ~Running() {
    server.stop();
    thread.join();
  }
  httplib::Client client(const std::string& token = kToken) const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(20, 0);
    if (!token.empty()) c.set_bearer_token_auth(token);
    return c;
  }
};

ServeOptions options(int workers = 2) {
  ServeOptions o;
  o.host = "127.0.0.1", o.port = 0, o.token = kToken, o.workers = workers;
  o.rate_per_minute = 0;  // no rate limit unless a test sets one
  o.http_threads = 12;
  return o;
}

std::string body(const std::string& source) {
  auto j = nlohmann::json::parse(R"({"layout": "tn", "accum": "f32", "shapes": [[128, 256, 64], [64, 64, 64]]})");
  j["source"] = source;
  return j.dump();
}

// A stub judge: "ok" with a fixed time unless the source says otherwise; counts concurrency.
struct Stub {
  std::atomic<int> active{0}, peak{0}, calls{0};
  int delay_ms = 50;
  EvalFn fn() {
    return [this](const EvalJob& job, int gpu) {
      const int now = ++active;
      int p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      --active;
      const bool wrong = job.source.find("WRONG") != std::string::npos;
      nlohmann::json results = nlohmann::json::array();
      for (const auto& s : job.shapes)
        results.push_back({{"m", s.m},
                           {"n", s.n},
                           {"k", s.k},
                           {"status", wrong ? "wrong-result" : "ok"},
                           {"time_us", wrong ? nlohmann::json(nullptr) : nlohmann::json(10.0)},
                           {"baseline_us", 12.0},
                           {"speedup", wrong ? nlohmann::json(nullptr) : nlohmann::json(1.2)},
                           {"reward", wrong ? -1.0 : 1.2}});
      return nlohmann::json{{"ok", true},
                            {"verdict", wrong ? "fail" : "pass"},
                            {"status", wrong ? "wrong-result" : "ok"},
                            {"failure_kind", wrong ? "wrong-result" : ""},
                            {"results", results},
                            {"reward", wrong ? -1.0 : 1.2},
                            {"layout", std::string(to_string(job.layout))},
                            {"gpu", gpu}};
    };
  }
};

}  // namespace

TEST(ServeParse, ValidatesEveryField) {
  ServeOptions o;
  std::string why;
  auto job = parse_job(body("__global__ void k(){}"), o, why);
  ASSERT_TRUE(job) << why;
  EXPECT_EQ(job->layout, Layout::TN);
  ASSERT_EQ(job->shapes.size(), 2u);
  EXPECT_EQ(job->shapes[0].n, 256);
  for (const char* bad :
       {"", "[]", "{", R"({"shapes": [[1,1,1]]})", R"({"source": "x"})", R"({"source": "x", "shapes": [[1,1]]})",
        R"({"source": "x", "shapes": [[0,1,1]]})", R"({"source": "x", "shapes": [[1,1,100000]]})",
        R"({"source": "x", "shapes": [["1",1,1]]})", R"({"source": "x", "shapes": [[1,1,1]], "layout": "nt"})",
        R"({"source": "x", "shapes": [[1,1,1]], "reps": 0})", R"({"source": "x", "shapes": [[1,1,1]], "extra": 1})",
        R"({"source": 7, "shapes": [[1,1,1]]})"}) {
    EXPECT_FALSE(parse_job(bad, o, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(Serve, RefusesToStartWithoutAToken) {
  ServeOptions o = options();
  o.token = "";
  EXPECT_THROW(Server(o, [](const EvalJob&, int) { return nlohmann::json{}; }), InputError);
}

TEST(Serve, ConcurrentClientsOneWorkerPerGpu) {
  Stub stub;
  Running srv(options(2), stub.fn());
  constexpr int kClients = 8, kEach = 3;
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      auto cli = srv.client();
      for (int i = 0; i < kEach; ++i) {
        const bool wrong = (c + i) % 3 == 0;
        auto res = cli.Post("/evaluate", body(wrong ? "WRONG kernel" : "good kernel"), "application/json");
        if (!res || res->status != 200) {
          ++bad;
          ADD_FAILURE() << "client " << c << " request " << i << ": "
                        << (res ? "HTTP " + std::to_string(res->status) + " " + res->body
                                : "no response: " + httplib::to_string(res.error()));
          continue;
        }
        const auto j = nlohmann::json::parse(res->body);
        const bool as_expected = j["ok"] == true && j["status"] == (wrong ? "wrong-result" : "ok") &&
                                 j["results"].size() == 2 && j["layout"] == "tn" && j.contains("id") &&
                                 j.contains("queue_seconds");
        as_expected ? ++ok : ++bad;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients * kEach);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(stub.calls.load(), kClients * kEach);
  EXPECT_LE(stub.peak.load(), 2);  // never more evaluations at once than workers
  EXPECT_GE(stub.peak.load(), 1);

  auto h = srv.client("").Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  const auto hj = nlohmann::json::parse(h->body);
  EXPECT_EQ(hj["served"], kClients * kEach);
  EXPECT_EQ(hj["workers"], 2);
}

TEST(Serve, WrongOrMissingTokenMalformedAndOversized) {
  Stub stub;
  ServeOptions o = options(1);
  o.max_body_bytes = 4096;
  Running srv(o, stub.fn());
  auto res = srv.client("wrong-token").Post("/evaluate", body("k"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = srv.client("").Post("/evaluate", body("k"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = srv.client(std::string(kToken) + "x").Post("/evaluate", body("k"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);

  auto cli = srv.client();
  res = cli.Post("/evaluate", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"], "bad-request");
  res = cli.Post("/evaluate", R"({"source": "k", "shapes": []})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  res = cli.Post("/evaluate", body(std::string(10000, 'x')), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  res = cli.Get("/nothing");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(stub.calls.load(), 0);  // nothing reached the judge

  res = cli.Post("/evaluate", body("k"), "application/json");  // and the server still serves
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(Serve, RateAndQueueLimits) {
  {
    Stub stub;
    stub.delay_ms = 1;
    ServeOptions o = options(1);
    o.rate_per_minute = 6, o.burst = 2;
    Running srv(o, stub.fn());
    auto cli = srv.client();
    EXPECT_EQ(cli.Post("/evaluate", body("k"), "application/json")->status, 200);
    EXPECT_EQ(cli.Post("/evaluate", body("k"), "application/json")->status, 200);
    auto res = cli.Post("/evaluate", body("k"), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 429);
    EXPECT_EQ(nlohmann::json::parse(res->body)["error"], "rate-limited");
    EXPECT_TRUE(res->has_header("Retry-After"));
  }
  {
    Stub stub;
    stub.delay_ms = 600;
    ServeOptions o = options(1);
    o.queue_capacity = 1;
    Running srv(o, stub.fn());
    // One job running, one waiting; the third finds the queue full.
    std::vector<std::thread> ts;
    std::atomic<int> ok{0};
    for (int i = 0; i < 2; ++i) {
      ts.emplace_back([&] {
        auto res = srv.client().Post("/evaluate", body("k"), "application/json");
        if (res && res->status == 200) ++ok;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    auto res = srv.client().Post("/evaluate", body("k"), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 429);
    EXPECT_EQ(nlohmann::json::parse(res->body)["error"], "queue-full");
    for (auto& t : ts) t.join();
    EXPECT_EQ(ok.load(), 2);
  }
}

TEST(Serve, AnEvaluationThatThrowsIsA500AndTheWorkerGoesOn) {
  std::atomic<int> n{0};
  Running srv(options(1), [&](const EvalJob&, int) -> nlohmann::json {
    if (n++ == 0) throw std::runtime_error("the judge died");
    return {{"ok", true}, {"status", "ok"}};
  });
  auto cli = srv.client();
  auto res = cli.Post("/evaluate", body("k"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_NE(res->body.find("the judge died"), std::string::npos);
  res = cli.Post("/evaluate", body("k"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}
