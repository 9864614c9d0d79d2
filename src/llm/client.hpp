#pragma once
// An OpenAI-compatible chat-completions client (POST {url}/chat/completions), so vLLM, llama.cpp's
// server, Ollama and hosted APIs all work. Timeouts on connect/read/write, retries with
// exponential backoff on 429 and 5xx (and on transport errors), and caps on tokens and on spend
// that hold across calls: once a cap is reached every further call fails without a request.
// No CUDA, no GPU.
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudal2::llm {

struct ClientOptions {
  std::string url;        // base URL, e.g. "http://127.0.0.1:8000/v1" (".../chat/completions" is appended)
  std::string model;      // the "model" field
  std::string api_key;    // sent as "Authorization: Bearer <key>" when not empty
  int max_tokens = 4096;  // per reply ("max_tokens" in the request)
  double temperature = 0.7;
  double connect_timeout_s = 10;
  double read_timeout_s = 300;  // a reply slower than this is a timeout (then retried)
  int retries = 4;              // further attempts after a 429, a 5xx, a timeout or a transport error
  double backoff_s = 1.0;       // first wait; doubles each retry (a Retry-After header wins, capped)
  double max_backoff_s = 60;
  std::int64_t token_budget = 0;       // total prompt+completion tokens over the client's life (0: no cap)
  double budget_usd = 0;               // total spend cap (0: no cap)
  double usd_per_mtok_prompt = 0;      // price per million prompt tokens
  double usd_per_mtok_completion = 0;  // price per million completion tokens
};

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct ChatResult {
  bool ok = false;
  // "" when ok; else one of: "budget" (a cap reached, nothing sent), "timeout", "http-<code>",
  // "transport" (connection refused/reset), "malformed" (the reply is not a chat completion).
  std::string error;
  std::string detail;   // a line saying what went wrong
  std::string content;  // the assistant message
  std::string raw;      // the response body as received (last attempt)
  std::string finish_reason;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  double usd = 0;  // this call's cost at the configured prices
  int attempts = 0;
  double seconds = 0;  // wall time of the call, retries and waits included
};

// Splits "http://host:port/prefix" into scheme+host+port and path prefix; throws InputError.
struct ParsedUrl {
  std::string origin;  // "http://host:port"
  std::string prefix;  // "/v1" or ""
};
ParsedUrl parse_url(const std::string& url);

class ChatClient {
 public:
  explicit ChatClient(ClientOptions opt);
  ChatResult complete(const std::vector<Message>& messages);
  const ClientOptions& options() const { return opt_; }
  std::int64_t tokens_used() const;
  double usd_spent() const;
  // For tests: replaces the sleep between retries (seconds).
  std::function<void(double)> sleep;

 private:
  ClientOptions opt_;
  ParsedUrl url_;
  mutable std::mutex mu_;
  std::int64_t tokens_ = 0;
  double usd_ = 0;
};

// The request body for these messages (exposed for tests and logging).
nlohmann::json chat_request(const ClientOptions& opt, const std::vector<Message>& messages);

}  // namespace cudal2::llm
