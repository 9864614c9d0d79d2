#pragma once
// LlmPolicy: the search::Policy whose proposals are free-form kernels written by a language model
// over an OpenAI-compatible chat API (`cudal2 tune --search llm`). Each proposal starts an
// episode: the prompt template filled for the problem (prompts/kernel.md), the reply, the code
// block extracted from it. When the loop reports a compile error for that source (or the reply
// had no usable code block), the next proposal for the problem continues the same conversation
// with the error, up to `repairs` repair turns; other failures (wrong result, a cheat caught) are
// shown in the next episode's prompt. Every turn is stored in the store's llm_turns table with
// its prompt, reply, source and, once observed, status, time and reward. No CUDA.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "llm/client.hpp"
#include "llm/records.hpp"
#include "search/policy.hpp"

namespace CLI {
class App;
}

namespace cudal2::llm {

struct LlmConfig {
  ClientOptions client;
  int repairs = 2;            // repair turns per episode after a compile error or an unusable reply
  std::string template_path;  // "" = default_template_path()
  std::string system_prompt = "You write fast, correct CUDA kernels for NVIDIA Hopper GPUs.";
  std::string db_path;            // the tuning store: references, failure details, llm_turns ("" = none)
  std::string gpu;                // prefer references measured on this GPU ("" = any)
  std::string run_id;             // stored with each turn
  int max_calls_per_propose = 0;  // bound on model calls in one propose() (0: 2n + repairs + 1)
  // The profiler observer (`--profile`, docs/llm.md): "off"; "best": a candidate of this run
  // that, once measured, is the store's best for a problem (the kernel the next prompt shows);
  // "all": every candidate of this run measured ok, on each shape it was measured on. Each is
  // profiled once per shape with Nsight Compute (profile.hpp) and stored in `profiles`.
  std::string profile = "off";
  std::string profile_ncu = "ncu";  // the ncu executable
  double profile_timeout_s = 600;   // one ncu run's limit
  std::string profile_exe;          // the cudal2 that ncu runs ("" = this program, /proc/self/exe)
};

class LlmPolicy : public search::Policy {
 public:
  using ChatFn = std::function<ChatResult(const std::vector<Message>&)>;
  // chat: the model call (default: a ChatClient over config.client). Throws InputError for an
  // unreadable template or a bad URL.
  explicit LlmPolicy(LlmConfig config, ChatFn chat = {});
  ~LlmPolicy() override;

  std::string name() const override { return "llm"; }
  std::vector<search::Proposal> propose(const Problem& p, int n, const std::vector<KernelSpec>& space) override;
  void observe(const std::vector<search::Observation>& results) override;

  // True once the token or spend cap was reached: propose() returns nothing more.
  bool exhausted() const { return exhausted_; }
  // For tests and logs: counts of model calls and of turns by status.
  int calls() const { return calls_; }
  // Profiles stored by this policy, and ncu runs that failed.
  int profiles_stored() const { return profiles_stored_; }
  int profile_failures() const { return profile_failures_; }
  const std::map<std::string, int>& turn_status_counts() const { return status_counts_; }

 private:
  struct Episode {
    std::string id;
    int turn = 0, repairs_used = 0;
    std::vector<Message> conversation;  // messages so far, the last reply included
    bool repair_pending = false;
    std::string repair_errors, repair_source;
    std::string last_errors, last_source;  // a failure to show in the next episode's first prompt
  };
  std::string key(const Problem& p) const;
  void count(const std::string& status) { ++status_counts_[status]; }
  // The profiler observer's step for one ok observation of a candidate this policy proposed.
  void maybe_profile(const search::Observation& o, const std::string& spec_hash);

  LlmConfig cfg_;
  ChatFn chat_;
  std::unique_ptr<ChatClient> client_;
  std::string template_;
  std::unique_ptr<Records> records_;
  std::map<std::string, Episode> episodes_;  // by problem key
  struct Pending {
    std::int64_t turn_id = 0;
    std::string problem_key;
  };
  std::map<std::string, Pending> pending_;  // by free-form spec hash
  std::set<std::string> seen_;              // spec hashes proposed or observed
  std::set<std::string> proposed_;          // spec hashes this policy proposed (this run)
  std::map<std::string, int> status_counts_;
  std::string session_;
  int calls_ = 0, episode_counter_ = 0;
  bool exhausted_ = false;
  int profiles_stored_ = 0, profile_failures_ = 0;
  bool profile_warned_ = false, profile_stopped_ = false;
};

std::unique_ptr<search::Policy> make_llm_policy(const LlmConfig& config);

// The settings `cudal2 tune --search llm` passes in search::PolicyOptions::extra, by key:
//   llm-url, llm-model (required), llm-key-env (the variable holding the API key), llm-max-tokens,
//   llm-budget-usd, llm-token-budget, llm-price-prompt / llm-price-completion (USD per million
//   tokens), llm-repairs, llm-timeout (s), llm-retries, llm-prompt (template file),
//   profile (off, best, all), profile-ncu (the ncu executable), profile-timeout (s),
//   db (the tuning store), gpu. Throws InputError naming a missing or bad setting.
LlmConfig llm_config_from(const std::map<std::string, std::string>& extra);

// Adds --llm-url, --llm-model, --llm-key-env, --llm-max-tokens, --llm-budget-usd,
// --llm-token-budget, --llm-price-prompt, --llm-price-completion, --llm-repairs, --llm-timeout,
// --llm-prompt, --profile [best|all|off] (alone: best), --profile-ncu, --profile-timeout to
// `tune`; each given option lands in `extra` under its name without the dashes.
void add_llm_options(CLI::App* tune, std::map<std::string, std::string>& extra);

// Registers `--search llm` with search's policy registry (search::register_policy; a policy made
// with llm_config_from(extra)). The composition root calls it: search/ does not link this room.
void register_llm_policy();

}  // namespace cudal2::llm
