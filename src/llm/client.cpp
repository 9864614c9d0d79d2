#include "llm/client.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "core/problem.hpp"

namespace cudal2::llm {

ParsedUrl parse_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    throw InputError(fmt::format("--llm-url '{}': expected http://HOST[:PORT][/PATH]", url));
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    throw InputError(fmt::format("--llm-url '{}': scheme must be http or https", url));
  const auto path_start = url.find('/', scheme_end + 3);
  ParsedUrl p;
  p.origin = url.substr(0, path_start);
  if (p.origin.size() <= scheme_end + 3) throw InputError(fmt::format("--llm-url '{}': no host", url));
  if (path_start != std::string::npos) p.prefix = url.substr(path_start);
  while (!p.prefix.empty() && p.prefix.back() == '/') p.prefix.pop_back();
  // A URL given with the endpoint itself is accepted too.
  const std::string ep = "/chat/completions";
  if (p.prefix.size() >= ep.size() && p.prefix.compare(p.prefix.size() - ep.size(), ep.size(), ep) == 0)
    p.prefix.erase(p.prefix.size() - ep.size());
  return p;
}

nlohmann::json chat_request(const ClientOptions& opt, const std::vector<Message>& messages) {
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  return {{"model", opt.model},
          {"messages", msgs},
          {"max_tokens", opt.max_tokens},
          {"temperature", opt.temperature},
          {"stream", false}};
}

ChatClient::ChatClient(ClientOptions opt) : opt_(std::move(opt)), url_(parse_url(opt_.url)) {
  sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
}

std::int64_t ChatClient::tokens_used() const {
  std::lock_guard<std::mutex> l(mu_);
  return tokens_;
}
double ChatClient::usd_spent() const {
  std::lock_guard<std::mutex> l(mu_);
  return usd_;
}

namespace {

void set_timeout(httplib::Client& c, double s, void (httplib::Client::*f)(time_t, time_t)) {
  const auto sec = static_cast<time_t>(s);
  (c.*f)(sec, static_cast<time_t>((s - double(sec)) * 1e6));
}

// Parses a chat completion; false (with why) when the body is not one.
bool parse_completion(const std::string& body, ChatResult& r) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    r.detail = "the reply is not JSON";
    return false;
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    r.detail = "the reply has no choices";
    return false;
  }
  const auto& c0 = (*choices)[0];
  const auto msg = c0.find("message");
  if (msg == c0.end() || !msg->is_object() || !msg->contains("content") || !(*msg)["content"].is_string()) {
    r.detail = "the reply's first choice has no message content";
    return false;
  }
  r.content = (*msg)["content"].get<std::string>();
  if (c0.contains("finish_reason") && c0["finish_reason"].is_string()) r.finish_reason = c0["finish_reason"];
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& u = j["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) r.prompt_tokens = u["prompt_tokens"];
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer())
      r.completion_tokens = u["completion_tokens"];
  }
  return true;
}

}  // namespace

ChatResult ChatClient::complete(const std::vector<Message>& messages) {
  ChatResult r;
  const auto t0 = std::chrono::steady_clock::now();
  auto done = [&]() -> ChatResult& {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  {
    std::lock_guard<std::mutex> l(mu_);
    if (opt_.token_budget > 0 && tokens_ >= opt_.token_budget) {
      r.error = "budget", r.detail = fmt::format("token cap reached ({} of {})", tokens_, opt_.token_budget);
      return done();
    }
    if (opt_.budget_usd > 0 && usd_ >= opt_.budget_usd) {
      r.error = "budget", r.detail = fmt::format("spend cap reached (${:.4f} of ${:.4f})", usd_, opt_.budget_usd);
      return done();
    }
  }
  // Never ask for more completion tokens than the remaining token cap allows.
  ClientOptions o = opt_;
  if (opt_.token_budget > 0)
    o.max_tokens =
        int(std::max<std::int64_t>(1, std::min<std::int64_t>(o.max_tokens, opt_.token_budget - tokens_used())));
  const std::string body = chat_request(o, messages).dump();
  httplib::Client cli(url_.origin);
  set_timeout(cli, opt_.connect_timeout_s, &httplib::Client::set_connection_timeout);
  set_timeout(cli, opt_.read_timeout_s, &httplib::Client::set_read_timeout);
  set_timeout(cli, opt_.connect_timeout_s, &httplib::Client::set_write_timeout);
  if (!opt_.api_key.empty()) cli.set_bearer_token_auth(opt_.api_key);
  const std::string path = url_.prefix + "/chat/completions";
  double wait = opt_.backoff_s;
  for (int attempt = 0; attempt <= opt_.retries; ++attempt) {
    r.attempts = attempt + 1;
    r.error.clear(), r.detail.clear(), r.raw.clear();
    double retry_after = -1;
    auto res = cli.Post(path, body, "application/json");
    bool retryable = false;
    if (!res) {
      const auto e = res.error();
      r.error = e == httplib::Error::Read || e == httplib::Error::Write || e == httplib::Error::ConnectionTimeout
                    ? "timeout"
                    : "transport";
      r.detail = fmt::format("{} {}: {}", r.error, url_.origin + path, httplib::to_string(e));
      retryable = true;
    } else {
      r.raw = res->body;
      if (res->status == 200) {
        if (!parse_completion(res->body, r)) {
          r.error = "malformed";
        } else {
          const double usd = (double(r.prompt_tokens) * opt_.usd_per_mtok_prompt +
                              double(r.completion_tokens) * opt_.usd_per_mtok_completion) /
                             1e6;
          r.usd = usd;
          std::lock_guard<std::mutex> l(mu_);
          tokens_ += r.prompt_tokens + r.completion_tokens;
          usd_ += usd;
          r.ok = true;
          return done();
        }
      } else {
        r.error = fmt::format("http-{}", res->status);
        r.detail = fmt::format("HTTP {} from {}: {}", res->status, url_.origin + path, res->body.substr(0, 300));
        retryable = res->status == 429 || res->status >= 500;
        if (res->has_header("Retry-After")) {
          try {
            retry_after = std::stod(res->get_header_value("Retry-After"));
          } catch (...) {
          }
        }
      }
    }
    if (!retryable || attempt == opt_.retries) break;
    const double w = std::min(opt_.max_backoff_s, retry_after >= 0 ? retry_after : wait);
    sleep(w);
    wait *= 2;
  }
  return done();
}

}  // namespace cudal2::llm
