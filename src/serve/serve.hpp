#pragma once
// `cudal2 serve`: the reward service an external RL trainer calls. POST /evaluate with a kernel
// source, its layout and accumulator and the shapes; the answer is the verdict, failure kind,
// times, speedup and reward as JSON (docs/llm.md). Requests wait in one bounded queue served by
// one worker thread per GPU (each runs the hardened evaluator: compile, then verify and time in a
// confined runner). A bearer token, a request-size limit and a per-client rate limit guard it,
// checked on the request's headers before its body is read. Each open connection has a thread of
// its own (serve/connections.hpp), so slow clients cannot starve /health. GET /health answers
// without a token. Without a GPU the service still starts, but POST /evaluate answers 503 and
// nothing is evaluated or stored (ServeOptions::unavailable). The evaluation is a function, so
// tests run without a GPU.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace cudal2 {
struct ScoreInput;
}

namespace cudal2::serve {

// One request, validated.
struct EvalJob {
  std::string id;  // "r<N>", unique per server
  std::string source;
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
  std::vector<Shape> shapes;
  int reps = 20;
};

// The answer's body ({"ok":true, "status":..., "results":[...]} or {"ok":false,"error":...}).
using EvalFn = std::function<nlohmann::json(const EvalJob& job, int gpu)>;

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8088;    // 0: any free port (Server::port() says which)
  std::string token;  // required "Authorization: Bearer <token>" ("" refuses to start
                      // unless allow_no_token)
  bool allow_no_token = false;
  int workers = 1;  // one per GPU
  size_t max_body_bytes = size_t{256} * 1024;
  size_t max_request_line = 8192;              // beyond: 400 (serve/bounded_server.hpp)
  size_t max_header_bytes = size_t{64} << 10;  // the whole head; beyond: 431
  size_t max_source_bytes = size_t{128} * 1024;
  int max_shapes = 16;
  std::int64_t max_dim = 16384;  // per dimension
  int max_reps = 100;
  size_t queue_capacity = 64;   // waiting jobs; beyond: 429
  double rate_per_minute = 60;  // per client address (token bucket; 0: no limit)
  double burst = 10;
  double request_timeout_s = 1800;  // a handler waits this long for its job, then 504
  int http_threads = 256;           // connections served at once (one thread each); more wait
  int read_timeout_s = 10;          // a connection that sends nothing for this long is closed
  // Non-empty: why nothing can be evaluated here (no GPU). POST /evaluate then answers 503 with
  // this reason after validating the request, and /health says "ready": false.
  std::string unavailable;
};

// Throws InputError for an option out of range: a port outside 0..65535, a host that is not an
// address of this machine's resolver, a non-finite or negative rate, an empty queue, a zero body
// limit, a non-positive timeout, no worker.
void validate(const ServeOptions& opt);

// Parses and validates a request body; on error returns nullopt and sets `error`.
std::optional<EvalJob> parse_job(const std::string& body, const ServeOptions& opt, std::string& error);

class Server {
 public:
  Server(ServeOptions opt, EvalFn eval);
  ~Server();
  // Binds (throws std::runtime_error when it cannot) and starts the workers; returns the port.
  int start();
  // Serves until shutdown() or stop() (blocking); returns at once if either came first.
  void run();
  // Asks run() to return: stops accepting, answers waiting jobs 503. From any thread, any number
  // of times; does not wait for the evaluation in progress.
  void shutdown();
  // shutdown(), then waits for the workers (the evaluation in progress). Idempotent.
  void stop();
  int port() const { return port_; }
  nlohmann::json health() const;

 private:
  struct Queued {
    EvalJob job;
    std::promise<nlohmann::json> done;
    std::chrono::steady_clock::time_point enqueued;
  };
  bool allow(const std::string& client);
  void worker_loop(int gpu);
  void install_routes();
  // POST /evaluate's checks on the headers alone (rate, token, declared length): answered before
  // the body is read, so a client cannot hold a connection by declaring a body it never sends.
  bool refuse_early(const httplib::Request& req, httplib::Response& res);

  ServeOptions opt_;
  EvalFn eval_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  int listen_fd_ = -1;  // the listening socket, to give it a real backlog (start())
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Queued>> queue_;
  bool stopping_ = false;
  int busy_ = 0;
  // run()'s progress (0: not entered, 1: serving, 2: returned) and whether stop was asked: with
  // shutdown() they close the window where a stop lands after run() checked but before httplib's
  // loop started (httplib's stop() is a no-op until then, and the server then ran forever).
  std::atomic<int> run_state_{0};
  std::atomic<bool> stop_requested_{false};
  std::mutex stop_mu_;  // one shutdown()/stop() at a time
  bool http_stopped_ = false, joined_ = false;
  std::atomic<std::int64_t> next_id_{0}, served_{0}, rejected_{0};
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::map<std::string, Bucket> buckets_;
};

// The evaluation behind `cudal2 serve` on a GPU: evaluate_candidates with the source as a
// free-form candidate (offline mode, graph timer, the cuBLAS and cuBLASLt auto-tuning baselines of
// the job's layout), recorded in the store at db_path (tuner::evaluate_and_record); score (may be
// empty) is the reward function.
struct GpuEvalOptions {
  std::string db_path = "serve.db";
  int timeout_s = 120;
  std::function<std::optional<double>(const ScoreInput&)> score;
};
EvalFn gpu_eval(const GpuEvalOptions& opt);

}  // namespace cudal2::serve
