// A store shared and a store damaged: work claims between tuners (store/claims.hpp) and the
// integrity check every command runs before trusting a file (store/integrity.hpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "store/claims.hpp"
#include "store/merge.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

using namespace cudal2::store;
using cudal2::testing::TempDir;
namespace fs = std::filesystem;

namespace {

WorkKey key(const std::string& spec, std::int64_t m) { return {spec, "GPU X", "f32", "nn", m, 64, 64, "offline"}; }

MeasurementRow measured(const std::string& spec, std::int64_t m) {
  MeasurementRow r;
  r.spec_hash = spec, r.gpu = "GPU X", r.dtype = "f32", r.layout = "nn";
  r.m = m, r.n = 64, r.k = 64, r.mode = "offline", r.timer = "graph", r.status = "ok";
  r.median_us = r.p10_us = r.p90_us = r.min_us = 10.0 + static_cast<double>(m);
  r.samples_us = {10.0};
  return r;
}

// A process that stays alive until killed: the other tuner.
pid_t sleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "<no StoreError>";
}

// A store with enough rows that its measurements index spans several pages, closed (WAL folded in).
fs::path filled_store(const TempDir& dir, const std::string& name) {
  const auto path = dir / name;
  auto s = Store::open(path);
  s.put_spec({"a", "tiny", "text of a", ""});
  for (int m = 1; m <= 400; ++m) s.put_measurement(measured("a", m));
  return path;
}

// Overwrites the root page of the measurements index with garbage.
void wreck_index(const fs::path& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = 'measurements_by_problem'", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int root = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(root - 1) * 4096 + 8);
  const std::string junk(4000, '\x5a');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

}  // namespace

TEST(WorkClaims, TwoTunersNeverGetTheSameKey) {
  TempDir dir;
  const auto path = dir / "s.db";
  const pid_t other = sleeper();
  WorkClaims mine(path), theirs(path, other);
  const std::vector<WorkKey> keys{key("a", 64), key("b", 64), key("a", 128)};
  EXPECT_EQ(theirs.claim({keys[0], keys[1]}), (std::vector<bool>{true, true}));
  EXPECT_EQ(mine.claim(keys), (std::vector<bool>{false, false, true}));
  // Claiming again what one holds is harmless; the other's stay the other's.
  EXPECT_EQ(mine.claim(keys), (std::vector<bool>{false, false, true}));
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  // The other tuner is gone (kill -9): its claims are taken over on resume.
  EXPECT_EQ(mine.claim(keys), (std::vector<bool>{true, true, true}));
}

TEST(WorkClaims, AMeasuredKeyIsNotClaimed) {
  TempDir dir;
  const auto path = dir / "s.db";
  {
    auto s = Store::open(path);
    s.put_spec({"a", "tiny", "text of a", ""});
    s.put_measurement(measured("a", 64));
  }
  WorkClaims mine(path);
  EXPECT_EQ(mine.claim({key("a", 64), key("a", 128)}), (std::vector<bool>{false, true}));
  // Without a GPU name (a tuner without a local GPU): measured under any GPU counts.
  WorkKey any = key("a", 64);
  any.gpu = "";
  EXPECT_EQ(mine.claim({any}), (std::vector<bool>{false}));
}

TEST(WorkClaims, StatesTellMeasuredFromHeldByALiveTuner) {
  TempDir dir;
  const auto path = dir / "s.db";
  {
    auto s = Store::open(path);
    s.put_spec({"a", "tiny", "text of a", ""});
    s.put_measurement(measured("a", 64));
  }
  const pid_t other = sleeper();
  WorkClaims mine(path), theirs(path, other);
  EXPECT_EQ(theirs.claim({key("a", 128)}), (std::vector<bool>{true}));
  using S = WorkClaims::State;
  const std::vector<WorkKey> keys{key("a", 64), key("a", 128), key("a", 256)};
  // A tuner waits for held work (its holder may die with it) but not for measured work.
  EXPECT_EQ(mine.states(keys), (std::vector<S>{S::Measured, S::Held, S::Open}));
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  EXPECT_EQ(mine.states(keys), (std::vector<S>{S::Measured, S::Open, S::Open}));
  // states() claims nothing: the other process can still take what is open.
  EXPECT_EQ(mine.open(keys), (std::vector<bool>{false, true, true}));
}

TEST(StoreIntegrity, ADamagedIndexIsRefusedOnOpenNamingTheFile) {
  TempDir dir;
  // Under another name: a file is checked once per process, and this one was found intact when
  // it was filled.
  const auto path = dir / "damaged.db";
  fs::rename(filled_store(dir, "filled.db"), path);
  wreck_index(path);
  const auto before = fs::file_size(path);
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
  EXPECT_EQ(fs::file_size(path), before);
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));  // never switched to WAL, never written
}

TEST(StoreIntegrity, MergeNamesTheDamagedSourceAndCreatesNothing) {
  TempDir dir;
  // Under another name: filling it checked it, and a file is checked once per process.
  const auto src = dir / "src.db";
  fs::rename(filled_store(dir, "filled.db"), src);
  wreck_index(src);
  const auto out = dir / "out.db";
  const std::string err = error_of([&] { merge_stores(out, {src}, "merge"); });
  EXPECT_NE(err.find(src.string()), std::string::npos) << err;
  EXPECT_EQ(err.find(out.string()), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out));
}
