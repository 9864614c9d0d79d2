#include "serve/serve.hpp"

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "measure/device.hpp"
#include "serve/bounded_server.hpp"
#include "serve/connections.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/record.hpp"

namespace cudal2::serve {

namespace {

using Clock = std::chrono::steady_clock;

void reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

nlohmann::json error_body(const std::string& kind, const std::string& message) {
  return {{"ok", false}, {"error", kind}, {"message", message}};
}

// Constant-time comparison: the token must not leak through response timing.
bool same_secret(const std::string& given, const std::string& want) {
  if (want.empty()) return false;
  unsigned diff = given.size() == want.size() ? 0u : 1u;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(want[i % want.size()]);
  return diff == 0;
}

}  // namespace

void validate(const ServeOptions& opt) {
  if (opt.port < 0 || opt.port > 65535)
    throw InputError(fmt::format("--port {}: a TCP port is 1..65535 (0: any free port)", opt.port));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(opt.host.c_str(), nullptr, &hints, &found);
  if (found) freeaddrinfo(found);
  if (opt.host.empty() || rc != 0)
    throw InputError(fmt::format("--host '{}': not an address to listen on ({})", opt.host,
                                 opt.host.empty() ? "empty" : gai_strerror(rc)));
  if (!std::isfinite(opt.rate_per_minute) || opt.rate_per_minute < 0)
    throw InputError(fmt::format("--rate {}: requests a minute must be a finite number, 0 or more (0: no limit)",
                                 opt.rate_per_minute));
  if (opt.queue_capacity < 1) throw InputError("--queue must be at least 1");
  if (opt.max_body_bytes < 1) throw InputError("--max-body must be at least 1 byte");
  if (opt.max_request_line < 64 || opt.max_request_line > (size_t{1} << 20))
    throw InputError(fmt::format("--max-request-line {}: 64..1048576 bytes", opt.max_request_line));
  if (opt.max_header_bytes < opt.max_request_line || opt.max_header_bytes > (size_t{16} << 20))
    throw InputError(fmt::format("--max-headers {}: --max-request-line..16777216 bytes", opt.max_header_bytes));
  if (!(opt.request_timeout_s > 0)) throw InputError("the request timeout must be positive");
  if (opt.workers < 1 || opt.workers > 64) throw InputError(fmt::format("--workers {}: 1..64", opt.workers));
}

std::optional<EvalJob> parse_job(const std::string& body, const ServeOptions& opt, std::string& error) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the body is not a JSON object";
    return std::nullopt;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const char* known[] = {"source", "layout", "accum", "shapes", "reps"};
    if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known)) {
      error = fmt::format("unknown field '{}' (known: source, layout, accum, shapes, reps)", it.key());
      return std::nullopt;
    }
  }
  EvalJob job;
  if (!j.contains("source") || !j["source"].is_string() || j["source"].get<std::string>().empty()) {
    error = "'source' (the kernel's .cu text) is required";
    return std::nullopt;
  }
  job.source = j["source"].get<std::string>();
  if (job.source.size() > opt.max_source_bytes) {
    error = fmt::format("'source' is {} bytes; the limit is {}", job.source.size(), opt.max_source_bytes);
    return std::nullopt;
  }
  try {
    if (j.contains("layout")) {
      if (!j["layout"].is_string()) throw InputError("'layout' must be \"nn\" or \"tn\"");
      job.layout = parse_layout(j["layout"].get<std::string>());
    }
    if (j.contains("accum")) {
      if (!j["accum"].is_string()) throw InputError("'accum' must be \"f32\" or \"f16\"");
      job.accum = parse_accum(j["accum"].get<std::string>());
    }
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
  if (!j.contains("shapes") || !j["shapes"].is_array() || j["shapes"].empty()) {
    error = "'shapes' must be a non-empty array of [m, n, k]";
    return std::nullopt;
  }
  if (int(j["shapes"].size()) > opt.max_shapes) {
    error = fmt::format("{} shapes; the limit is {}", j["shapes"].size(), opt.max_shapes);
    return std::nullopt;
  }
  for (const auto& s : j["shapes"]) {
    if (!s.is_array() || s.size() != 3 || !s[0].is_number_integer() || !s[1].is_number_integer() ||
        !s[2].is_number_integer()) {
      error = "each shape must be [m, n, k] with integers";
      return std::nullopt;
    }
    Shape sh{s[0].get<std::int64_t>(), s[1].get<std::int64_t>(), s[2].get<std::int64_t>()};
    if (sh.m <= 0 || sh.n <= 0 || sh.k <= 0 || sh.m > opt.max_dim || sh.n > opt.max_dim || sh.k > opt.max_dim) {
      error = fmt::format("shape {} out of range (1..{} per dimension)", sh.str(), opt.max_dim);
      return std::nullopt;
    }
    job.shapes.push_back(sh);
  }
  if (j.contains("reps")) {
    // Compared at full width: read as an int, 4294967297 became 1 and was accepted.
    const auto& r = j["reps"];
    const bool in_range =
        r.is_number_unsigned()
            ? r.get<std::uint64_t>() >= 1 && r.get<std::uint64_t>() <= static_cast<std::uint64_t>(opt.max_reps)
        : r.is_number_integer() ? r.get<std::int64_t>() >= 1 && r.get<std::int64_t>() <= opt.max_reps
                                : false;
    if (!in_range) {
      error = fmt::format("'reps' must be an integer in 1..{}", opt.max_reps);
      return std::nullopt;
    }
    job.reps = static_cast<int>(r.get<std::int64_t>());
  }
  return job;
}

Server::Server(ServeOptions opt, EvalFn eval) : opt_(std::move(opt)), eval_(std::move(eval)) {
  if (opt_.token.empty() && !opt_.allow_no_token)
    throw InputError(
        "cudal2 serve needs a bearer token (--token-env NAME naming an environment variable that holds it)");
  validate(opt_);
  http_ = std::make_unique<BoundedServer>(HeaderLimits{.request_line_bytes = opt_.max_request_line,
                                                       .header_bytes = opt_.max_header_bytes,
                                                       .read_timeout_s = opt_.read_timeout_s,
                                                       .write_timeout_s = 30});
}

Server::~Server() { stop(); }

bool Server::allow(const std::string& client) {
  if (opt_.rate_per_minute <= 0) return true;
  std::lock_guard<std::mutex> l(mu_);
  const auto now = Clock::now();
  auto [it, fresh] = buckets_.try_emplace(client);
  Bucket& b = it->second;
  if (fresh) {
    b.tokens = opt_.burst, b.last = now;
  } else {
    b.tokens = std::min(opt_.burst,
                        b.tokens + std::chrono::duration<double>(now - b.last).count() * opt_.rate_per_minute / 60);
    b.last = now;
  }
  if (buckets_.size() > 10000) buckets_.clear();  // bounded memory under address churn
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

nlohmann::json Server::health() const {
  std::lock_guard<std::mutex> l(mu_);
  return {{"ok", true},
          {"ready", opt_.unavailable.empty()},
          {"unavailable", opt_.unavailable},
          {"workers", opt_.workers},
          {"busy", busy_},
          {"queued", queue_.size()},
          {"queue_capacity", opt_.queue_capacity},
          {"served", served_.load()},
          {"rejected", rejected_.load()}};
}

void Server::worker_loop(int gpu) {
  for (;;) {
    std::shared_ptr<Queued> q;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      q = queue_.front();
      queue_.pop_front();
      ++busy_;
    }
    const double waited = std::chrono::duration<double>(Clock::now() - q->enqueued).count();
    nlohmann::json out;
    const auto t0 = Clock::now();
    try {
      out = eval_(q->job, gpu);
    } catch (const std::exception& e) {
      out = error_body("evaluation-failed", e.what());
    }
    if (out.is_object()) {
      out["id"] = q->job.id;
      out["queue_seconds"] = waited;
      out["eval_seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
      out["gpu_worker"] = gpu;
    }
    // Counted before the reply is released: a client that has its answer sees it in /health.
    {
      std::lock_guard<std::mutex> l(mu_);
      --busy_;
    }
    ++served_;
    q->done.set_value(std::move(out));
  }
}

bool Server::refuse_early(const httplib::Request& req, httplib::Response& res) {
  // Rate first: guessing tokens costs the same as evaluating.
  if (!allow(req.remote_addr)) {
    ++rejected_;
    res.set_header("Retry-After", "10");
    reply(res, 429, error_body("rate-limited", fmt::format("more than {} requests a minute", opt_.rate_per_minute)));
    return true;
  }
  const std::string auth = req.get_header_value("Authorization");
  const std::string want = "Bearer " + opt_.token;
  if (!opt_.token.empty() && !same_secret(auth, want)) {
    ++rejected_;
    res.set_header("WWW-Authenticate", "Bearer");
    reply(res, 401, error_body("unauthorized", "a valid 'Authorization: Bearer <token>' header is required"));
    return true;
  }
  // Only a declared length can be refused before reading: a chunked body has none.
  const std::string length = req.get_header_value("Content-Length");
  if (length.empty() || req.has_header("Transfer-Encoding")) {
    ++rejected_;
    reply(res, 411, error_body("length-required", "send the body with a Content-Length header (no chunked encoding)"));
    return true;
  }
  const bool digits = length.size() <= 18 && length.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    ++rejected_;
    reply(res, 400, error_body("bad-request", "Content-Length is not a number"));
    return true;
  }
  if (std::stoull(length) > opt_.max_body_bytes) {
    ++rejected_;
    reply(res, 413, error_body("too-large", fmt::format("the body is limited to {} bytes", opt_.max_body_bytes)));
    return true;
  }
  return false;
}

void Server::install_routes() {
  auto& s = *http_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "POST" && req.path == "/evaluate" && refuse_early(req, res))
      return httplib::Server::HandlerResponse::Handled;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) { reply(res, 200, health()); });
  s.Post("/evaluate", [this](const httplib::Request& req, httplib::Response& res) {
    // Rate, token and declared length were checked before the body was read (refuse_early).
    if (req.body.size() > opt_.max_body_bytes) {
      ++rejected_;
      return reply(res, 413,
                   error_body("too-large", fmt::format("the body is limited to {} bytes", opt_.max_body_bytes)));
    }
    std::string why;
    auto job = parse_job(req.body, opt_, why);
    if (!job) {
      ++rejected_;
      return reply(res, 400, error_body("bad-request", why));
    }
    // Nothing measured, nothing stored: a reward here would be the server's fault, not the kernel's.
    if (!opt_.unavailable.empty()) {
      ++rejected_;
      return reply(res, 503, error_body("unavailable", opt_.unavailable));
    }
    auto q = std::make_shared<Queued>();
    q->job = std::move(*job);
    q->job.id = fmt::format("r{}", ++next_id_);
    q->enqueued = Clock::now();
    auto fut = q->done.get_future();
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return reply(res, 503, error_body("stopping", "the server is shutting down"));
      if (queue_.size() >= opt_.queue_capacity) {
        ++rejected_;
        res.set_header("Retry-After", "30");
        return reply(res, 429, error_body("queue-full", fmt::format("{} jobs are waiting", queue_.size())));
      }
      queue_.push_back(q);
    }
    cv_.notify_one();
    if (fut.wait_for(std::chrono::duration<double>(opt_.request_timeout_s)) != std::future_status::ready)
      return reply(res, 504,
                   error_body("timeout", "the evaluation did not finish in time; it goes on, its result is stored"));
    auto out = fut.get();
    const bool stopped = out.is_object() && out.value("error", "") == "stopping";
    reply(res, out.is_object() && out.value("ok", false) ? 200 : stopped ? 503 : 500, out);
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, const std::exception_ptr& ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply(res, 500, error_body("internal", what));
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      const std::string kind = res.status == 413 ? "too-large" : res.status == 404 ? "not-found" : "error";
      reply(res, res.status, error_body(kind, fmt::format("HTTP {}", res.status)));
    }
  });
}

int Server::start() {
  auto& s = *http_;
  s.set_payload_max_length(opt_.max_body_bytes);
  s.set_read_timeout(opt_.read_timeout_s, 0);
  s.set_write_timeout(30, 0);
  s.set_keep_alive_timeout(2);
  const auto threads = static_cast<size_t>(std::max(2, opt_.http_threads));
  // Open connections wait at most this long at shutdown: a client that never finishes its request
  // must not keep the server from exiting.
  s.new_task_queue = [threads] { return new ConnectionThreads(threads, std::chrono::milliseconds(1500)); };
  install_routes();
  // httplib listens with a backlog of 5: 50 clients connecting at once had SYNs dropped and waited
  // a second for the retry. Note the socket here (SO_REUSEADDR as httplib would set, but not
  // SO_REUSEPORT, which let a second server bind the same port) and listen again with a real one.
  s.set_socket_options([this](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd_ = sock;
  });

  if (opt_.port == 0) {
    port_ = s.bind_to_any_port(opt_.host);
  } else {
    port_ = s.bind_to_port(opt_.host, opt_.port) ? opt_.port : -1;
  }
  if (port_ <= 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}", opt_.host, opt_.port));
  if (listen_fd_ >= 0) ::listen(listen_fd_, 1024);
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = false;
  }
  for (int g = 0; g < opt_.workers; ++g) workers_.emplace_back([this, g] { worker_loop(g); });
  return port_;
}

void Server::run() {
  run_state_ = 1;
  if (!stop_requested_) http_->listen_after_bind();
  run_state_ = 2;
}

void Server::shutdown() {
  std::lock_guard<std::mutex> once(stop_mu_);
  stop_requested_ = true;
  // httplib's stop() only works once its loop runs: wait for that, unless run() never started or
  // already returned (it checks stop_requested_ first, so it will not start the loop now).
  while (!http_stopped_ && run_state_ == 1) {
    if (http_->is_running()) {
      http_->stop();
      http_stopped_ = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::deque<std::shared_ptr<Queued>> waiting;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    waiting.swap(queue_);
  }
  cv_.notify_all();
  for (auto& q : waiting) q->done.set_value(error_body("stopping", "the server shut down before this job ran"));
}

void Server::stop() {
  shutdown();
  std::lock_guard<std::mutex> once(stop_mu_);
  if (joined_) return;
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
  joined_ = true;
}

EvalFn gpu_eval(const GpuEvalOptions& opt) {
  return [opt](const EvalJob& job, int gpu) -> nlohmann::json {
    EvalRequest req;
    req.free_sources = {job.source};
    req.free_layout = job.layout, req.free_accum = job.accum;
    req.shapes = job.shapes;
    req.modes = {Mode::Offline};
    req.timers = {true, false, false};  // graph only
    req.reps = job.reps;
    const std::string l(to_string(job.layout));
    req.baselines = {"cublas-" + l, "cublaslt-autotune-" + l};
    req.timeout_s = opt.timeout_s;
    req.batch = 1;
    req.progress = false;
    req.command_line = fmt::format("cudal2 serve job {} (worker {})", job.id, gpu);
    req.score = opt.score;
    req.local_gpu = gpu_available() ? query_gpu(0).name : "unknown";
    // One GPU per worker: the judge inherits CUDA_VISIBLE_DEVICES (serve sets nothing here; run one
    // `cudal2 serve --workers 1` per GPU with CUDA_VISIBLE_DEVICES set, or extend EvalRequest).
    const auto outcomes = tuner::evaluate_and_record(req, opt.db_path);
    const CandidateOutcome& o = outcomes.at(0);
    const std::string status(to_string(o.status));  // the outcome's word (protocol/outcome.hpp)
    nlohmann::json results = nlohmann::json::array();
    double reward_sum = 0;
    int rewarded = 0;
    for (const auto& s : job.shapes) {
      const std::string key = s.str();
      nlohmann::json r{{"m", s.m}, {"n", s.n}, {"k", s.k}};
      const auto t = o.graph_us.find(key);
      const auto b = o.baseline_us.find(key);
      const auto sc = o.score.find(key);
      r["status"] = t != o.graph_us.end() ? std::string(to_string(Status::Ok)) : status;
      r["time_us"] = t != o.graph_us.end() ? nlohmann::json(t->second) : nlohmann::json(nullptr);
      r["baseline_us"] = b != o.baseline_us.end() ? nlohmann::json(b->second) : nlohmann::json(nullptr);
      r["speedup"] = t != o.graph_us.end() && b != o.baseline_us.end() && t->second > 0
                         ? nlohmann::json(b->second / t->second)
                         : nlohmann::json(nullptr);
      r["reward"] = sc != o.score.end() ? nlohmann::json(sc->second) : nlohmann::json(nullptr);
      if (sc != o.score.end()) reward_sum += sc->second, ++rewarded;
      results.push_back(r);
    }
    return {{"ok", true},
            // gpu-disturbed: not measured, nobody's fault (no reward); the client asks again later.
            {"verdict", o.status == Status::Ok             ? "pass"
                        : o.status == Status::GpuDisturbed ? "not-measured"
                                                           : "fail"},
            {"status", status},
            {"failure_kind", o.status == Status::Ok || o.status == Status::GpuDisturbed ? std::string() : status},
            {"detail", o.detail},
            {"spec_hash", o.spec_hash},
            {"compile_seconds", o.compile_seconds},
            {"results", results},
            {"reward", rewarded ? nlohmann::json(reward_sum / rewarded) : nlohmann::json(nullptr)}};
  };
}

}  // namespace cudal2::serve
