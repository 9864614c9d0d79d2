#include "store/schema.hpp"

#include <fmt/format.h>

namespace cudal2::store {

namespace {

std::int64_t pragma_int(const sql::Db& db, std::string_view pragma) {
  sql::Stmt s(db, pragma);
  return s.step() ? s.int64(0) : 0;
}

[[noreturn]] void too_new(const sql::Db& db, int version, int latest) {
  throw StoreError(
      fmt::format("cudal2 store '{}': created by a newer cudal2 (schema {} > {}); open it with that version", db.path(),
                  version, latest));
}

// Timestamps are UTC ISO-8601 text with milliseconds: readable in the sqlite3 shell and sortable.
#define CUDAL2_NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

// Schema version 1.
constexpr std::string_view kV1 = R"sql(
-- specs: every kernel spec ever proposed. hash is KernelSpec::hash() of text (the canonical
-- form), so the row is the spec itself and everything else refers to a spec by its hash.
CREATE TABLE specs (
  hash       TEXT PRIMARY KEY NOT NULL,
  family     TEXT NOT NULL,
  text       TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(
);

-- builds: every compile attempt, failures included, so a resumed tuner neither recompiles a
-- source that already failed nor loses the log saying why. source_hash keys the compile cache
-- (specs differing only in runtime knobs share a source); artifact_path is set only when ok.
CREATE TABLE builds (
  id              INTEGER PRIMARY KEY,
  spec_hash       TEXT NOT NULL REFERENCES specs (hash),
  source_hash     TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'compile-error', 'timeout')),
  compile_seconds REAL NOT NULL,
  log             TEXT NOT NULL DEFAULT '',
  artifact_path   TEXT,
  created_at      TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(
);
CREATE INDEX builds_by_source ON builds (spec_hash, source_hash);

-- runs: one row per cudal2 invocation that writes measurements, so numbers from one run (the
-- only ones that may be compared with each other) can be picked out. finished_at stays NULL for
-- a run that crashed or was killed.
CREATE TABLE runs (
  id          TEXT PRIMARY KEY NOT NULL,
  command     TEXT NOT NULL,
  started_at  TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(,
  finished_at TEXT
);

-- measurements: append-only; one row per (spec, problem, mode, timer) timing, failed ones too
-- (status is 'ok' or the failure kind, failure the reason). Times are per call in microseconds
-- and NULL when nothing was timed; samples_json keeps every sample, not only the summary.
-- gpu is the device name best is kept per; gpu_json what was seen of it (SMs, clocks, driver).
-- baseline_json: the baselines' times from the same run, which a speedup is computed against.
CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  spec_hash     TEXT NOT NULL REFERENCES specs (hash),
  gpu           TEXT NOT NULL,
  gpu_json      TEXT NOT NULL DEFAULT '{}',
  dtype         TEXT NOT NULL,
  layout        TEXT NOT NULL,
  m             INTEGER NOT NULL CHECK (m > 0),
  n             INTEGER NOT NULL CHECK (n > 0),
  k             INTEGER NOT NULL CHECK (k > 0),
  mode          TEXT NOT NULL CHECK (mode IN ('offline', 'server')),
  timer         TEXT NOT NULL CHECK (timer IN ('graph', 'eager', 'host')),
  status        TEXT NOT NULL,
  failure       TEXT NOT NULL DEFAULT '',
  median_us     REAL,
  p10_us        REAL,
  p90_us        REAL,
  min_us        REAL,
  n_samples     INTEGER NOT NULL DEFAULT 0,
  samples_json  TEXT NOT NULL DEFAULT '[]',
  rel_err       REAL,
  baseline_json TEXT NOT NULL DEFAULT '{}',
  run_id        TEXT REFERENCES runs (id),
  created_at    TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(,
  CHECK (status <> 'ok' OR median_us IS NOT NULL)
);
-- Leads with the problem key (list and lookup per problem); spec_hash and mode at the end make
-- the resume check (has_measurement) an index-only probe.
CREATE INDEX measurements_by_problem ON measurements (gpu, dtype, layout, m, n, k, spec_hash, mode);

-- best: the fastest ok offline graph-timer measurement per GPU and problem, maintained in the
-- same transaction as the measurement that set it; what `cudal2 export` turns into the table.
CREATE TABLE best (
  gpu            TEXT NOT NULL,
  dtype          TEXT NOT NULL,
  layout         TEXT NOT NULL,
  m              INTEGER NOT NULL,
  n              INTEGER NOT NULL,
  k              INTEGER NOT NULL,
  spec_hash      TEXT NOT NULL REFERENCES specs (hash),
  median_us      REAL NOT NULL,
  measurement_id INTEGER NOT NULL REFERENCES measurements (id),
  updated_at     TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(,
  PRIMARY KEY (gpu, dtype, layout, m, n, k)
);

PRAGMA application_id = 1668637746;
)sql";

// Schema version 2: the reward of each measurement (search/reward.hpp), NULL for older rows.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE measurements ADD COLUMN reward REAL;
)sql";

// Schema version 3 (the LLM proposer): the LLM proposer's turns and the profiler's metrics.
// llm_turns: one row per model call: the messages sent, the reply, the extracted source and the
// free-form candidate it became (spec_hash, as in specs), then its outcome once evaluated.
// profiles: Nsight Compute metrics of one spec on one problem (src/llm/profile.hpp).
constexpr std::string_view kV3 = R"sql(
CREATE TABLE llm_turns (
  id                INTEGER PRIMARY KEY,
  run_id            TEXT NOT NULL DEFAULT '',
  episode           TEXT NOT NULL,
  turn              INTEGER NOT NULL,
  kind              TEXT NOT NULL,
  model             TEXT NOT NULL DEFAULT '',
  url               TEXT NOT NULL DEFAULT '',
  dtype             TEXT NOT NULL,
  layout            TEXT NOT NULL,
  m                 INTEGER NOT NULL,
  n                 INTEGER NOT NULL,
  k                 INTEGER NOT NULL,
  prompt_json       TEXT NOT NULL,
  reply             TEXT NOT NULL DEFAULT '',
  error             TEXT NOT NULL DEFAULT '',
  source            TEXT NOT NULL DEFAULT '',
  spec_hash         TEXT NOT NULL DEFAULT '',
  status            TEXT NOT NULL DEFAULT 'pending',
  detail            TEXT NOT NULL DEFAULT '',
  time_us           REAL,
  baseline_us       REAL,
  reward            REAL,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  usd               REAL NOT NULL DEFAULT 0,
  seconds           REAL NOT NULL DEFAULT 0,
  created_at        TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(,
  updated_at        TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(
);
CREATE INDEX llm_turns_by_spec ON llm_turns (spec_hash);
CREATE TABLE profiles (
  id           INTEGER PRIMARY KEY,
  spec_hash    TEXT NOT NULL,
  gpu          TEXT NOT NULL,
  dtype        TEXT NOT NULL,
  layout       TEXT NOT NULL,
  m            INTEGER NOT NULL,
  n            INTEGER NOT NULL,
  k            INTEGER NOT NULL,
  metrics_json TEXT NOT NULL DEFAULT '{}',
  stalls_json  TEXT NOT NULL DEFAULT '[]',
  command      TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(
);
CREATE INDEX profiles_by_spec ON profiles (spec_hash, m, n, k);
)sql";

// Schema version 4: work claims (store/claims.hpp), so tuners sharing a store never measure the
// same (spec, GPU, problem, mode) twice. host and pid name the claiming process.
constexpr std::string_view kV4 = R"sql(
CREATE TABLE claims (
  spec_hash  TEXT NOT NULL,
  gpu        TEXT NOT NULL,
  dtype      TEXT NOT NULL,
  layout     TEXT NOT NULL,
  m          INTEGER NOT NULL,
  n          INTEGER NOT NULL,
  k          INTEGER NOT NULL,
  mode       TEXT NOT NULL,
  host       TEXT NOT NULL,
  pid        INTEGER NOT NULL,
  claimed_at TEXT NOT NULL DEFAULT )sql" CUDAL2_NOW R"sql(,
  PRIMARY KEY (spec_hash, gpu, dtype, layout, m, n, k, mode)
);
)sql";

// Schema version 5: the chain timer's median of a measurement (an unrelated kernel before every
// call), on the offline graph row of the same candidate, shape and job; NULL where it was not timed
// chained. timer's CHECK keeps its three values: a chain time is a column, not a row, so that every
// query over measurements keeps its meaning.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE measurements ADD COLUMN chain_us REAL;
)sql";

#undef CUDAL2_NOW

static_assert(kApplicationId == 1668637746, "keep migration 1's PRAGMA application_id in step");

}  // namespace

const std::array<std::string_view, 5> kMigrations = {kV1, kV2, kV3, kV4, kV5};

int user_version(const sql::Db& db) { return static_cast<int>(pragma_int(db, "PRAGMA user_version")); }

void check_identity(const sql::Db& db, std::span<const std::string_view> migrations) {
  // The first read of the file: a non-SQLite file fails here with SQLITE_NOTADB. One statement, so
  // one snapshot: read one by one, a second process migrating a fresh file between the reads showed
  // its tables without its application_id ("not a cudal2 database" for two tuners started at once).
  sql::Stmt s(db,
              "SELECT (SELECT application_id FROM pragma_application_id()), (SELECT user_version FROM "
              "pragma_user_version()), (SELECT count(*) FROM sqlite_master)");
  std::int64_t app_id = 0, objects = 0;
  int version = 0;
  if (s.step()) {
    app_id = s.int64(0);
    version = static_cast<int>(s.int64(1));
    objects = s.int64(2);
  }
  const int latest = static_cast<int>(migrations.size());
  if (app_id != kApplicationId && !(app_id == 0 && version == 0 && objects == 0)) {
    throw StoreError(
        fmt::format("cudal2 store '{}': not a cudal2 database (a SQLite database with application_id "
                    "{:#x} and {} schema objects, not {:#x})",
                    db.path(), app_id, objects, kApplicationId));
  }
  if (version > latest) {
    too_new(db, version, latest);
  }
}

void migrate(const sql::Db& db, std::span<const std::string_view> migrations) {
  const int latest = static_cast<int>(migrations.size());
  while (user_version(db) < latest) {
    sql::Transaction t(db);
    // Re-read under the write lock: another process may have migrated while we waited for it.
    const int now = user_version(db);
    if (now > latest) {
      too_new(db, now, latest);
    }
    if (now == latest) return;
    db.exec(migrations[now]);
    // PRAGMA takes no bound parameters; the number is our own counter, not input.
    db.exec(fmt::format("PRAGMA user_version = {}", now + 1));
    t.commit();
  }
}

}  // namespace cudal2::store
