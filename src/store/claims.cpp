#include "store/claims.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>

#include "store/store.hpp"

namespace cudal2::store {

namespace {

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

// The store opened as every command opens it (created, migrated to the schema with claims, checked).
std::string opened(const std::filesystem::path& path) {
  Store::open(path);
  return path.string();
}

bool process_alive(std::int64_t pid) { return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

WorkClaims::WorkClaims(const std::filesystem::path& path, std::int64_t owner_pid)
    : db_(opened(path)), host_(host_name()), pid_(owner_pid > 0 ? owner_pid : getpid()) {
  sqlite3_busy_timeout(db_.get(), Store::kBusyTimeoutMs);
  // A claim is an intent that lives as long as its process: one lost to a power cut is not
  // missed. So its commits need no fsync of their own (in WAL mode NORMAL commits are still atomic
  // and ordered); the measurements' commits (FULL) sync them along. Tuners sharing a store take
  // turns at the store's lock, and an fsync per claim made them wait on each other.
  db_.exec("PRAGMA synchronous = NORMAL");
}

namespace {

std::vector<bool> is_open(const std::vector<WorkClaims::State>& states) {
  std::vector<bool> out;
  out.reserve(states.size());
  for (const auto s : states) out.push_back(s == WorkClaims::State::Open);
  return out;
}

}  // namespace

std::vector<bool> WorkClaims::claim(const std::vector<WorkKey>& keys) { return is_open(take(keys, true)); }

std::vector<WorkClaims::State> WorkClaims::states(const std::vector<WorkKey>& keys) { return take(keys, false); }

std::vector<bool> WorkClaims::open(const std::vector<WorkKey>& keys) { return is_open(take(keys, false)); }

std::vector<WorkClaims::State> WorkClaims::take(const std::vector<WorkKey>& keys, bool claim) {
  std::vector<State> out;
  out.reserve(keys.size());
  sql::Transaction t(db_);
  // The GPU names a key without one (any GPU) is looked up under: every one the store holds.
  std::vector<std::string> all_gpus;
  sql::Stmt list(db_, "SELECT DISTINCT gpu FROM measurements");
  while (list.step()) all_gpus.push_back(list.text(0));
  auto is_measured = [&](const WorkKey& key) {
    for (const auto& gpu : key.gpu.empty() ? all_gpus : std::vector<std::string>{key.gpu}) {
      sql::Stmt measured(db_,
                         "SELECT 1 FROM measurements WHERE gpu = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? "
                         "AND k = ? AND spec_hash = ? AND mode = ? LIMIT 1");
      measured.bind_all(gpu, key.dtype, key.layout, key.m, key.n, key.k, key.spec_hash, key.mode);
      if (measured.step()) return true;
    }
    return false;
  };
  for (const auto& key : keys) {
    if (is_measured(key)) {
      out.push_back(State::Measured);
      continue;
    }
    sql::Stmt held(db_,
                   "SELECT host, pid, (julianday('now') - julianday(claimed_at)) * 24 FROM claims WHERE "
                   "spec_hash = ? AND gpu = ? AND dtype = ? AND layout = ? AND m = ? AND n = ? AND k = ? AND mode = ?");
    held.bind_all(key.spec_hash, key.gpu, key.dtype, key.layout, key.m, key.n, key.k, key.mode);
    if (held.step()) {
      const std::string host = held.text(0);
      const std::int64_t pid = held.int64(1);
      const bool mine = host == host_ && pid == pid_;
      const bool gone = (host == host_ && !process_alive(pid)) || held.real(2) > 12.0;
      if (!mine && !gone) {
        out.push_back(State::Held);
        continue;
      }
    }
    if (claim)
      sql::Stmt(db_,
                "INSERT OR REPLACE INTO claims (spec_hash, gpu, dtype, layout, m, n, k, mode, host, pid) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .bind_all(key.spec_hash, key.gpu, key.dtype, key.layout, key.m, key.n, key.k, key.mode, host_, pid_)
          .run();
    out.push_back(State::Open);
  }
  t.commit();
  return out;
}

}  // namespace cudal2::store
