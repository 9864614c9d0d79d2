-- cudal2 store, schema version 1
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
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
CREATE INDEX builds_by_source ON builds (spec_hash, source_hash);
CREATE INDEX measurements_by_problem ON measurements (gpu, dtype, layout, m, n, k, spec_hash, mode);
PRAGMA application_id = 1668637746;
PRAGMA user_version = 1;
