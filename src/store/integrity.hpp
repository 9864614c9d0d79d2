#pragma once
// Whether a store file is intact, asked of SQLite before a command trusts it. A damaged store read
// as if it were whole gave silent wrong output (an export with half its entries, a tuner that
// re-measured what the damaged index hid and wrote into the damage); now it is refused with an
// error naming the file.
#include <string>

#include "store/sqlite.hpp"

namespace cudal2::store {

// Quick: SQLite's quick_check (every page's structure, O(size)): when a store is opened to be
// written. Full: integrity_check (also every index against its table): before export and merge,
// which read the whole store. Each file is checked once per process and level.
enum class Verify { Quick, Full };

// Throws StoreError naming db's file and the first problems SQLite found when it is damaged.
void require_intact(const sql::Db& db, Verify level);

}  // namespace cudal2::store
