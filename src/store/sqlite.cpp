#include "store/sqlite.hpp"

#include <fmt/format.h>

#include <cctype>

namespace cudal2::store::sql {

namespace {

// Migration scripts span many lines; one line keeps the message readable.
std::string one_line(std::string_view sql) {
  std::string out;
  bool space = false;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  constexpr std::size_t kMax = 200;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

}  // namespace

void fail(const std::string& path, int code, std::string_view errmsg, std::string_view sql) {
  std::string_view problem = "SQLite error";
  switch (code & 0xff) {
    case SQLITE_NOTADB:
      problem = "not a cudal2 database (not a SQLite file)";
      break;
    case SQLITE_CORRUPT:
      problem = "database file is corrupt";
      break;
    case SQLITE_BUSY:
      problem = "database stayed locked by another connection past the busy timeout";
      break;
    default:
      break;
  }
  std::string msg = fmt::format("cudal2 store '{}': {}: {} (sqlite code {})", path, problem, errmsg, code);
  if (!sql.empty()) msg += " in: " + one_line(sql);
  throw StoreError(msg, code);
}

namespace {

// A file: URI for path (percent-encoded), with the query SQLite reads its read-only modes from.
std::string uri_of(const std::string& path, std::string_view query) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out + "?" + std::string(query);
}

}  // namespace

std::string read_uri(const std::string& path, Access access) {
  return uri_of(path, access == Access::Immutable ? "immutable=1" : "mode=ro");
}

Db::Db(const std::string& path, Access access, const std::string& label) : path_(label.empty() ? path : label) {
  sqlite3* raw = nullptr;
  // URIs are enabled so that ATTACH can name a database read-only; a plain path that happens to
  // start with "file:" would then be taken for a URI, so it is made explicitly relative.
  const std::string plain = path.starts_with("file:") ? "./" + path : path;
  int rc = SQLITE_OK;
  if (access == Access::ReadWrite) {
    rc = sqlite3_open_v2(plain.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
  } else {
    const std::string uri = read_uri(path, access);
    rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  }
  db_.reset(raw);  // a handle comes back even on failure and must be closed
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sql::fail(path_, rc, "cannot open: " + msg, "");
  }
  sqlite3_extended_result_codes(raw, 1);
}

void Db::fail(int code, std::string_view sql) const { sql::fail(path_, code, sqlite3_errmsg(db_.get()), sql); }

void Db::exec(std::string_view sql) const {
  std::string text(sql);  // sqlite3_exec wants a terminated string
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    sql::fail(path_, sqlite3_extended_errcode(db_.get()), msg, sql);
  }
}

Stmt::Stmt(const Db& db, std::string_view sql) : db_(&db) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  stmt_.reset(raw);
  if (rc != SQLITE_OK) db.fail(rc, sql);
}

namespace {
std::string_view sql_of(sqlite3_stmt* s) {
  const char* t = sqlite3_sql(s);
  return t ? t : "";
}
}  // namespace

Stmt& Stmt::bind(int i, std::int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_.get(), i, v); rc != SQLITE_OK) db_->fail(rc, sql_of(stmt_.get()));
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(stmt_.get(), i, v); rc != SQLITE_OK) db_->fail(rc, sql_of(stmt_.get()));
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  // SQLITE_TRANSIENT: the caller's string may be a temporary that dies before step().
  int rc = sqlite3_bind_text64(stmt_.get(), i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_->fail(rc, sql_of(stmt_.get()));
  return *this;
}

Stmt& Stmt::bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind(i, nullptr); }

Stmt& Stmt::bind(int i, std::nullptr_t) {
  if (int rc = sqlite3_bind_null(stmt_.get(), i); rc != SQLITE_OK) db_->fail(rc, sql_of(stmt_.get()));
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, sql_of(stmt_.get()));
}

void Stmt::run() {
  while (step()) {
  }
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
std::int64_t Stmt::int64(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
double Stmt::real(int col) const { return sqlite3_column_double(stmt_.get(), col); }

std::optional<double> Stmt::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

std::string Stmt::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), col));
  if (!p) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col))};
}

std::optional<std::string> Stmt::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

Transaction::Transaction(const Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  // A failed COMMIT can leave the transaction open; never leave it for the next call to inherit.
  if (!done_ && !sqlite3_get_autocommit(db_.get())) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace cudal2::store::sql
