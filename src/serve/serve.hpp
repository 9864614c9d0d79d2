#pragma once
// `cudal2 serve`: the reward service an external RL trainer calls. POST /evaluate with a kernel
// source, its layout and accumulator and the shapes; the answer is the verdict, failure kind,
// times, speedup and reward as JSON (docs/llm.md). Requests wait in one bounded queue served by
// one worker thread per GPU (each runs the hardened evaluator: compile, then verify and time in a
// confined runner). A bearer token, a request-size limit and a per-client rate limit guard it.
// GET /health answers without a token. The evaluation is a function, so tests run without a GPU.
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

namespace CLI {
class App;
}
namespace httplib {
class Server;
}

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
  size_t max_source_bytes = size_t{128} * 1024;
  int max_shapes = 16;
  std::int64_t max_dim = 16384;  // per dimension
  int max_reps = 100;
  size_t queue_capacity = 64;   // waiting jobs; beyond: 429
  double rate_per_minute = 60;  // per client address (token bucket; 0: no limit)
  double burst = 10;
  double request_timeout_s = 1800;  // a handler waits this long for its job, then 504
  int http_threads = 16;
};

// Parses and validates a request body; on error returns nullopt and sets `error`.
std::optional<EvalJob> parse_job(const std::string& body, const ServeOptions& opt, std::string& error);

class Server {
 public:
  Server(ServeOptions opt, EvalFn eval);
  ~Server();
  // Binds (throws std::runtime_error when it cannot) and starts the workers; returns the port.
  int start();
  // Serves until stop() (blocking).
  void run();
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

  ServeOptions opt_;
  EvalFn eval_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Queued>> queue_;
  bool stopping_ = false;
  int busy_ = 0;
  std::atomic<std::int64_t> next_id_{0}, served_{0}, rejected_{0};
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::map<std::string, Bucket> buckets_;
};

// The evaluation behind `cudal2 serve` on a GPU: evaluate_candidates with the source as a
// free-form candidate (offline mode, graph timer, the cuBLAS and cuBLASLt auto-tuning baselines of
// the job's layout), recorded in the store at db_path (search::evaluate_and_record); score (may be
// empty) is the reward function.
struct GpuEvalOptions {
  std::string db_path = "serve.db";
  int timeout_s = 120;
  std::function<std::optional<double>(const ScoreInput&)> score;
};
EvalFn gpu_eval(const GpuEvalOptions& opt);

// Registers `cudal2 serve` (options --host --port --token-env --workers --db --max-body --rate
// --queue --timeout); its callback runs the server until SIGINT/SIGTERM.
void add_serve_command(CLI::App& app, std::function<std::optional<double>(const ScoreInput&)> score = {});

}  // namespace cudal2::serve
