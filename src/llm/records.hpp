#pragma once
// What the LLM proposer and the profiler store beside the measurements (schema 3): one row per
// model turn in `llm_turns` (prompt, reply, extracted source, the candidate it became, its
// measurement and reward), and Nsight Compute metrics per (spec, GPU, problem) in `profiles`.
// The queries are the store's (store::Store); Records names them in the LLM's terms.
// One Records is one store connection: use it from one thread at a time.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/problem.hpp"
#include "store/store.hpp"

namespace cudal2::llm {

// The store's name for a free-form candidate (evaluate_candidates: "source <fnv> <layout> <accum>"
// hashed), so a turn can be joined with its builds and measurements.
std::string free_spec_text(const std::string& source, Layout layout, Accum accum);
std::string free_spec_hash(const std::string& source, Layout layout, Accum accum);

// The rows are the store's (store/store.hpp): the store owns the tables and their SQL.
using TurnRow = store::TurnRow;
using ProfileRow = store::ProfileRow;

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
  explicit Records(store::Store db) : db_(std::move(db)) {}
  store::Store db_;
};

}  // namespace cudal2::llm
