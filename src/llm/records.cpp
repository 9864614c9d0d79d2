#include "llm/records.hpp"

#include <fmt/format.h>

#include "codegen/spec.hpp"
#include "store/reader.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace cudal2::llm {

std::string free_spec_text(const std::string& source, Layout layout, Accum accum) {
  return fmt::format("source {:016x} {} {}", fnv1a64(source), to_string(layout), to_string(accum));
}
std::string free_spec_hash(const std::string& source, Layout layout, Accum accum) {
  return fmt::format("{:016x}", fnv1a64(free_spec_text(source, layout, accum)));
}

Records::Records(const std::string& db_path) {
  { auto s = store::Store::open(db_path); }  // create / migrate
  db_ = std::make_unique<store::sql::Db>(db_path);
  sqlite3_busy_timeout(db_->get(), store::Store::kBusyTimeoutMs);
}
Records Records::open_to_read(const std::string& db_path) {
  Records r;
  r.db_ = std::make_unique<store::sql::Db>(store::open_for_reading(db_path, store::Verify::Full).db);
  return r;
}
Records::~Records() = default;
Records::Records(Records&&) noexcept = default;

std::int64_t Records::put_turn(const TurnRow& t) {
  store::sql::Stmt s(*db_,
                     "INSERT INTO llm_turns (run_id, episode, turn, kind, model, url, dtype, layout, m, n, k, "
                     "prompt_json, reply, error, source, spec_hash, status, detail, time_us, baseline_us, reward, "
                     "prompt_tokens, completion_tokens, usd, seconds) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(t.run_id, t.episode, t.turn, t.kind, t.model, t.url, t.dtype, t.layout, t.m, t.n, t.k, t.prompt_json,
             t.reply, t.error, t.source, t.spec_hash, t.status, t.detail, t.time_us, t.baseline_us, t.reward,
             t.prompt_tokens, t.completion_tokens, t.usd, t.seconds)
      .run();
  return sqlite3_last_insert_rowid(db_->get());
}

void Records::set_outcome(std::int64_t id, const std::string& status, const std::string& detail,
                          std::optional<double> time_us, std::optional<double> baseline_us,
                          std::optional<double> reward) {
  store::sql::Stmt s(*db_,
                     "UPDATE llm_turns SET status = ?, detail = ?, time_us = ?, baseline_us = ?, reward = ?, "
                     "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?");
  s.bind_all(status, detail, time_us, baseline_us, reward, id).run();
}

std::vector<TurnRow> Records::turns(const std::string& run_id) const {
  store::sql::Stmt s(*db_,
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

std::int64_t Records::put_profile(const ProfileRow& p) {
  store::sql::Stmt s(
      *db_,
      "INSERT INTO profiles (spec_hash, gpu, dtype, layout, m, n, k, metrics_json, stalls_json, command) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(p.spec_hash, p.gpu, p.dtype, p.layout, p.m, p.n, p.k, p.metrics_json, p.stalls_json, p.command).run();
  return sqlite3_last_insert_rowid(db_->get());
}

std::optional<ProfileRow> Records::latest_profile(const std::string& spec_hash, std::int64_t m, std::int64_t n,
                                                  std::int64_t k) const {
  store::sql::Stmt s(
      *db_,
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

std::vector<std::string> Records::best_gpus(const std::string& spec_hash, const std::string& dtype,
                                            const std::string& layout, std::int64_t m, std::int64_t n,
                                            std::int64_t k) const {
  store::sql::Stmt s(*db_,
                     "SELECT gpu FROM best WHERE spec_hash = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? "
                     "AND k = ? ORDER BY gpu");
  s.bind_all(spec_hash, dtype, layout, m, n, k);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::string Records::measured_gpu(const std::string& spec_hash, const std::string& dtype, const std::string& layout,
                                  std::int64_t m, std::int64_t n, std::int64_t k) const {
  store::sql::Stmt s(*db_,
                     "SELECT gpu FROM measurements WHERE spec_hash = ? AND dtype = ? AND layout = ? AND m = ? "
                     "AND n = ? AND k = ? AND status = 'ok' ORDER BY id DESC LIMIT 1");
  s.bind_all(spec_hash, dtype, layout, m, n, k);
  return s.step() ? s.text(0) : std::string();
}

std::string Records::failure_detail(const std::string& spec_hash) const {
  {
    store::sql::Stmt s(*db_, "SELECT log FROM builds WHERE spec_hash = ? AND status <> 'ok' ORDER BY id DESC LIMIT 1");
    s.bind_all(spec_hash);
    if (s.step() && !s.text(0).empty()) return s.text(0);
  }
  store::sql::Stmt s(*db_,
                     "SELECT status, failure, m, n, k FROM measurements WHERE spec_hash = ? AND status <> 'ok' "
                     "ORDER BY id DESC LIMIT 1");
  s.bind_all(spec_hash);
  if (s.step())
    return fmt::format("{} on M={} N={} K={}: {}", s.text(0), s.int64(2), s.int64(3), s.int64(4), s.text(1));
  return "";
}

}  // namespace cudal2::llm
