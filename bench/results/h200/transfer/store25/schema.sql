-- cudal2 store, schema version 5
CREATE TABLE specs (
  hash       TEXT PRIMARY KEY NOT NULL,
  family     TEXT NOT NULL,
  text       TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE builds (
  id              INTEGER PRIMARY KEY,
  spec_hash       TEXT NOT NULL REFERENCES specs (hash),
  source_hash     TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'compile-error', 'timeout')),
  compile_seconds REAL NOT NULL,
  log             TEXT NOT NULL DEFAULT '',
  artifact_path   TEXT,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE runs (
  id          TEXT PRIMARY KEY NOT NULL,
  command     TEXT NOT NULL,
  started_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at TEXT
);
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
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), reward REAL, chain_us REAL,
  CHECK (status <> 'ok' OR median_us IS NOT NULL)
);
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
  updated_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (gpu, dtype, layout, m, n, k)
);
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
  created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
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
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
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
  claimed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (spec_hash, gpu, dtype, layout, m, n, k, mode)
);
CREATE INDEX builds_by_source ON builds (spec_hash, source_hash);
CREATE INDEX measurements_by_problem ON measurements (gpu, dtype, layout, m, n, k, spec_hash, mode);
CREATE INDEX llm_turns_by_spec ON llm_turns (spec_hash);
CREATE INDEX profiles_by_spec ON profiles (spec_hash, m, n, k);
PRAGMA application_id = 1668637746;
PRAGMA user_version = 5;
