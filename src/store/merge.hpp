#pragma once
// `cudal2 merge --db OUT --from A.db --from B.db`: one store from the stores of several machines
// (a campaign split into shards, docs/multi-gpu.md).
//
// Every table of the schema is merged, so tables added by later migrations come along without
// changes here:
//   tables keyed by text (specs, runs)     INSERT OR IGNORE: a spec hash or a run id means the
//                                          same row everywhere (run ids are unique across
//                                          machines); a run unfinished in OUT takes the source's
//                                          finished_at
//   tables with a row id (measurements,    a source row is appended unless OUT already holds a
//   builds, llm turns, profiles, ...)      row equal in every column but the id, so merging the
//                                          same source twice adds nothing
//   best                                   not copied: recomputed from the appended measurements
//                                          by the store's own rule (fastest ok offline graph time)
// Measurements keep their run_id, so each number still names the run (and machine's command)
// that produced it; the merge itself is recorded as a run of OUT. Each source is merged in one
// transaction: a failure leaves OUT as it was before that source.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudal2::store {

struct MergeStats {
  std::string source;
  std::map<std::string, std::int64_t> added;  // table -> rows added
  std::int64_t best_changed = 0;              // problems whose best kernel the source improved
};

// Merges each source into `out` (created when missing). A source must exist and be a cudal2
// store; one at an older schema is migrated first (as opening it with cudal2 would). Throws
// StoreError for a source that is missing, not a cudal2 store, newer than this build, or the
// output itself. `command` is recorded as the merge's run.
std::vector<MergeStats> merge_stores(const std::filesystem::path& out,
                                     const std::vector<std::filesystem::path>& sources,
                                     const std::string& command = "merge");

}  // namespace cudal2::store
