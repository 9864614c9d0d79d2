#pragma once
// The results store: specs, builds, measurements, the best kernel per (GPU, problem), and runs,
// in one SQLite file. Several processes may share the file (a tuner writing, `cudal2 report`
// reading): WAL journal, busy_timeout. Every write is one transaction committed before the call
// returns, so a crash (kill -9 included) loses at most the call in flight.
// A Store is one connection: use it from one thread at a time; open one per process.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/error.hpp"
#include "store/integrity.hpp"

namespace cudal2::store {

// Fields named created_at / updated_at / started_at / finished_at are set by the store (UTC,
// "YYYY-MM-DDTHH:MM:SS.sssZ") and ignored on write; so is every row id.

struct SpecRow {
  std::string hash;  // KernelSpec::hash()
  std::string family;
  std::string text;  // KernelSpec::text()
  std::string created_at;
  bool operator==(const SpecRow&) const = default;
};

struct BuildRow {
  std::int64_t id = 0;
  std::string spec_hash;
  std::string source_hash;
  std::string status;  // "ok", "compile-error" or "timeout"
  double compile_seconds = 0;
  std::string log;
  std::string artifact_path;  // "" when the build produced none
  std::string created_at;
  bool operator==(const BuildRow&) const = default;
};

struct MeasurementRow {
  std::int64_t id = 0;
  std::string spec_hash;  // must be in specs (put_spec first)
  std::string gpu;
  std::string gpu_json = "{}";  // JSON text
  std::string dtype;
  std::string layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string mode;    // "offline" or "server"
  std::string timer;   // "graph", "eager" or "host"
  std::string status;  // "ok" or the failure kind
  std::string failure;
  std::optional<double> median_us, p10_us, p90_us, min_us;  // required when status is "ok"
  std::vector<double> samples_us;                           // finite; n_samples is its size
  std::optional<double> rel_err;
  std::string baseline_json = "{}";  // JSON text
  std::string run_id;                // "" for none, else an id from begin_run
  // search::reward() of this row (docs/tuning.md, "Reward"); none for rows written before schema
  // 2 or by a caller that scores nothing.
  std::optional<double> reward;
  // The same candidate's chain-timer median in the same job and mode (graph rows of a job timed
  // with --timers ...,chain; schema 5; `cudal2 export` reads the offline one: in server mode the
  // chain sample is the one-call graph's); none otherwise.
  std::optional<double> chain_us;
  std::string created_at;
  bool operator==(const MeasurementRow&) const = default;
};

struct BestRow {
  std::string gpu, dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string spec_hash;
  double median_us = 0;
  std::int64_t measurement_id = 0;
  std::string updated_at;
  bool operator==(const BestRow&) const = default;
};

struct RunRow {
  std::string id;
  std::string command;
  std::string started_at;
  std::optional<std::string> finished_at;  // none: still running, or it died
  bool operator==(const RunRow&) const = default;
};

// One problem as the store keys its rows: the GPU, the data type and layout (the store's words:
// to_string of Accum and Layout), the shape and the mode ("offline" or "server"). One value instead
// of seven loose arguments, so that two strings swapped at a call site cannot go unnoticed.
struct ProblemKey {
  std::string gpu;
  std::string dtype;
  std::string layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string mode = "offline";
  bool operator==(const ProblemKey&) const = default;
};

// The key of a measurement's problem.
ProblemKey key_of(const MeasurementRow& r);

// One model turn of the LLM proposer (table llm_turns, schema 3): the prompt, the reply, the
// extracted source and the candidate it became, then its outcome once evaluated.
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
  std::string spec_hash;           // the free-form candidate's spec hash ("" when no source)
  std::string status = "pending";  // the evaluation's outcome: "ok", a failure kind, or the error
  std::string detail;              // compiler/verifier message behind status
  std::optional<double> time_us, baseline_us, reward;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  double usd = 0, seconds = 0;
  std::string created_at, updated_at;
};

// Nsight Compute metrics of one spec on one GPU and problem (table profiles, schema 3).
struct ProfileRow {
  std::int64_t id = 0;
  std::string spec_hash, gpu, dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string metrics_json = "{}";  // {"metric": value}
  std::string stalls_json = "[]";   // [["stall reason", share], ...] largest first
  std::string command;              // the ncu command line that produced it
  std::string created_at;
};

// A best row with its spec's family and text: what an LLM prompt shows as a reference.
struct BestWithSpec {
  BestRow best;
  std::string family, text;
};

// One ok graph-timer measurement with a time (offline, or the mode timed_specs names), with its
// spec: what `cudal2 export` ranks.
struct TimedSpec {
  std::string dtype, layout;
  std::int64_t m = 0, n = 0, k = 0;
  std::string spec_text, family;
  double median_us = 0;
  std::string baseline_json, run_id;
  std::optional<double> chain_us;  // the same job's chain-timer median, where it was timed chained
};

struct PutMeasurementResult {
  std::int64_t id = 0;    // the new measurement's id
  bool new_best = false;  // it became the best for its GPU and problem
};

class Store {
 public:
  static constexpr int kBusyTimeoutMs = 5000;

  // Creates the file or opens it, checks it is intact (`verify`, store/integrity.hpp; by default to
  // the last index: a tuner wrote its rows into a store whose index was out of step with its
  // table, which only the full check sees; it runs once per file and process) and migrates
  // it to the newest schema. Throws StoreError naming the path for a file that is not a cudal2
  // database, a damaged one, or one whose schema is newer than this build knows.
  static Store open(const std::filesystem::path& path, Verify verify = Verify::Full);
  // An existing store, only to read it (show): nothing is written to the file, not even a schema
  // upgrade (store/reader.hpp). Checked to the last index by default. The write calls fail.
  static Store open_to_read(const std::filesystem::path& path, Verify verify = Verify::Full);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::string& path() const;
  int schema_version() const;
  static int latest_schema_version();
  // "ok", or SQLite's description of what is damaged.
  std::string integrity_check() const;

  // Inserts the spec unless its hash is already there (specs are immutable values).
  void put_spec(const SpecRow& spec);
  std::optional<SpecRow> get_spec(std::string_view hash) const;

  std::int64_t put_build(const BuildRow& build);
  // The ok build of this source if there is one (a timeout need not repeat), else the newest.
  std::optional<BuildRow> find_build(std::string_view spec_hash, std::string_view source_hash) const;

  // Inserts the measurement and, when it is status "ok", mode "offline", timer "graph" and faster
  // than the current best for its (gpu, dtype, layout, m, n, k) (or there is none), makes it the
  // best; both in one transaction.
  PutMeasurementResult put_measurement(const MeasurementRow& m);
  // The same for several rows (one judge job's) in one transaction: one commit, one fsync. Tuners
  // sharing a store commit one after another, so a commit per row made them wait on each other's
  // fsyncs instead of dividing the work.
  std::vector<PutMeasurementResult> put_measurements(const std::vector<MeasurementRow>& rows);
  std::optional<MeasurementRow> get_measurement(std::int64_t id) const;
  // Whether any measurement (failed ones included) of the spec on the problem exists: what a
  // resumed run skips.
  bool has_measurement(std::string_view spec_hash, const ProblemKey& key) const;

  // Every measurement of one problem in one mode (all specs, timers and statuses), oldest first:
  // what a resumed tuner tells its policy it already knows.
  std::vector<MeasurementRow> list_measurements(const ProblemKey& key) const;

  // The fastest distinct specs for one problem: each spec's best median among its "ok"
  // measurements of the key's mode and this timer, fastest first, at most `limit`.
  std::vector<std::pair<std::string, double>> top_specs(const ProblemKey& key, std::string_view timer, int limit) const;

  // The best of the problem. Only offline graph rows become best (put_measurement), so key.mode
  // is not consulted.
  std::optional<BestRow> get_best(const ProblemKey& key) const;
  // Ordered by dtype, layout, m, n, k.
  std::vector<BestRow> list_best(std::string_view gpu) const;
  // The GPUs that have a best row, sorted (export picks one of them).
  std::vector<std::string> gpus_with_best() const;
  // Every best row of a data type and layout with its spec, on one GPU ("": every GPU).
  std::vector<BestWithSpec> best_with_specs(std::string_view dtype, std::string_view layout,
                                            std::string_view gpu) const;
  // Every ok graph-timer measurement with a time on the GPU in `mode` (offline; server: L2 flushed,
  // idle gaps), with its spec, oldest first.
  std::vector<TimedSpec> timed_specs(std::string_view gpu, std::string_view mode = "offline") const;

  // What the LLM proposer records (llm/records.hpp).
  std::int64_t put_turn(const TurnRow& t);
  // Sets a turn's outcome (status, detail, times, reward).
  void set_turn_outcome(std::int64_t id, std::string_view status, std::string_view detail,
                        std::optional<double> time_us, std::optional<double> baseline_us, std::optional<double> reward);
  std::vector<TurnRow> turns(std::string_view run_id = "") const;  // oldest first; "": every run
  std::int64_t put_profile(const ProfileRow& p);
  // The newest profile of the spec on the shape (any GPU).
  std::optional<ProfileRow> latest_profile(std::string_view spec_hash, std::int64_t m, std::int64_t n,
                                           std::int64_t k) const;
  // The GPUs on which this spec is the best for the problem. Across GPUs: key.gpu and key.mode
  // are not consulted.
  std::vector<std::string> best_gpus(std::string_view spec_hash, const ProblemKey& key) const;
  // The GPU of the newest ok measurement of this spec on the problem ("" when none); across GPUs
  // and modes like best_gpus.
  std::string measured_gpu(std::string_view spec_hash, const ProblemKey& key) const;
  // The compiler log of the newest failed build of a spec, or the newest failed measurement's
  // reason ("" when neither): what a repair prompt shows.
  std::string failure_detail(std::string_view spec_hash) const;

  // The GPU names measurements are stored under, sorted.
  std::vector<std::string> gpus() const;

  // Records a run and returns its id, unique across processes and machines.
  std::string begin_run(std::string_view command);
  // Throws StoreError for an unknown id.
  void finish_run(std::string_view run_id);
  std::optional<RunRow> get_run(std::string_view run_id) const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudal2::store
