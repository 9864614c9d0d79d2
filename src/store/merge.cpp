#include "store/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace cudal2::store {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSrc = "merge_src";

std::string sql_name(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

struct Table {
  std::string name;
  std::vector<std::string> columns;  // without the row id
  bool row_id = false;               // INTEGER PRIMARY KEY id: append unless an equal row exists
};

// OUT's tables in creation order, text-keyed ones first (rows of the others refer to them).
std::vector<Table> tables_of(const sql::Db& db) {
  std::vector<Table> keyed, with_id;
  sql::Stmt list(db,
                 "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                 "ORDER BY rowid");
  while (list.step()) {
    Table t{list.text(0), {}, false};
    if (t.name == "best") continue;    // derived from measurements: recomputed
    if (t.name == "claims") continue;  // a source's tuners' intents, not results
    sql::Stmt info(db, fmt::format("PRAGMA main.table_info({})", sql_name(t.name)));
    std::vector<std::pair<std::string, std::string>> pk;  // name, type
    std::vector<std::string> cols;
    while (info.step()) {
      cols.push_back(info.text(1));
      if (info.int64(5) > 0) pk.emplace_back(info.text(1), info.text(2));
    }
    t.row_id = pk.size() == 1 && pk[0].second == "INTEGER";
    for (const auto& c : cols)
      if (!(t.row_id && c == pk[0].first)) t.columns.push_back(c);
    (t.row_id ? with_id : keyed).push_back(std::move(t));
  }
  keyed.insert(keyed.end(), with_id.begin(), with_id.end());
  return keyed;
}

bool source_has_table(const sql::Db& db, const std::string& name) {
  sql::Stmt s(db, fmt::format("SELECT 1 FROM {}.sqlite_master WHERE type = 'table' AND name = ?", kSrc));
  s.bind_all(name);
  return s.step();
}

std::int64_t scalar(const sql::Db& db, const std::string& q) {
  sql::Stmt s(db, q);
  return s.step() ? s.int64(0) : 0;
}

struct Source {
  bool has_rows = false;  // false: an empty file (nothing to merge)
  sql::Access access = sql::Access::ReadOnly;
};

// Identity, integrity and schema of a source, read without writing (store/reader.hpp): a source is
// never upgraded in place; the columns an older schema lacks take their defaults (merge below).
Source prepare_source(const fs::path& src) {
  std::error_code ec;
  if (fs::is_regular_file(src, ec) && fs::file_size(src, ec) == 0 && !ec) return {};
  return {true, open_for_reading(src, Verify::Full).access};  // errors name this source, not OUT
}

// The columns of table `name` in the attached source.
std::vector<std::string> source_columns(const sql::Db& db, const std::string& name) {
  sql::Stmt info(db, fmt::format("PRAGMA {}.table_info({})", kSrc, sql_name(name)));
  std::vector<std::string> out;
  while (info.step()) out.push_back(info.text(1));
  return out;
}

}  // namespace

std::vector<MergeStats> merge_stores(const fs::path& out, const std::vector<fs::path>& sources,
                                     const std::string& command) {
  for (const auto& src : sources) {
    if (!fs::is_regular_file(src)) throw StoreError(fmt::format("cudal2 merge: no store '{}'", src.string()));
    if (fs::exists(out) && fs::equivalent(src, out))
      throw StoreError(fmt::format("cudal2 merge: '{}' is the output store itself", src.string()));
  }
  if (fs::exists(out) && !fs::is_regular_file(out))
    throw StoreError(fmt::format("cudal2 merge: '{}' is not a store file", out.string()));
  // Every source is checked before OUT is created or written.
  std::vector<Source> prepared;
  for (const auto& src : sources) prepared.push_back(prepare_source(src));
  auto store = Store::open(out, Verify::Full);  // creates, checks and migrates OUT
  const std::string run = store.begin_run(command);
  sql::Db db(out.string());
  sqlite3_busy_timeout(db.get(), Store::kBusyTimeoutMs);
  db.exec("PRAGMA foreign_keys = ON");
  const auto tables = tables_of(db);

  std::vector<MergeStats> stats;
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& src = sources[i];
    MergeStats st;
    st.source = src.string();
    if (!prepared[i].has_rows) {
      stats.push_back(std::move(st));
      continue;
    }
    // Read-only: merging from a store never writes to it.
    sql::Stmt(db, fmt::format("ATTACH DATABASE ? AS {}", kSrc))
        .bind_all(sql::read_uri(fs::absolute(src).string(), prepared[i].access))
        .run();
    try {
      sql::Transaction t(db);
      const std::int64_t last_measurement = scalar(db, "SELECT COALESCE(MAX(id), 0) FROM main.measurements");
      for (const auto& tb : tables) {
        if (!source_has_table(db, tb.name)) continue;
        const auto theirs = source_columns(db, tb.name);
        std::string cols, picked, same;
        for (const auto& c : tb.columns) {
          if (std::find(theirs.begin(), theirs.end(), c) == theirs.end()) continue;  // an older schema's source
          const std::string q = sql_name(c);
          cols += (cols.empty() ? "" : ", ") + q;
          picked += (picked.empty() ? "s." : ", s.") + q;
          same += (same.empty() ? "o." : " AND o.") + q + " IS s." + q;
        }
        const std::string T = sql_name(tb.name);
        std::string q;
        if (tb.row_id) {
          // Equal in every column but the id: the same row, already merged (or merged twice).
          q = fmt::format(
              "INSERT INTO main.{0} ({1}) SELECT {2} FROM {3}.{0} AS s WHERE NOT EXISTS "
              "(SELECT 1 FROM main.{0} AS o WHERE {4}) ORDER BY s.rowid",
              T, cols, picked, kSrc, same);
        } else {
          q = fmt::format("INSERT OR IGNORE INTO main.{0} ({1}) SELECT {2} FROM {3}.{0} AS s ORDER BY s.rowid", T, cols,
                          picked, kSrc);
        }
        sql::Stmt(db, q).run();
        st.added[tb.name] = sqlite3_changes(db.get());
        if (tb.name == "runs") {
          // A run unfinished here that the source saw finish (the same run, copied mid-way before).
          sql::Stmt(db, fmt::format("UPDATE main.runs SET finished_at = (SELECT s.finished_at FROM {0}.runs AS s "
                                    "WHERE s.id = runs.id) WHERE finished_at IS NULL AND EXISTS (SELECT 1 FROM "
                                    "{0}.runs AS s WHERE s.id = runs.id AND s.finished_at IS NOT NULL)",
                                    kSrc))
              .run();
        }
      }
      // best: the store's rule (Store::put_measurement) over the rows just appended. SQLite takes
      // the bare columns of a MIN() aggregate from the row holding the minimum.
      sql::Stmt(db,
                "INSERT INTO main.best (gpu, dtype, layout, m, n, k, spec_hash, median_us, measurement_id) "
                "SELECT gpu, dtype, layout, m, n, k, spec_hash, MIN(median_us), id FROM main.measurements "
                "WHERE id > ? AND status = 'ok' AND mode = 'offline' AND timer = 'graph' AND median_us IS NOT NULL "
                "GROUP BY gpu, dtype, layout, m, n, k "
                "ON CONFLICT (gpu, dtype, layout, m, n, k) DO UPDATE SET spec_hash = excluded.spec_hash, "
                "median_us = excluded.median_us, measurement_id = excluded.measurement_id, "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE excluded.median_us < best.median_us")
          .bind_all(last_measurement)
          .run();
      st.best_changed = sqlite3_changes(db.get());
      t.commit();
    } catch (...) {
      db.exec(fmt::format("DETACH DATABASE {}", kSrc));
      throw;
    }
    db.exec(fmt::format("DETACH DATABASE {}", kSrc));
    stats.push_back(std::move(st));
  }
  store.finish_run(run);
  return stats;
}

}  // namespace cudal2::store
