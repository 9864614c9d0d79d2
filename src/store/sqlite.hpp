#pragma once
// A thin RAII layer over the SQLite C API, so the store's code has no manual finalize/close paths
// and every failing call becomes a StoreError naming the database file and the statement.
// Values only ever reach SQL through bound parameters.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/error.hpp"

namespace cudal2::store::sql {

// Message: "cudal2 store '<path>': <problem>: <sqlite errmsg> (sqlite code N) in: <sql>".
// NOTADB and CORRUPT get the words a user needs ("not a cudal2 database", "corrupt").
[[noreturn]] void fail(const std::string& path, int code, std::string_view errmsg, std::string_view sql);

// How a Db opens its file. ReadOnly never creates, writes or changes the file (nor its journal
// mode); Immutable also promises SQLite that nobody changes it meanwhile, which is what lets a
// store in WAL mode be read from a read-only file system (SQLite cannot create its -shm there).
enum class Access { ReadWrite, ReadOnly, Immutable };

// The URI that opens path read-only (ReadOnly) or as immutable, for ATTACH on a Db.
std::string read_uri(const std::string& path, Access access);

class Db {
 public:
  // Opens (creating if missing, for ReadWrite) without reading the file: SQLite only reads on the
  // first statement. `label` names the database in messages ("": path).
  explicit Db(const std::string& path, Access access = Access::ReadWrite, const std::string& label = "");
  sqlite3* get() const { return db_.get(); }
  const std::string& path() const { return path_; }
  // Runs a script of statements that take no parameters (migrations, pragmas, BEGIN/COMMIT).
  void exec(std::string_view sql) const;
  [[noreturn]] void fail(int code, std::string_view sql) const;

 private:
  struct Close {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Close> db_;
  std::string path_;
};

class Stmt {
 public:
  Stmt(const Db& db, std::string_view sql);

  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<double>& v);
  Stmt& bind(int i, std::nullptr_t);
  // "" binds NULL: optional references (a measurement without a run) must be NULL, not "".
  Stmt& bind_or_null(int i, std::string_view v) { return v.empty() ? bind(i, nullptr) : bind(i, v); }
  // Binds the arguments to parameters 1..N in order.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  bool step();  // true: a row is ready; false: done
  void run();   // steps to completion of a statement that returns no rows

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::optional<double> opt_real(int col) const;
  std::string text(int col) const;  // "" for NULL
  std::optional<std::string> opt_text(int col) const;

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  const Db* db_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

// BEGIN IMMEDIATE: takes the write lock up front, so waiting for another writer goes through
// busy_timeout instead of failing at the first write with SQLITE_BUSY (a deferred transaction
// that upgrades from read to write cannot wait). Rolls back unless commit() was reached.
class Transaction {
 public:
  explicit Transaction(const Db& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  const Db& db_;
  bool done_ = false;
};

}  // namespace cudal2::store::sql
