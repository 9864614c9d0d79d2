// `cudal2 export --trajectories FILE.jsonl`: the LLM proposer's turns (the store's llm_turns) as
// one JSON object a line, the form RL trainers read (docs/llm.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "export/export.hpp"
#include "llm/records.hpp"
#include "store/store.hpp"

namespace cudal2::exporter {

nlohmann::json trajectory_record(const llm::TurnRow& t) {
  auto prompt = nlohmann::json::parse(t.prompt_json, nullptr, false);
  if (prompt.is_discarded()) prompt = nlohmann::json::array();
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json measurement{
      {"status", t.status},
      {"detail", t.detail},
      {"spec_hash", t.spec_hash},
      {"time_us", opt(t.time_us)},
      {"baseline_us", opt(t.baseline_us)},
      {"speedup", t.time_us && t.baseline_us && *t.time_us > 0 ? nlohmann::json(*t.baseline_us / *t.time_us)
                                                               : nlohmann::json(nullptr)}};
  return {{"prompt", prompt},
          {"completion", nlohmann::json::array({{{"role", "assistant"}, {"content", t.reply}}})},
          {"reward", opt(t.reward)},
          {"measurement", measurement},
          {"problem", {{"m", t.m}, {"n", t.n}, {"k", t.k}, {"layout", t.layout}, {"accum", t.dtype}}},
          {"source", t.source},
          {"episode", t.episode},
          {"turn", t.turn},
          {"kind", t.kind},
          {"model", t.model},
          {"usage", {{"prompt_tokens", t.prompt_tokens}, {"completion_tokens", t.completion_tokens}, {"usd", t.usd}}},
          {"run_id", t.run_id},
          {"created_at", t.created_at}};
}

int write_trajectories(const std::vector<std::string>& dbs, const std::string& out_path, bool include_unscored) {
  // Built whole, then written atomically: rewriting the file in place left a truncated JSON line
  // when the disk filled up.
  std::string text;
  size_t written = 0, skipped = 0;
  for (const auto& db : dbs) {
    // Never creates a store, never reads a damaged one (store/integrity.hpp).
    const auto rec = llm::Records::open_to_read(db);
    for (const auto& t : rec.turns()) {
      // A turn the model never answered is no sample; an unevaluated one has no reward yet.
      if (t.reply.empty() || (!t.reward && !include_unscored)) {
        ++skipped;
        continue;
      }
      text += trajectory_record(t).dump();
      text += '\n';
      ++written;
    }
  }
  write_file_atomically(out_path, text, "--trajectories");
  std::printf("cudal2 export: %zu trajectory record(s) to %s (%zu turn(s) without a reply or a reward skipped)\n",
              written, out_path.c_str(), skipped);
  return 0;
}

}  // namespace cudal2::exporter
