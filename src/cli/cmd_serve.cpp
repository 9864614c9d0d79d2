// `cudal2 serve`: the reward service over HTTP (src/serve/serve.hpp, docs/llm.md): runs until
// SIGINT/SIGTERM, then exits 0.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "core/problem.hpp"
#include "measure/device.hpp"
#include "serve/serve.hpp"
#include "serve/signals.hpp"
#include "tuner/tune.hpp"

namespace cudal2::cli {

using serve::GpuEvalOptions;
using serve::ServeOptions;
using serve::Server;
using serve::StopOnSignal;

Run add_serve(CLI::App& app, const Context&) {
  auto opt = std::make_shared<ServeOptions>();
  auto gopt = std::make_shared<GpuEvalOptions>();
  gopt->score = tuner::score_measurement;  // the reward of every answer and stored row
  auto token_env = std::make_shared<std::string>("CUDAL2_SERVE_TOKEN");
  // Signed, so that a negative value is refused instead of wrapping around to a huge one.
  auto max_body = std::make_shared<std::int64_t>(static_cast<std::int64_t>(opt->max_body_bytes));
  auto queue = std::make_shared<std::int64_t>(static_cast<std::int64_t>(opt->queue_capacity));
  auto max_line = std::make_shared<std::int64_t>(static_cast<std::int64_t>(opt->max_request_line));
  auto max_headers = std::make_shared<std::int64_t>(static_cast<std::int64_t>(opt->max_header_bytes));
  auto* cmd = &app;
  cmd->add_option("--host", opt->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", opt->port, "Port (0: any free port)")->capture_default_str();
  cmd->add_option("--token-env", *token_env, "Environment variable holding the bearer token")->capture_default_str();
  cmd->add_option("--workers", opt->workers, "Evaluation workers (one per GPU)")->capture_default_str();
  cmd->add_option("--db", gopt->db_path, "Results store every evaluation is written to")->capture_default_str();
  cmd->add_option("--timeout", gopt->timeout_s, "Per-candidate evaluation timeout (s)")->capture_default_str();
  cmd->add_option("--max-body", *max_body, "Largest request body (bytes)")->capture_default_str();
  cmd->add_option("--max-request-line", *max_line, "Longest request line (bytes; beyond: 400)")->capture_default_str();
  cmd->add_option("--max-headers", *max_headers, "Largest request head: request line and headers (bytes; beyond: 431)")
      ->capture_default_str();
  cmd->add_option("--rate", opt->rate_per_minute, "Requests a minute per client address (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--queue", *queue, "Waiting jobs before 429")->capture_default_str();
  return [opt, gopt, token_env, max_body, queue, max_line, max_headers]() -> int {
    if (*max_body < 1) throw InputError(fmt::format("--max-body {}: must be at least 1 byte", *max_body));
    if (*queue < 1) throw InputError(fmt::format("--queue {}: must be at least 1", *queue));
    if (gopt->timeout_s < 1) throw InputError(fmt::format("--timeout {}: must be at least 1 s", gopt->timeout_s));
    opt->max_body_bytes = static_cast<size_t>(*max_body);
    opt->queue_capacity = static_cast<size_t>(*queue);
    if (*max_line < 0 || *max_headers < 0)
      throw InputError(
          fmt::format("--max-request-line {} / --max-headers {}: must be positive", *max_line, *max_headers));
    opt->max_request_line = static_cast<size_t>(*max_line);
    opt->max_header_bytes = static_cast<size_t>(*max_headers);
    validate(*opt);
    if (const char* t = std::getenv(token_env->c_str())) opt->token = t;
    if (opt->token.empty())
      throw InputError(
          fmt::format("set the bearer token in ${} (or name another variable with --token-env)", *token_env));
    // First, before anything starts a thread (the CUDA runtime may): every thread then inherits
    // the blocked signals, and only StopOnSignal's own thread receives them.
    std::atomic<Server*> running{nullptr};
    std::atomic<bool> stop_asked{false};
    StopOnSignal on_signal([&] {
      stop_asked = true;
      if (Server* s = running.load()) s->shutdown();
    });
    std::string why;
    if (!gpu_available(&why)) opt->unavailable = fmt::format("{}: nothing is evaluated or stored", why);
    Server server(*opt, gpu_eval(*gopt));
    const int port = server.start();
    running = &server;
    if (stop_asked) server.shutdown();  // a signal before `running` was set
    std::fprintf(stderr, "cudal2 serve: listening on http://%s:%d (POST /evaluate, GET /health), %d worker(s)\n",
                 opt->host.c_str(), port, opt->workers);
    if (!opt->unavailable.empty())
      std::fprintf(stderr, "cudal2 serve: warning: %s; POST /evaluate answers 503\n", opt->unavailable.c_str());
    server.run();
    server.stop();
    // Connections still open after shutdown's grace period keep their threads, which refer to the
    // server: end the process here rather than destroy the server under them.
    std::fflush(nullptr);
    std::_Exit(0);
  };
}

}  // namespace cudal2::cli
