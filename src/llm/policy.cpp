#include "llm/policy.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "llm/profile.hpp"
#include "llm/prompt.hpp"

namespace cudal2::llm {

namespace {

std::string cut_tail(const std::string& s, size_t max_chars) {
  // Compiler logs: the first errors matter most.
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars) + fmt::format("\n... ({} more characters)", s.size() - max_chars);
}

nlohmann::json messages_json(const std::vector<Message>& ms) {
  auto a = nlohmann::json::array();
  for (const auto& m : ms) a.push_back({{"role", m.role}, {"content", m.content}});
  return a;
}

std::string repair_message(const std::string& errors, bool format_error) {
  if (format_error)
    return "Your reply could not be used: " + errors +
           ". Reply with the complete kernel source in one ```cuda fenced block that defines the five extern \"C\" "
           "ABI functions.";
  return "That kernel failed to compile. The compiler said:\n\n```\n" + errors +
         "\n```\n\nFix it and reply with the complete corrected source in one ```cuda fenced block.";
}

}  // namespace

LlmPolicy::LlmPolicy(LlmConfig config, ChatFn chat) : cfg_(std::move(config)), chat_(std::move(chat)) {
  template_ = read_text_file(cfg_.template_path.empty() ? default_template_path() : cfg_.template_path);
  if (!chat_) {
    client_ = std::make_unique<ChatClient>(cfg_.client);
    chat_ = [this](const std::vector<Message>& m) { return client_->complete(m); };
  }
  if (!cfg_.db_path.empty()) records_ = std::make_unique<Records>(cfg_.db_path);
  // Episode ids unique across runs sharing a store: a time-based session tag and a counter.
  session_ = fmt::format("{:x}", std::chrono::system_clock::now().time_since_epoch().count());
}

LlmPolicy::~LlmPolicy() = default;

std::string LlmPolicy::key(const Problem& p) const {
  return fmt::format("{} {} {}", p.shape.str(), to_string(p.layout), to_string(p.accum));
}

std::vector<search::Proposal> LlmPolicy::propose(const Problem& p, int n, const std::vector<KernelSpec>&) {
  std::vector<search::Proposal> out;
  if (exhausted_ || n <= 0) return out;
  Episode& ep = episodes_[key(p)];
  const int max_calls = cfg_.max_calls_per_propose > 0 ? cfg_.max_calls_per_propose : 2 * n + cfg_.repairs + 1;
  int calls = 0, transport_failures = 0;
  while (int(out.size()) < n && calls < max_calls) {
    ++calls, ++calls_;
    std::vector<Message> msgs;
    TurnRow row;
    if (ep.repair_pending && ep.repairs_used < cfg_.repairs && !ep.conversation.empty()) {
      msgs = ep.conversation;
      msgs.push_back({"user", ep.repair_errors});
      ep.repair_pending = false;
      ++ep.repairs_used, ++ep.turn;
      row.kind = "repair";
    } else {
      Episode fresh;
      fresh.id = fmt::format("{}-{}", session_, ++episode_counter_);
      fresh.last_errors = ep.last_errors, fresh.last_source = ep.last_source;
      ep = std::move(fresh);
      PromptInputs in;
      in.problem = p;
      try {
        if (!cfg_.db_path.empty()) in.reference = retrieve_reference(cfg_.db_path, p, cfg_.gpu);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cudal2: llm: no reference from the store: %s\n", e.what());
      }
      in.previous_errors = ep.last_errors, in.previous_source = ep.last_source;
      msgs = {{"system", cfg_.system_prompt}, {"user", render_template(template_, prompt_vars(in))}};
      row.kind = "propose";
    }
    row.run_id = cfg_.run_id, row.episode = ep.id, row.turn = ep.turn;
    row.model = cfg_.client.model, row.url = cfg_.client.url;
    row.dtype = std::string(to_string(p.accum)), row.layout = std::string(to_string(p.layout));
    row.m = p.shape.m, row.n = p.shape.n, row.k = p.shape.k;
    row.prompt_json = messages_json(msgs).dump();

    const ChatResult r = chat_(msgs);
    row.reply = r.ok ? r.content : r.raw;
    row.prompt_tokens = r.prompt_tokens, row.completion_tokens = r.completion_tokens;
    row.usd = r.usd, row.seconds = r.seconds;
    auto store_row = [&](const std::string& status) {
      row.status = status;
      count(status);
      return records_ ? records_->put_turn(row) : std::int64_t{0};
    };
    if (!r.ok) {
      row.error = r.error, row.detail = r.detail;
      store_row(r.error);
      std::fprintf(stderr, "cudal2: llm: %s: %s\n", r.error.c_str(), r.detail.c_str());
      if (r.error == "budget") {
        exhausted_ = true;
        break;
      }
      // The client already retried with backoff; two failed calls in a row: give up for now.
      if (r.error != "malformed" && ++transport_failures >= 2) break;
      continue;
    }
    transport_failures = 0;
    ep.conversation = msgs;
    ep.conversation.push_back({"assistant", r.content});
    const Extracted x = extract_code(r.content);
    if (!x.error.empty()) {
      row.error = x.error;
      row.detail = x.error == "no-code"        ? "the reply has no fenced code block"
                   : x.error == "unterminated" ? "the code block is not closed (reply cut at max_tokens?)"
                                               : "no code block defines cudal2_run";
      store_row(x.error);
      ep.repair_pending = true;
      ep.repair_errors = repair_message(row.detail, true);
      continue;
    }
    row.source = x.source;
    row.spec_hash = free_spec_hash(x.source, p.layout, p.accum);
    if (!seen_.insert(row.spec_hash).second) {
      row.error = "duplicate", row.detail = "the same source was proposed before";
      store_row("duplicate");
      continue;
    }
    const std::int64_t id = store_row("pending");
    pending_[row.spec_hash] = {id, key(p)};
    proposed_.insert(row.spec_hash);
    search::Proposal prop;
    prop.spec = default_spec("mma");
    prop.spec.family = "source", prop.spec.layout = p.layout, prop.spec.accum = p.accum;
    prop.source = x.source;
    prop.note = fmt::format("llm {} episode {} turn {}", cfg_.client.model, ep.id, ep.turn);
    out.push_back(std::move(prop));
  }
  return out;
}

void LlmPolicy::observe(const std::vector<search::Observation>& results) {
  std::vector<std::pair<const search::Observation*, std::string>> to_profile;
  for (const auto& o : results) {
    if (o.source.empty()) continue;
    const std::string h = free_spec_hash(o.source, o.problem.layout, o.problem.accum);
    seen_.insert(h);
    // Every shape a source of ours was measured on (the loop measures it on each shape of the run).
    if (o.status == "ok" && proposed_.count(h)) to_profile.emplace_back(&o, h);
    auto it = pending_.find(h);
    if (it == pending_.end()) continue;  // not ours (or already observed)
    const Pending pend = it->second;
    pending_.erase(it);
    std::string detail;
    if (o.status != "ok" && records_) detail = records_->failure_detail(h);
    if (detail.empty() && o.status != "ok") detail = o.status;
    if (records_)
      records_->set_outcome(pend.turn_id, o.status, detail,
                            o.status == "ok" ? std::optional<double>(o.time_us) : std::nullopt,
                            o.baseline_us > 0 ? std::optional<double>(o.baseline_us) : std::nullopt, o.reward);
    count("observed-" + o.status);
    Episode& ep = episodes_[pend.problem_key];
    if (o.status == "compile-error" || o.status == "compile-timeout") {
      ep.repair_pending = true;
      ep.repair_errors = repair_message(cut_tail(detail, 6000), false);
      ep.repair_source = o.source;
      ep.last_errors = cut_tail(detail, 6000), ep.last_source = o.source;
    } else if (o.status != "ok") {
      ep.repair_pending = false;
      ep.last_errors = cut_tail(o.status + ": " + detail, 6000), ep.last_source = o.source;
    } else {
      ep.repair_pending = false;
      ep.last_errors.clear(), ep.last_source.clear();
    }
  }
  // After the bookkeeping above: profiling takes a while, and must never stop the tuning.
  for (const auto& [o, h] : to_profile) maybe_profile(*o, h);
}

void LlmPolicy::maybe_profile(const search::Observation& o, const std::string& h) {
  if (cfg_.profile == "off" || profile_stopped_ || !records_) return;
  const std::string dtype(to_string(o.problem.accum)), layout(to_string(o.problem.layout));
  const Shape& sh = o.problem.shape;
  std::string gpu = cfg_.gpu;
  try {
    if (cfg_.profile == "best") {
      // The store's best for the problem, as the next prompt will show it (retrieve_reference).
      const auto gpus = records_->best_gpus(h, dtype, layout, sh.m, sh.n, sh.k);
      if (gpus.empty() || (!gpu.empty() && std::find(gpus.begin(), gpus.end(), gpu) == gpus.end())) return;
      if (gpu.empty()) gpu = gpus.front();
    } else if (gpu.empty()) {
      gpu = records_->measured_gpu(h, dtype, layout, sh.m, sh.n, sh.k);
    }
    if (records_->latest_profile(h, sh.m, sh.n, sh.k)) return;  // profiled before (this run or an earlier one)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudal2: llm: --profile: cannot read the store: %s\n", e.what());
    return;
  }

  ProfileRequest r;
  r.db_path = cfg_.db_path, r.spec_hash = h, r.gpu = gpu.empty() ? "unknown" : gpu;
  r.layout = layout, r.accum = dtype, r.m = sh.m, r.n = sh.n, r.k = sh.k;
  r.timeout_s = cfg_.profile_timeout_s;
  r.ncu.ncu = cfg_.profile_ncu;
  r.ncu.clock_control = "none";  // the clocks as the timed runs saw them
  // The candidate's kernels by name where the source names them: three launches (pick_kernel
  // keeps the longest); else every launch, the judge's kernels left out by name.
  r.ncu.kernel_regex = kernel_name_regex(kernel_names(o.source));
  r.ncu.launch_count = r.ncu.kernel_regex.empty() ? 0 : 3;
  std::string why;
  bool unusable = false;
  try {
    std::error_code ec;
    r.cudal2_exe =
        cfg_.profile_exe.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec).string() : cfg_.profile_exe;
    // The source beside the store, kept: the stored ncu command names it.
    const std::filesystem::path dir = cfg_.db_path + ".profile.d";
    std::filesystem::create_directories(dir);
    r.source_path = (dir / (h + ".cu")).string();
    std::ofstream(r.source_path, std::ios::binary) << o.source;
    if (profile_candidate(r, why, &unusable)) {
      ++profiles_stored_;
      return;
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  ++profile_failures_;
  if (unusable) profile_stopped_ = true;
  if (!profile_warned_) {
    profile_warned_ = true;
    std::fprintf(stderr, "cudal2: llm: warning: --profile: %s on M=%lld N=%lld K=%lld: %s; no profile stored%s\n",
                 h.c_str(), static_cast<long long>(sh.m), static_cast<long long>(sh.n), static_cast<long long>(sh.k),
                 why.c_str(),
                 unusable ? ", no more profiling in this run (the tuning goes on)" : " (the tuning goes on)");
  }
}

std::unique_ptr<search::Policy> make_llm_policy(const LlmConfig& config) { return std::make_unique<LlmPolicy>(config); }

}  // namespace cudal2::llm
