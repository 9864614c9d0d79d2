#pragma once
// Work claims: how tuners sharing one store divide the work. Before measuring, a tuner claims each
// (spec, GPU, problem, mode) it is about to measure, in one transaction; a key already measured,
// or claimed by another tuner that is still alive, is not given, so two tuners on one store never
// measure the same key twice (they used to measure, and store, everything twice). A claim is an
// intent, not a result: the measurement row settles the key, and a claim whose process is gone
// (killed, crashed: the same host and the pid no longer runs) or older than 12 hours is taken over.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace cudal2::store {

struct WorkKey {
  // gpu "": whatever GPU the judge has (a tuner without a local GPU, whose judge replays
  // recorded results, cannot know its name before the first result): claimed under "", and
  // measured when the store holds a row of any GPU.
  std::string spec_hash, gpu, dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string mode;
};

class WorkClaims {
 public:
  // The store at path, opened (created, migrated, checked) as Store::open does. owner_pid: the
  // claiming process, 0 for this one (tests name another).
  explicit WorkClaims(const std::filesystem::path& path, std::int64_t owner_pid = 0);
  // For each key, whether this process now holds it (it had no measurement and no live claim of
  // another process). One transaction.
  std::vector<bool> claim(const std::vector<WorkKey>& keys);
  // Where a key stands, without claiming anything: what a tuner plans its round from. Held: another
  // live process claimed it and has not measured it yet (a tuner waits for it rather than leave,
  // so that work a claimer dies with is still done).
  enum class State { Open, Measured, Held };
  std::vector<State> states(const std::vector<WorkKey>& keys);
  // For each key, whether claim() would give it now (states() is Open).
  std::vector<bool> open(const std::vector<WorkKey>& keys);

 private:
  std::vector<State> take(const std::vector<WorkKey>& keys, bool claim);
  sql::Db db_;
  std::string host_;
  std::int64_t pid_;
};

}  // namespace cudal2::store
