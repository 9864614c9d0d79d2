#include "store/integrity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

#include "store/error.hpp"

namespace cudal2::store {

namespace {

[[noreturn]] void damaged(const std::string& path, const std::string& found) {
  throw StoreError(fmt::format(
      "cudal2 store '{}' is corrupt (SQLite: {}); nothing was read from or written to it: restore it from a copy, "
      "or salvage what is left with `sqlite3 '{}' .recover`",
      path, found, path));
}

}  // namespace

void require_intact(const sql::Db& db, Verify level) {
  static std::mutex mu;
  static std::set<std::pair<std::string, int>> intact;  // (file, level) found intact by this process
  std::error_code ec;
  auto file = std::filesystem::weakly_canonical(db.path(), ec).string();
  if (ec) file = db.path();
  {
    std::lock_guard<std::mutex> l(mu);
    if (intact.count({file, static_cast<int>(level)}) || intact.count({file, static_cast<int>(Verify::Full)})) return;
  }
  std::string found;
  try {
    // At most 5 problems: enough to say what is wrong without listing a whole broken index.
    sql::Stmt s(db, level == Verify::Full ? "PRAGMA integrity_check(5)" : "PRAGMA quick_check(5)");
    while (s.step()) found += (found.empty() ? "" : "; ") + s.text(0);
    // Its reports span lines ("*** in database main ***\n..."): the error is one line.
    std::replace(found.begin(), found.end(), '\n', ' ');
  } catch (const StoreError& e) {
    const int code = e.sqlite_code() & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) damaged(db.path(), sqlite3_errstr(code));
    throw;
  }
  if (found != "ok") damaged(db.path(), found);
  std::lock_guard<std::mutex> l(mu);
  intact.emplace(file, static_cast<int>(level));
}

}  // namespace cudal2::store
