#pragma once
// A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the LLM tests: each
// request takes the next step of the script (a reply, an HTTP error, a slow reply, a malformed
// body) and is recorded. Real HTTP (cpp-httplib), loopback only, bounded: an exhausted script
// answers 500.
#include <httplib.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudal2::testing {

struct Step {
  int status = 200;
  std::string content;      // the assistant message (status 200, raw empty)
  std::string raw;          // a body sent as is (malformed replies, error bodies)
  int delay_ms = 0;         // wait before answering (a slow model)
  std::string retry_after;  // Retry-After header
  int prompt_tokens = 100, completion_tokens = 50;
  Step(int status_ = 200, std::string content_ = "", std::string raw_ = "", int delay_ms_ = 0,
       std::string retry_after_ = "")
      : status(status_),
        content(std::move(content_)),
        raw(std::move(raw_)),
        delay_ms(delay_ms_),
        retry_after(std::move(retry_after_)) {}
};

inline std::string completion_body(const Step& s) {
  return nlohmann::json{
      {"id", "chatcmpl-test"},
      {"object", "chat.completion"},
      {"model", "scripted"},
      {"choices",
       {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", s.content}}}, {"finish_reason", "stop"}}}},
      {"usage",
       {{"prompt_tokens", s.prompt_tokens},
        {"completion_tokens", s.completion_tokens},
        {"total_tokens", s.prompt_tokens + s.completion_tokens}}}}
      .dump();
}

class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Step> steps) : steps_(steps.begin(), steps.end()) {
    svr_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      Step s;
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(nlohmann::json::parse(req.body, nullptr, false));
        auth_.push_back(req.get_header_value("Authorization"));
        if (steps_.empty()) {
          res.status = 500;
          res.set_content("{\"error\":\"script exhausted\"}", "application/json");
          return;
        }
        s = steps_.front();
        steps_.pop_front();
      }
      if (s.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(s.delay_ms));
      res.status = s.status;
      if (!s.retry_after.empty()) res.set_header("Retry-After", s.retry_after);
      res.set_content(!s.raw.empty()    ? s.raw
                      : s.status == 200 ? completion_body(s)
                                        : "{\"error\":\"scripted\"}",
                      "application/json");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
  }
  ~ScriptedServer() {
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<nlohmann::json> requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  std::vector<std::string> auth() const {
    std::lock_guard<std::mutex> l(mu_);
    return auth_;
  }
  size_t left() const {
    std::lock_guard<std::mutex> l(mu_);
    return steps_.size();
  }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::deque<Step> steps_;
  std::vector<nlohmann::json> requests_;
  std::vector<std::string> auth_;
};

}  // namespace cudal2::testing
