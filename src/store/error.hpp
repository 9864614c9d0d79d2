#pragma once
// The one exception the store throws: callers (tuner, CLI) catch a single type and print what().
#include <stdexcept>
#include <string>

namespace cudal2::store {

class StoreError : public std::runtime_error {
 public:
  // sqlite_code: the extended SQLite result code behind the error, 0 when the store itself refused.
  explicit StoreError(const std::string& what, int sqlite_code = 0)
      : std::runtime_error(what), sqlite_code_(sqlite_code) {}
  int sqlite_code() const { return sqlite_code_; }

 private:
  int sqlite_code_;
};

}  // namespace cudal2::store
