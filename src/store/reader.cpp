#include "store/reader.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <optional>
#include <system_error>

#include "store/error.hpp"
#include "store/schema.hpp"
#include "store/store.hpp"

namespace cudal2::store {

namespace {

namespace fs = std::filesystem;

std::string named(std::string_view what, const std::string& path) {
  return what.empty() ? fmt::format("'{}'", path) : fmt::format("{} '{}'", what, path);
}

// Whether this process may not write beside the file: then SQLite cannot make the -shm file a
// WAL store's reader needs, and only an immutable open reads it.
bool cannot_write_beside(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return ::access(dir.c_str(), W_OK) != 0;
}

// The identity check is the first read of the file: a WAL store whose -shm cannot be created
// fails it with SQLITE_CANTOPEN, and is then opened as immutable.
sql::Access first_read(sql::Db& db, const fs::path& path) {
  try {
    check_identity(db, kMigrations);
    return sql::Access::ReadOnly;
  } catch (const StoreError& e) {
    if ((e.sqlite_code() & 0xff) != SQLITE_CANTOPEN || !cannot_write_beside(path)) throw;
  }
  db = sql::Db(path.string(), sql::Access::Immutable);
  check_identity(db, kMigrations);
  return sql::Access::Immutable;
}

enum class Purpose { Read, Check, CheckBeforeWriting };

// open_for_reading; for a check only, no migrated copy; before writing, nullopt for an empty file
// or database.
std::optional<Reading> open_checked(const fs::path& path, Verify verify, std::string_view what, Purpose purpose) {
  const bool fresh_ok = purpose == Purpose::CheckBeforeWriting;
  const std::string p = path.string();
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw StoreError(fmt::format("{}: {}", named(what, p), ec.message()));  // too long, a loop of links, ...
  if (!fs::exists(st)) throw StoreError(fmt::format("no store {}", named(what, p)));
  if (!fs::is_regular_file(st)) throw StoreError(fmt::format("{} is not a store file", named(what, p)));
  if (fs::file_size(path, ec) == 0 && !ec) {
    if (fresh_ok) return std::nullopt;
    throw StoreError(fmt::format("{} is an empty file, not a cudal2 store", named(what, p)));
  }
  sql::Db db(p, sql::Access::ReadOnly, p);
  sqlite3_busy_timeout(db.get(), Store::kBusyTimeoutMs);
  sql::Access access = sql::Access::ReadOnly;
  try {
    access = first_read(db, path);
    sqlite3_busy_timeout(db.get(), Store::kBusyTimeoutMs);
    require_intact(db, verify);
  } catch (const StoreError& e) {
    if (what.empty()) throw;
    throw StoreError(fmt::format("{}: {}", what, e.what()), e.sqlite_code());
  }
  const int version = user_version(db);
  if (version == 0 && fresh_ok) return std::nullopt;
  if (version == 0)
    throw StoreError(fmt::format("{} holds no cudal2 store (an empty SQLite database)", named(what, p)));
  if (version >= static_cast<int>(kMigrations.size()) || purpose != Purpose::Read)
    return Reading{std::move(db), access, false};
  // An older schema: read a migrated copy, never the file upgraded in place.
  sql::Db copy(":memory:", sql::Access::ReadWrite, p);
  sqlite3_backup* b = sqlite3_backup_init(copy.get(), "main", db.get(), "main");
  if (!b) copy.fail(sqlite3_errcode(copy.get()), "backup of the store into memory");
  const int rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) copy.fail(rc, "backup of the store into memory");
  migrate(copy, kMigrations);
  return Reading{std::move(copy), access, true};
}

}  // namespace

Reading open_for_reading(const fs::path& path, Verify verify, std::string_view what) {
  return std::move(*open_checked(path, verify, what, Purpose::Read));
}

void check_store(const fs::path& path, Verify verify, std::string_view what) {
  open_checked(path, verify, what, Purpose::Check);
}

void check_before_writing(const fs::path& path, std::string_view what) {
  open_checked(path, Verify::Full, what, Purpose::CheckBeforeWriting);
}

}  // namespace cudal2::store
