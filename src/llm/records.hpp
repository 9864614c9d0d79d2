#pragma once
// What the LLM proposer and the profiler store beside the measurements (schema 3): one row per
// model turn in `llm_turns` (prompt, reply, extracted source, the candidate it became, its
// measurement and reward), and Nsight Compute metrics per (spec, GPU, problem) in `profiles`.
// One Records is one SQLite connection: use it from one thread at a time.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace cudal2::store::sql {
class Db;
}

namespace cudal2::llm {

// The store's name for a free-form candidate (evaluate_candidates: "source <fnv> <layout> <accum>"
// hashed), so a turn can be joined with its builds and measurements.
std::string free_spec_text(const std::string& source, Layout layout, Accum accum);
std::string free_spec_hash(const std::string& source, Layout layout, Accum accum);

struct TurnRow {
  std::int64_t id = 0;
  std::string run_id;   // the tuning run ("" when unknown)
  std::string episode;  // one conversation: a first prompt and its repair turns
  int turn = 0;         // 0: the first prompt; 1..: repair turns
  std::string kind;     // "propose" or "repair"
  std::string model, url;
  std::string dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string prompt_json = "[]";  // the messages sent (OpenAI format)
  std::string reply;               // the assistant's text ("" when none came)
  std::string error;               // client or extraction error ("" when a source was extracted)
  std::string source;              // the extracted kernel source
  std::string spec_hash;           // free_spec_hash(source, ...) ("" when no source)
  std::string status = "pending";  // the evaluation's outcome: "ok", a failure kind, or the error
  std::string detail;              // compiler/verifier message behind status
  std::optional<double> time_us, baseline_us, reward;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  double usd = 0, seconds = 0;
  std::string created_at, updated_at;
};

struct ProfileRow {
  std::int64_t id = 0;
  std::string spec_hash, gpu, dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string metrics_json = "{}";  // {"metric": value}
  std::string stalls_json = "[]";   // [["stall reason", share], ...] largest first
  std::string command;              // the ncu command line that produced it
  std::string created_at;
};

class Records {
 public:
  // Opens the store (creating and migrating it like store::Store::open).
  explicit Records(const std::string& db_path);
  // The store only read, never written (store/reader.hpp), checked to the last index: the write
  // calls fail.
  static Records open_to_read(const std::string& db_path);
  ~Records();
  Records(Records&&) noexcept;

  std::int64_t put_turn(const TurnRow& t);
  // Sets a turn's outcome (status, detail, times, reward).
  void set_outcome(std::int64_t id, const std::string& status, const std::string& detail, std::optional<double> time_us,
                   std::optional<double> baseline_us, std::optional<double> reward);
  std::vector<TurnRow> turns(const std::string& run_id = "") const;  // oldest first

  std::int64_t put_profile(const ProfileRow& p);
  std::optional<ProfileRow> latest_profile(const std::string& spec_hash, std::int64_t m, std::int64_t n,
                                           std::int64_t k) const;

  // The GPUs on which this spec is the store's best (table `best`) for the problem.
  std::vector<std::string> best_gpus(const std::string& spec_hash, const std::string& dtype, const std::string& layout,
                                     std::int64_t m, std::int64_t n, std::int64_t k) const;
  // The GPU of the newest ok measurement of this spec on the problem ("" when none).
  std::string measured_gpu(const std::string& spec_hash, const std::string& dtype, const std::string& layout,
                           std::int64_t m, std::int64_t n, std::int64_t k) const;

  // The compiler log of the newest failed build of a spec, or the newest failed measurement's
  // reason ("" when neither): what a repair prompt shows.
  std::string failure_detail(const std::string& spec_hash) const;

 private:
  Records() = default;
  std::unique_ptr<store::sql::Db> db_;
};

}  // namespace cudal2::llm
