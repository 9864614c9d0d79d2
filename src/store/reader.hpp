#pragma once
// Opening a store only to read it (show, export, report, merge's sources, a replay source). A
// reader used to open it as a writer does: it upgraded an older schema in place, switched the file
// to WAL, turned a 0-byte file into an empty store, and could not read a store on a read-only file
// or mount at all. Here nothing is ever written to the file: it is opened read-only (as immutable
// on a read-only file system, where SQLite cannot create a WAL store's -shm file), checked like
// any store, and a store of an older schema is read through a private in-memory copy migrated to
// this build's schema.
#include <filesystem>
#include <string>
#include <string_view>

#include "store/integrity.hpp"
#include "store/sqlite.hpp"

namespace cudal2::store {

struct Reading {
  sql::Db db;             // the file read-only, or the migrated in-memory copy
  sql::Access access;     // how the file itself was opened (ReadOnly or Immutable)
  bool migrated = false;  // db is an in-memory copy (the file's schema is older)
};

// Throws StoreError naming path (and `what`, e.g. "--replay", when given) for a missing file, a
// directory, an empty file, a file that is not a cudal2 store, a damaged one (`verify`) and one of
// a newer schema.
Reading open_for_reading(const std::filesystem::path& path, Verify verify = Verify::Full, std::string_view what = "");

// open_for_reading's checks alone, for a store another program reads (a replay source, the report
// generator's input): no migrated copy is made.
void check_store(const std::filesystem::path& path, Verify verify, std::string_view what = "");

// The same checks of an existing file that a command is about to write into as a store, made
// read-only (before anything else happens), except that an empty file or a fresh SQLite database
// (another process is creating the store) passes.
void check_before_writing(const std::filesystem::path& path, std::string_view what);

}  // namespace cudal2::store
