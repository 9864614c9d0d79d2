#include "store/store.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace cudal2::store {

struct Store::Impl {
  explicit Impl(const std::string& path) : db(path) {}
  explicit Impl(sql::Db&& d) : db(std::move(d)) {}
  sql::Db db;
};

namespace {

constexpr std::string_view kMeasurementColumns =
    "spec_hash, gpu, gpu_json, dtype, layout, m, n, k, mode, timer, status, failure, median_us, p10_us, p90_us, "
    "min_us, samples_json, rel_err, baseline_json, run_id, n_samples, reward, chain_us";

// The journal mode the switch to WAL leaves. Two processes opening a fresh store at once both
// hold a read lock and ask for the exclusive lock the switch needs: SQLite answers one of them
// SQLITE_BUSY at once, without waiting in the busy handler (waiting could not end that deadlock),
// so the switch is retried here until the busy timeout (seen in the reliability suite: two tuners
// started together on one new store, one exited with "database stayed locked").
std::string switch_to_wal(const sql::Db& db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(Store::kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    try {
      sql::Stmt wal(db, "PRAGMA journal_mode = WAL");
      return wal.step() ? wal.text(0) : "";
    } catch (const StoreError& e) {
      if ((e.sqlite_code() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 * (attempt + 1), 50)));
  }
}

void set_pragmas(const sql::Db& db) {
  // WAL lets one writer and any number of readers in other processes proceed at once.
  const std::string mode = switch_to_wal(db);
  if (mode != "wal" && mode != "memory") {
    throw StoreError(
        fmt::format("cudal2 store '{}': cannot switch to WAL journal mode (got '{}'); a network or "
                    "read-only file system cannot host the store",
                    db.path(), mode));
  }
  // foreign_keys is off by default in SQLite and per connection. synchronous=FULL fsyncs each
  // commit: measurements cost seconds of GPU time each, so losing one to a power cut costs more
  // than the fsync.
  db.exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL");
}

void check_json(const sql::Db& db, std::string_view field, const std::string& text) {
  if (!nlohmann::json::accept(text)) {
    throw StoreError(fmt::format("cudal2 store '{}': {} is not valid JSON: {:.80}", db.path(), field, text));
  }
}

std::string samples_to_json(const sql::Db& db, const std::vector<double>& samples) {
  for (double s : samples) {
    // JSON has no NaN or infinity: nlohmann would write null and the row would not read back.
    if (!std::isfinite(s)) throw StoreError(fmt::format("cudal2 store '{}': non-finite sample {}", db.path(), s));
  }
  return nlohmann::json(samples).dump();
}

MeasurementRow read_measurement(const sql::Db& db, const sql::Stmt& s) {
  MeasurementRow r;
  int c = 0;
  r.id = s.int64(c++);
  r.spec_hash = s.text(c++);
  r.gpu = s.text(c++);
  r.gpu_json = s.text(c++);
  r.dtype = s.text(c++);
  r.layout = s.text(c++);
  r.m = s.int64(c++);
  r.n = s.int64(c++);
  r.k = s.int64(c++);
  r.mode = s.text(c++);
  r.timer = s.text(c++);
  r.status = s.text(c++);
  r.failure = s.text(c++);
  r.median_us = s.opt_real(c++);
  r.p10_us = s.opt_real(c++);
  r.p90_us = s.opt_real(c++);
  r.min_us = s.opt_real(c++);
  const std::string samples = s.text(c++);
  r.rel_err = s.opt_real(c++);
  r.baseline_json = s.text(c++);
  r.run_id = s.text(c++);
  c++;  // n_samples: derived from samples_json, kept as a column for SQL queries only
  r.reward = s.opt_real(c++);
  r.chain_us = s.opt_real(c++);
  r.created_at = s.text(c++);
  try {
    r.samples_us = nlohmann::json::parse(samples).get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(
        fmt::format("cudal2 store '{}': measurement {} has unreadable samples_json: {}", db.path(), r.id, e.what()));
  }
  return r;
}

BestRow read_best(const sql::Stmt& s) {
  return BestRow{s.text(0),  s.text(1), s.text(2), s.int64(3), s.int64(4),
                 s.int64(5), s.text(6), s.real(7), s.int64(8), s.text(9)};
}

constexpr std::string_view kBestSelect =
    "SELECT gpu, dtype, layout, m, n, k, spec_hash, median_us, measurement_id, updated_at FROM best ";

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  // Time for reading order, pid and randomness so two processes starting in the same second differ.
  return fmt::format("{}-{}-{:08x}", stamp, static_cast<long>(getpid()), std::random_device{}());
}

}  // namespace

ProblemKey key_of(const MeasurementRow& r) { return {r.gpu, r.dtype, r.layout, r.m, r.n, r.k, r.mode}; }

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const std::filesystem::path& path, Verify verify) {
  auto impl = std::make_unique<Impl>(path.string());
  const sql::Db& db = impl->db;
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  // Before anything writes: never turn someone else's file into WAL mode or add tables to it, and
  // never write into a damaged one.
  check_identity(db, kMigrations);
  require_intact(db, verify);
  set_pragmas(db);
  migrate(db, kMigrations);
  return Store(std::move(impl));
}

Store Store::open_to_read(const std::filesystem::path& path, Verify verify) {
  return Store(std::make_unique<Impl>(open_for_reading(path, verify).db));
}

const std::string& Store::path() const { return impl_->db.path(); }
int Store::schema_version() const { return user_version(impl_->db); }
int Store::latest_schema_version() { return static_cast<int>(kMigrations.size()); }

std::string Store::integrity_check() const {
  sql::Stmt s(impl_->db, "PRAGMA integrity_check");
  std::string out;
  while (s.step()) out += (out.empty() ? "" : "; ") + s.text(0);
  return out;
}

void Store::put_spec(const SpecRow& spec) {
  sql::Stmt(impl_->db, "INSERT OR IGNORE INTO specs (hash, family, text) VALUES (?, ?, ?)")
      .bind_all(spec.hash, spec.family, spec.text)
      .run();
}

std::optional<SpecRow> Store::get_spec(std::string_view hash) const {
  sql::Stmt s(impl_->db, "SELECT hash, family, text, created_at FROM specs WHERE hash = ?");
  s.bind_all(hash);
  if (!s.step()) return std::nullopt;
  return SpecRow{s.text(0), s.text(1), s.text(2), s.text(3)};
}

std::int64_t Store::put_build(const BuildRow& b) {
  sql::Stmt s(impl_->db,
              "INSERT INTO builds (spec_hash, source_hash, status, compile_seconds, log, artifact_path) "
              "VALUES (?, ?, ?, ?, ?, ?)");
  s.bind_all(b.spec_hash, b.source_hash, b.status, b.compile_seconds, b.log).bind_or_null(6, b.artifact_path).run();
  return sqlite3_last_insert_rowid(impl_->db.get());
}

std::optional<BuildRow> Store::find_build(std::string_view spec_hash, std::string_view source_hash) const {
  sql::Stmt s(impl_->db,
              "SELECT id, spec_hash, source_hash, status, compile_seconds, log, artifact_path, created_at FROM builds "
              "WHERE spec_hash = ? AND source_hash = ? ORDER BY status = 'ok' DESC, id DESC LIMIT 1");
  s.bind_all(spec_hash, source_hash);
  if (!s.step()) return std::nullopt;
  return BuildRow{s.int64(0), s.text(1), s.text(2), s.text(3), s.real(4), s.text(5), s.text(6), s.text(7)};
}

PutMeasurementResult Store::put_measurement(const MeasurementRow& m) { return put_measurements({m}).at(0); }

namespace {

void check_measurement(const sql::Db& db, const MeasurementRow& m) {
  check_json(db, "gpu_json", m.gpu_json);
  check_json(db, "baseline_json", m.baseline_json);
  samples_to_json(db, m.samples_us);
}

// One measurement row and its effect on best, inside the caller's transaction.
PutMeasurementResult insert_measurement(const sql::Db& db, const MeasurementRow& m) {
  const std::string samples = samples_to_json(db, m.samples_us);
  sql::Stmt ins(db, fmt::format("INSERT INTO measurements ({}) VALUES "
                                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                kMeasurementColumns));
  ins.bind_all(m.spec_hash, m.gpu, m.gpu_json, m.dtype, m.layout, m.m, m.n, m.k, m.mode, m.timer, m.status, m.failure,
               m.median_us, m.p10_us, m.p90_us, m.min_us, samples, m.rel_err, m.baseline_json)
      .bind_or_null(20, m.run_id)
      .bind(21, static_cast<std::int64_t>(m.samples_us.size()))
      .bind(22, m.reward)
      .bind(23, m.chain_us)
      .run();
  PutMeasurementResult out{sqlite3_last_insert_rowid(db.get()), false};

  // Only the steady-state device time ranks kernels; other modes and timers are kept for study.
  if (m.status == "ok" && m.mode == "offline" && m.timer == "graph") {
    sql::Stmt up(db,
                 "INSERT INTO best (gpu, dtype, layout, m, n, k, spec_hash, median_us, measurement_id) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (gpu, dtype, layout, m, n, k) DO UPDATE SET spec_hash = excluded.spec_hash, "
                 "median_us = excluded.median_us, measurement_id = excluded.measurement_id, "
                 "updated_at = excluded.updated_at WHERE excluded.median_us < best.median_us");
    up.bind_all(m.gpu, m.dtype, m.layout, m.m, m.n, m.k, m.spec_hash, m.median_us, out.id).run();
    out.new_best = sqlite3_changes(db.get()) > 0;  // 0 when the WHERE kept the old best
  }
  return out;
}

}  // namespace

std::vector<PutMeasurementResult> Store::put_measurements(const std::vector<MeasurementRow>& rows) {
  const sql::Db& db = impl_->db;
  for (const auto& m : rows) check_measurement(db, m);  // all refused before any is written
  std::vector<PutMeasurementResult> out;
  if (rows.empty()) return out;
  sql::Transaction t(db);
  for (const auto& m : rows) out.push_back(insert_measurement(db, m));
  t.commit();
  return out;
}

std::optional<MeasurementRow> Store::get_measurement(std::int64_t id) const {
  sql::Stmt s(impl_->db, fmt::format("SELECT id, {}, created_at FROM measurements WHERE id = ?", kMeasurementColumns));
  s.bind_all(id);
  if (!s.step()) return std::nullopt;
  return read_measurement(impl_->db, s);
}

bool Store::has_measurement(std::string_view spec_hash, const ProblemKey& key) const {
  sql::Stmt s(impl_->db,
              "SELECT 1 FROM measurements WHERE gpu = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? AND k = ? "
              "AND spec_hash = ? AND mode = ? LIMIT 1");
  s.bind_all(key.gpu, key.dtype, key.layout, key.m, key.n, key.k, spec_hash, key.mode);
  return s.step();
}

std::vector<MeasurementRow> Store::list_measurements(const ProblemKey& key) const {
  sql::Stmt s(impl_->db, fmt::format("SELECT id, {}, created_at FROM measurements WHERE gpu = ? AND dtype = ? AND "
                                     "layout = ? AND m = ? AND n = ? AND k = ? AND mode = ? ORDER BY id",
                                     kMeasurementColumns));
  s.bind_all(key.gpu, key.dtype, key.layout, key.m, key.n, key.k, key.mode);
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(read_measurement(impl_->db, s));
  return out;
}

std::vector<std::pair<std::string, double>> Store::top_specs(const ProblemKey& key, std::string_view timer,
                                                             int limit) const {
  sql::Stmt s(impl_->db,
              "SELECT spec_hash, MIN(median_us) AS t FROM measurements WHERE gpu = ? AND dtype = ? AND layout = ? "
              "AND m = ? AND n = ? AND k = ? AND mode = ? AND timer = ? AND status = 'ok' AND median_us IS NOT NULL "
              "GROUP BY spec_hash ORDER BY t, spec_hash LIMIT ?");
  s.bind_all(key.gpu, key.dtype, key.layout, key.m, key.n, key.k, key.mode, timer, static_cast<std::int64_t>(limit));
  std::vector<std::pair<std::string, double>> out;
  while (s.step()) out.emplace_back(s.text(0), s.real(1));
  return out;
}

std::optional<BestRow> Store::get_best(const ProblemKey& key) const {
  sql::Stmt s(impl_->db,
              std::string(kBestSelect) + "WHERE gpu = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? AND k = ?");
  s.bind_all(key.gpu, key.dtype, key.layout, key.m, key.n, key.k);
  if (!s.step()) return std::nullopt;
  return read_best(s);
}

std::vector<BestRow> Store::list_best(std::string_view gpu) const {
  sql::Stmt s(impl_->db, std::string(kBestSelect) + "WHERE gpu = ? ORDER BY dtype, layout, m, n, k");
  s.bind_all(gpu);
  std::vector<BestRow> out;
  while (s.step()) out.push_back(read_best(s));
  return out;
}

std::vector<std::string> Store::gpus_with_best() const {
  sql::Stmt s(impl_->db, "SELECT DISTINCT gpu FROM best ORDER BY gpu");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<BestWithSpec> Store::best_with_specs(std::string_view dtype, std::string_view layout,
                                                 std::string_view gpu) const {
  sql::Stmt s(impl_->db,
              "SELECT b.gpu, b.dtype, b.layout, b.m, b.n, b.k, b.spec_hash, b.median_us, b.measurement_id, "
              "b.updated_at, s.family, s.text FROM best b JOIN specs s ON s.hash = b.spec_hash "
              "WHERE b.dtype = ? AND b.layout = ? AND (? = '' OR b.gpu = ?)");
  s.bind_all(dtype, layout, gpu, gpu);
  std::vector<BestWithSpec> out;
  while (s.step()) out.push_back({read_best(s), s.text(10), s.text(11)});
  return out;
}

std::vector<TimedSpec> Store::timed_specs(std::string_view gpu, std::string_view mode) const {
  sql::Stmt s(impl_->db, R"sql(
      SELECT m.dtype, m.layout, m.m, m.n, m.k, s.text, s.family, m.median_us, m.baseline_json, m.run_id, m.chain_us
      FROM measurements m JOIN specs s ON s.hash = m.spec_hash
      WHERE m.gpu = ? AND m.status = 'ok' AND m.mode = ? AND m.timer = 'graph'
        AND m.median_us IS NOT NULL
      ORDER BY m.id)sql");
  s.bind_all(gpu, mode);
  std::vector<TimedSpec> out;
  while (s.step())
    out.push_back({s.text(0), s.text(1), s.int64(2), s.int64(3), s.int64(4), s.text(5), s.text(6), s.real(7), s.text(8),
                   s.text(9), s.opt_real(10)});
  return out;
}

std::vector<std::string> Store::gpus() const {
  sql::Stmt s(impl_->db, "SELECT DISTINCT gpu FROM measurements ORDER BY gpu");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::string Store::begin_run(std::string_view command) {
  std::string id = new_run_id();
  sql::Stmt(impl_->db, "INSERT INTO runs (id, command) VALUES (?, ?)").bind_all(id, command).run();
  return id;
}

void Store::finish_run(std::string_view run_id) {
  sql::Stmt(impl_->db, "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?")
      .bind_all(run_id)
      .run();
  if (sqlite3_changes(impl_->db.get()) == 0) {
    throw StoreError(fmt::format("cudal2 store '{}': finish_run: no run '{}'", path(), run_id));
  }
}

std::optional<RunRow> Store::get_run(std::string_view run_id) const {
  sql::Stmt s(impl_->db, "SELECT id, command, started_at, finished_at FROM runs WHERE id = ?");
  s.bind_all(run_id);
  if (!s.step()) return std::nullopt;
  return RunRow{s.text(0), s.text(1), s.text(2), s.opt_text(3)};
}

std::int64_t Store::put_turn(const TurnRow& t) {
  sql::Stmt s(impl_->db,
              "INSERT INTO llm_turns (run_id, episode, turn, kind, model, url, dtype, layout, m, n, k, "
              "prompt_json, reply, error, source, spec_hash, status, detail, time_us, baseline_us, reward, "
              "prompt_tokens, completion_tokens, usd, seconds) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(t.run_id, t.episode, t.turn, t.kind, t.model, t.url, t.dtype, t.layout, t.m, t.n, t.k, t.prompt_json,
             t.reply, t.error, t.source, t.spec_hash, t.status, t.detail, t.time_us, t.baseline_us, t.reward,
             t.prompt_tokens, t.completion_tokens, t.usd, t.seconds)
      .run();
  return sqlite3_last_insert_rowid(impl_->db.get());
}

void Store::set_turn_outcome(std::int64_t id, std::string_view status, std::string_view detail,
                             std::optional<double> time_us, std::optional<double> baseline_us,
                             std::optional<double> reward) {
  sql::Stmt s(impl_->db,
              "UPDATE llm_turns SET status = ?, detail = ?, time_us = ?, baseline_us = ?, reward = ?, "
              "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?");
  s.bind_all(status, detail, time_us, baseline_us, reward, id).run();
}

std::vector<TurnRow> Store::turns(std::string_view run_id) const {
  sql::Stmt s(impl_->db,
              "SELECT id, run_id, episode, turn, kind, model, url, dtype, layout, m, n, k, prompt_json, reply, "
              "error, source, spec_hash, status, detail, time_us, baseline_us, reward, prompt_tokens, "
              "completion_tokens, usd, seconds, created_at, updated_at FROM llm_turns "
              "WHERE (? = '' OR run_id = ?) ORDER BY id");
  s.bind_all(run_id, run_id);
  std::vector<TurnRow> out;
  while (s.step()) {
    TurnRow t;
    int c = 0;
    t.id = s.int64(c++), t.run_id = s.text(c++), t.episode = s.text(c++), t.turn = int(s.int64(c++));
    t.kind = s.text(c++), t.model = s.text(c++), t.url = s.text(c++), t.dtype = s.text(c++), t.layout = s.text(c++);
    t.m = s.int64(c++), t.n = s.int64(c++), t.k = s.int64(c++);
    t.prompt_json = s.text(c++), t.reply = s.text(c++), t.error = s.text(c++), t.source = s.text(c++);
    t.spec_hash = s.text(c++), t.status = s.text(c++), t.detail = s.text(c++);
    t.time_us = s.opt_real(c++), t.baseline_us = s.opt_real(c++), t.reward = s.opt_real(c++);
    t.prompt_tokens = s.int64(c++), t.completion_tokens = s.int64(c++), t.usd = s.real(c++), t.seconds = s.real(c++);
    t.created_at = s.text(c++), t.updated_at = s.text(c++);
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t Store::put_profile(const ProfileRow& p) {
  sql::Stmt s(impl_->db,
              "INSERT INTO profiles (spec_hash, gpu, dtype, layout, m, n, k, metrics_json, stalls_json, command) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(p.spec_hash, p.gpu, p.dtype, p.layout, p.m, p.n, p.k, p.metrics_json, p.stalls_json, p.command).run();
  return sqlite3_last_insert_rowid(impl_->db.get());
}

std::optional<ProfileRow> Store::latest_profile(std::string_view spec_hash, std::int64_t m, std::int64_t n,
                                                std::int64_t k) const {
  sql::Stmt s(impl_->db,
              "SELECT id, spec_hash, gpu, dtype, layout, m, n, k, metrics_json, stalls_json, command, created_at "
              "FROM profiles WHERE spec_hash = ? AND m = ? AND n = ? AND k = ? ORDER BY id DESC LIMIT 1");
  s.bind_all(spec_hash, m, n, k);
  if (!s.step()) return std::nullopt;
  ProfileRow p;
  int c = 0;
  p.id = s.int64(c++), p.spec_hash = s.text(c++), p.gpu = s.text(c++), p.dtype = s.text(c++), p.layout = s.text(c++);
  p.m = s.int64(c++), p.n = s.int64(c++), p.k = s.int64(c++);
  p.metrics_json = s.text(c++), p.stalls_json = s.text(c++), p.command = s.text(c++), p.created_at = s.text(c++);
  return p;
}

std::vector<std::string> Store::best_gpus(std::string_view spec_hash, const ProblemKey& key) const {
  sql::Stmt s(impl_->db,
              "SELECT gpu FROM best WHERE spec_hash = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? "
              "AND k = ? ORDER BY gpu");
  s.bind_all(spec_hash, key.dtype, key.layout, key.m, key.n, key.k);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::string Store::measured_gpu(std::string_view spec_hash, const ProblemKey& key) const {
  sql::Stmt s(impl_->db,
              "SELECT gpu FROM measurements WHERE spec_hash = ? AND dtype = ? AND layout = ? AND m = ? "
              "AND n = ? AND k = ? AND status = 'ok' ORDER BY id DESC LIMIT 1");
  s.bind_all(spec_hash, key.dtype, key.layout, key.m, key.n, key.k);
  return s.step() ? s.text(0) : std::string();
}

std::string Store::failure_detail(std::string_view spec_hash) const {
  {
    sql::Stmt s(impl_->db, "SELECT log FROM builds WHERE spec_hash = ? AND status <> 'ok' ORDER BY id DESC LIMIT 1");
    s.bind_all(spec_hash);
    if (s.step() && !s.text(0).empty()) return s.text(0);
  }
  sql::Stmt s(impl_->db,
              "SELECT status, failure, m, n, k FROM measurements WHERE spec_hash = ? AND status <> 'ok' "
              "ORDER BY id DESC LIMIT 1");
  s.bind_all(spec_hash);
  if (s.step())
    return fmt::format("{} on M={} N={} K={}: {}", s.text(0), s.int64(2), s.int64(3), s.int64(4), s.text(1));
  return "";
}

}  // namespace cudal2::store
