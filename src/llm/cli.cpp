// `cudal2 tune --search llm` settings: CLI options into PolicyOptions::extra, and extra into an
// LlmConfig (the registry's factory).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdlib>

#include "llm/policy.hpp"

namespace cudal2::llm {

namespace {

double to_double(const std::string& key, const std::string& v) {
  try {
    size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size() && d >= 0) return d;
  } catch (...) {
  }
  throw InputError(fmt::format("--{} '{}': expected a number >= 0", key, v));
}

int to_int(const std::string& key, const std::string& v) {
  const double d = to_double(key, v);
  if (d != double(int(d))) throw InputError(fmt::format("--{} '{}': expected an integer", key, v));
  return int(d);
}

}  // namespace

LlmConfig llm_config_from(const std::map<std::string, std::string>& extra) {
  auto get = [&](const std::string& k) {
    auto it = extra.find(k);
    return it == extra.end() ? std::string() : it->second;
  };
  LlmConfig c;
  c.client.url = get("llm-url");
  c.client.model = get("llm-model");
  if (c.client.url.empty())
    throw InputError("--search llm needs --llm-url (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)");
  if (c.client.model.empty()) throw InputError("--search llm needs --llm-model (the model name the server knows)");
  parse_url(c.client.url);  // throws InputError for a bad URL
  if (const auto env = get("llm-key-env"); !env.empty()) {
    const char* key = std::getenv(env.c_str());
    if (!key || !*key) throw InputError(fmt::format("--llm-key-env {}: that environment variable is not set", env));
    c.client.api_key = key;
  }
  if (auto v = get("llm-max-tokens"); !v.empty()) c.client.max_tokens = std::max(1, to_int("llm-max-tokens", v));
  if (auto v = get("llm-budget-usd"); !v.empty()) c.client.budget_usd = to_double("llm-budget-usd", v);
  if (auto v = get("llm-token-budget"); !v.empty()) c.client.token_budget = to_int("llm-token-budget", v);
  if (auto v = get("llm-price-prompt"); !v.empty()) c.client.usd_per_mtok_prompt = to_double("llm-price-prompt", v);
  if (auto v = get("llm-price-completion"); !v.empty())
    c.client.usd_per_mtok_completion = to_double("llm-price-completion", v);
  if (auto v = get("llm-repairs"); !v.empty()) c.repairs = to_int("llm-repairs", v);
  if (auto v = get("llm-timeout"); !v.empty()) c.client.read_timeout_s = to_double("llm-timeout", v);
  if (auto v = get("llm-retries"); !v.empty()) c.client.retries = to_int("llm-retries", v);
  if (auto v = get("profile"); !v.empty()) {
    if (v != "off" && v != "best" && v != "all")
      throw InputError(fmt::format(
          "--profile '{}': expected best (profile a candidate once it is the best for its problem), all (every "
          "candidate measured ok) or off",
          v));
    c.profile = v;
  }
  if (extra.count("profile-ncu")) {
    c.profile_ncu = get("profile-ncu");
    if (c.profile_ncu.empty())
      throw InputError("--profile-ncu: expected the ncu executable (a name on PATH or a path)");
  }
  if (auto v = get("profile-timeout"); !v.empty()) {
    c.profile_timeout_s = to_double("profile-timeout", v);
    if (c.profile_timeout_s <= 0) throw InputError(fmt::format("--profile-timeout '{}': expected seconds > 0", v));
  }
  c.template_path = get("llm-prompt");
  c.db_path = get("db");
  c.gpu = get("gpu");
  c.run_id = get("run-id");
  if (c.profile != "off" && c.db_path.empty())
    throw InputError("--profile needs the store (--db): profiles are stored there and read back into the prompt");
  if (c.client.budget_usd > 0 && c.client.usd_per_mtok_prompt == 0 && c.client.usd_per_mtok_completion == 0)
    throw InputError(
        "--llm-budget-usd needs the prices (--llm-price-prompt, --llm-price-completion: USD per million tokens)");
  return c;
}

void add_llm_options(CLI::App* tune, std::map<std::string, std::string>& extra) {
  auto opt = [&](const std::string& name, const std::string& help) {
    tune->add_option_function<std::string>(
        "--" + name, [&extra, name](const std::string& v) { extra[name] = v; }, help);
  };
  opt("llm-url", "--search llm: OpenAI-compatible API base URL (e.g. http://127.0.0.1:8000/v1; docs/llm.md)");
  opt("llm-model", "--search llm: model name");
  opt("llm-key-env", "--search llm: environment variable holding the API key (sent as a bearer token)");
  opt("llm-max-tokens", "--search llm: completion tokens per reply (default 4096)");
  opt("llm-budget-usd", "--search llm: stop after spending this much (needs the prices)");
  opt("llm-token-budget", "--search llm: stop after this many prompt+completion tokens");
  opt("llm-price-prompt", "--search llm: USD per million prompt tokens");
  opt("llm-price-completion", "--search llm: USD per million completion tokens");
  opt("llm-repairs", "--search llm: repair turns after a compile error (default 2)");
  opt("llm-timeout", "--search llm: seconds to wait for a reply (default 300)");
  opt("llm-prompt", "--search llm: prompt template file (default prompts/kernel.md)");
  // --profile alone means best.
  tune->add_option_function<std::string>(
          "--profile", [&extra](const std::string& v) { extra["profile"] = v.empty() ? "best" : v; },
          "--search llm: Nsight Compute profiles of candidates, stored and shown in the prompt: best (a candidate "
          "once it is the best for its problem; --profile alone), all (every candidate measured ok) or off (default)")
      ->expected(0, 1);
  opt("profile-ncu", "--search llm --profile: the ncu executable (default ncu)");
  opt("profile-timeout", "--search llm --profile: seconds one ncu run may take (default 600)");
}

void register_llm_policy() {
  search::register_policy("llm", [](const search::PolicyOptions& options) -> std::unique_ptr<search::Policy> {
    return std::make_unique<LlmPolicy>(llm_config_from(options.extra));
  });
}

}  // namespace cudal2::llm
