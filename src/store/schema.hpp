#pragma once
// The store's schema as an ordered list of migrations. Version N of the schema is the state after
// script N-1 of kMigrations has run; PRAGMA user_version holds N. To change the schema, append a
// script (never edit a released one): databases at any older version then migrate on open.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "store/sqlite.hpp"

namespace cudal2::store {

// PRAGMA application_id of every cudal2 database ("cud2"), so a SQLite file that belongs to
// something else is refused rather than migrated into.
inline constexpr std::int32_t kApplicationId = 0x63756432;

extern const std::array<std::string_view, 5> kMigrations;

// Refuses a file that is not a cudal2 database (or a fresh, empty one) and a schema newer than
// `migrations` knows, before writing anything to it. Reads only.
void check_identity(const sql::Db& db, std::span<const std::string_view> migrations);

// Applies the migrations the database lacks, each in its own transaction together with the
// user_version bump, so a crash mid-migration leaves the previous version intact. Safe when
// several processes open the same fresh file at once: the version is re-read under the lock.
void migrate(const sql::Db& db, std::span<const std::string_view> migrations);

int user_version(const sql::Db& db);

}  // namespace cudal2::store
