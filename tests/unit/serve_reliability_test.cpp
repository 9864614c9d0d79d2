// `cudal2 serve` under shutdown races, slow clients and an unusable machine, on 127.0.0.1 with the
// evaluation stubbed (the process-level SIGTERM and load tests are in tests/reliability/).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "serve/serve.hpp"

using namespace cudal2;
using namespace cudal2::serve;
using Clock = std::chrono::steady_clock;

namespace {

ServeOptions options() {
  ServeOptions o;
  o.host = "127.0.0.1", o.port = 0, o.token = "t0ken", o.workers = 1;
  o.rate_per_minute = 0;
  return o;
}

EvalFn counting(std::atomic<int>& calls) {
  return [&calls](const EvalJob&, int) {
    ++calls;
    return nlohmann::json{{"ok", true}, {"verdict", "pass"}};
  };
}

const std::string kJob = R"({"source": "x", "shapes": [[64, 64, 64]]})";

// A raw connection: sends `text`, returns the socket (or -1).
int send_raw(int port, const std::string& text) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  if (!text.empty()) (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  return fd;
}

// The status code of the first response on fd, read for at most `wait`; 0 when none came.
int status_of(int fd, std::chrono::milliseconds wait) {
  timeval tv{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[512];
  while (got.find("\r\n") == std::string::npos) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got.rfind("HTTP/1.", 0) == 0 && got.size() > 12 ? std::stoi(got.substr(9, 3)) : 0;
}

}  // namespace

TEST(ServeOptionsCheck, OutOfRangeValuesAreRefused) {
  EXPECT_NO_THROW(validate(options()));
  auto bad = [](auto change) {
    ServeOptions o = options();
    change(o);
    return o;
  };
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.port = 70000; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.port = -1; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.host = "999.1.1.1"; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.rate_per_minute = std::nan(""); })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.rate_per_minute = -1; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.queue_capacity = 0; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.max_body_bytes = 0; })), InputError);
  EXPECT_THROW(validate(bad([](ServeOptions& o) { o.workers = 0; })), InputError);
}

// A stop that lands before, while or after run() starts: run() always returns, stop() may be
// called any number of times from any thread. (A signal handler's stop racing the main thread's
// used to hang in join, exit 1 with "No such process" or abort.)
TEST(ServeShutdown, StopRacingRunAlwaysEndsIt) {
  std::atomic<int> calls{0};
  for (int i = 0; i < 40; ++i) {
    Server s(options(), counting(calls));
    s.start();
    auto ran = std::async(std::launch::async, [&] { s.run(); });
    if (i % 4 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(i % 7));
    std::thread other([&] { s.shutdown(); });
    if (i % 2) s.stop();
    other.join();
    ASSERT_EQ(ran.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "run() did not return, try " << i;
    s.stop();
    s.stop();
  }
  Server never_ran(options(), counting(calls));
  never_ran.start();
  never_ran.stop();
  auto ran = std::async(std::launch::async, [&] { never_ran.run(); });
  EXPECT_EQ(ran.wait_for(std::chrono::seconds(2)), std::future_status::ready);
}

// 60 clients that hang on (trickled headers, a declared 100 MB body, a slow small body): /health
// still answers at once; a declared body over the limit gets its 413 without the body being read.
TEST(ServeSlowClients, HealthAnswersWhileTheyHangOn) {
  std::atomic<int> calls{0};
  Server s(options(), counting(calls));
  const int port = s.start();
  std::thread runner([&] { s.run(); });
  std::vector<int> slow;
  for (int i = 0; i < 60; ++i) {
    const std::string head =
        i % 3 == 0   ? "GET /health HTTP/1.1\r\nHost: x\r\n"
        : i % 3 == 1 ? "POST /evaluate HTTP/1.1\r\nAuthorization: Bearer t0ken\r\nContent-Length: 100000000\r\n\r\n{\""
                     : "POST /evaluate HTTP/1.1\r\nAuthorization: Bearer t0ken\r\nContent-Length: 1000\r\n\r\n{\"";
    slow.push_back(send_raw(port, head));
  }
  std::vector<double> ms;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  for (int i = 0; i < 20; ++i) {
    const auto t0 = Clock::now();
    auto r = c.Get("/health");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[ms.size() / 2], 100.0) << "median /health latency under slow clients";

  const auto t0 = Clock::now();
  const int fd =
      send_raw(port, "POST /evaluate HTTP/1.1\r\nAuthorization: Bearer t0ken\r\nContent-Length: 100000000\r\n\r\n{\"");
  EXPECT_EQ(status_of(fd, std::chrono::milliseconds(3000)), 413);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);
  close(fd);
  for (int f : slow)
    if (f >= 0) close(f);
  s.stop();
  runner.join();
  EXPECT_EQ(calls.load(), 0);
}

// Without a GPU (ServeOptions::unavailable) a valid request is answered 503 and nothing is
// evaluated: a reward there would be the server's fault. Bad requests still get their own status.
TEST(ServeUnavailable, ValidJobsGet503AndNothingRuns) {
  std::atomic<int> calls{0};
  ServeOptions o = options();
  o.unavailable = "no CUDA GPU available";
  Server s(o, counting(calls));
  const int port = s.start();
  std::thread runner([&] { s.run(); });
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth("t0ken");
  auto r = c.Post("/evaluate", kJob, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_NE(r->body.find("no CUDA GPU"), std::string::npos) << r->body;
  r = c.Post("/evaluate", "{bad", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(nlohmann::json::parse(r->body)["ready"], false);
  s.stop();
  runner.join();
  EXPECT_EQ(calls.load(), 0);
}
