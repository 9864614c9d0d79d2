// The results store: row round trips, the best-kernel rule, migrations and refusals, and the
// multi-process guarantees (kill -9 durability, a reader beside a writer).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "store/schema.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace cudal2::store {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using cudal2::testing::TempDir;

// A second, independent connection for looking at the file the way any SQLite client would.
class RawDb {
 public:
  explicit RawDb(const fs::path& path) {
    sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    sqlite3_busy_timeout(db_, 5000);
  }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;
  ~RawDb() { sqlite3_close_v2(db_); }

  std::int64_t integer(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    std::int64_t v = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      v = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return v;
  }
  std::string text(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    std::string v = "<error>";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      v = p ? p : "<null>";
    }
    sqlite3_finalize(s);
    return v;
  }
  void exec(const std::string& sql) const { ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), 0); }

 private:
  sqlite3* db_ = nullptr;
};

// A forked child running fn; killed and reaped on scope exit so a failing test leaves no orphan.
class Child {
 public:
  template <typename Fn>
  explicit Child(Fn fn) {
    std::fflush(nullptr);  // output buffered now would otherwise exist twice
    pid_ = fork();
    if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
      int rc = 0;
      try {
        fn();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "store_test child: %s\n", e.what());
        rc = 3;
      }
      _exit(rc);  // never return into GoogleTest in the child
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      wait();
    }
  }
  pid_t pid() const { return pid_; }
  bool exited() {
    if (status_) return true;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return status_.has_value();
  }
  int wait() {
    if (!status_) {
      int st = 0;
      waitpid(pid_, &st, 0);
      status_ = st;
    }
    return *status_;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

SpecRow spec(const std::string& hash) { return SpecRow{hash, "sm90_cutlass", "text of " + hash, ""}; }

MeasurementRow timing(const std::string& spec_hash, std::int64_t m, double median_us) {
  MeasurementRow r;
  r.spec_hash = spec_hash;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.gpu_json = R"({"sms":132,"sm_clock_mhz":1980})";
  r.dtype = "f16f32";
  r.layout = "NN";
  r.m = m;
  r.n = 128;
  r.k = 256;
  r.mode = "offline";
  r.timer = "graph";
  r.status = "ok";
  r.median_us = median_us;
  r.p10_us = median_us * 0.9;
  r.p90_us = median_us * 1.1;
  r.min_us = median_us * 0.8;
  r.samples_us = {median_us * 0.8, median_us, median_us * 1.1};
  r.rel_err = 1.5e-3;
  r.baseline_json = R"({"cublas-nn":12.5})";
  return r;
}

// Takes the store-assigned fields from `got`, so == compares everything the caller wrote.
template <typename Row>
Row with_store_fields(Row expected, const Row& got) {
  expected.id = got.id;
  expected.created_at = got.created_at;
  return expected;
}

bool looks_like_utc_timestamp(const std::string& s) {
  return s.size() == 24 && s[4] == '-' && s[10] == 'T' && s[19] == '.' && s.back() == 'Z';
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "<no StoreError>";
}

TEST(StoreRoundTrip, SpecIsInsertedOnceAndReadBack) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a1"));
  store.put_spec(SpecRow{"a1", "other", "a different text", ""});  // same hash: ignored
  auto got = store.get_spec("a1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->hash, "a1");
  EXPECT_EQ(got->family, "sm90_cutlass");
  EXPECT_EQ(got->text, "text of a1");
  EXPECT_TRUE(looks_like_utc_timestamp(got->created_at)) << got->created_at;
  EXPECT_FALSE(store.get_spec("nope"));
}

TEST(StoreRoundTrip, BuildsAndFindBuildPrefersOkThenNewest) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a1"));
  BuildRow timeout{0, "a1", "src1", "timeout", 120.0, "nvcc killed after 120 s", "", ""};
  BuildRow ok{0, "a1", "src1", "ok", 41.25, "warning: x\n", "/cache/src1.so", ""};
  BuildRow error{0, "a1", "src2", "compile-error", 3.5, "error: no member named 'x'", "", ""};
  const auto id_timeout = store.put_build(timeout);
  const auto id_ok = store.put_build(ok);
  const auto id_error = store.put_build(error);
  EXPECT_LT(id_timeout, id_ok);
  EXPECT_LT(id_ok, id_error);

  auto got = store.find_build("a1", "src1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, id_ok);
  EXPECT_EQ(*got, with_store_fields(ok, *got));
  EXPECT_TRUE(looks_like_utc_timestamp(got->created_at)) << got->created_at;

  // A later timeout does not hide the ok build.
  store.put_build(timeout);
  EXPECT_EQ(store.find_build("a1", "src1")->id, id_ok);

  got = store.find_build("a1", "src2");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, with_store_fields(error, *got));
  EXPECT_EQ(got->artifact_path, "");
  EXPECT_FALSE(store.find_build("a1", "src3"));
  EXPECT_FALSE(store.find_build("b2", "src1"));
}

TEST(StoreRoundTrip, MeasurementsOkAndFailedWithNulls) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a1"));
  const std::string run = store.begin_run("cudal2 tune --grid sample");

  MeasurementRow ok = timing("a1", 4096, 17.125);
  ok.run_id = run;
  ok.samples_us = {17.0, 17.125, 1.0 / 3.0, 1e-7};  // exact round trip of awkward doubles
  const auto put_ok = store.put_measurement(ok);
  auto got = store.get_measurement(put_ok.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, with_store_fields(ok, *got));
  EXPECT_TRUE(looks_like_utc_timestamp(got->created_at)) << got->created_at;

  MeasurementRow failed = timing("a1", 64, 0);
  failed.status = "wrong-result";
  failed.failure = "max rel err 0.5 at (3, 7)";
  failed.median_us = failed.p10_us = failed.p90_us = failed.min_us = std::nullopt;
  failed.samples_us.clear();
  failed.rel_err = 0.5;
  failed.mode = "server";
  failed.timer = "host";
  const auto put_failed = store.put_measurement(failed);
  EXPECT_FALSE(put_failed.new_best);
  got = store.get_measurement(put_failed.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, with_store_fields(failed, *got));
  EXPECT_FALSE(got->median_us);
  EXPECT_EQ(got->run_id, "");

  RawDb raw(dir / "s.db");
  EXPECT_EQ(raw.integer(fmt::format("SELECT n_samples FROM measurements WHERE id = {}", put_ok.id)), 4);
  EXPECT_EQ(raw.integer(fmt::format("SELECT run_id IS NULL FROM measurements WHERE id = {}", put_failed.id)), 1);
  EXPECT_FALSE(store.get_measurement(put_failed.id + 1));
}

TEST(StoreRoundTrip, HasMeasurementMatchesTheWholeKey) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a1"));
  MeasurementRow failed = timing("a1", 64, 0);
  failed.status = "crash";
  failed.median_us = std::nullopt;
  store.put_measurement(failed);
  const std::string gpu = failed.gpu;
  EXPECT_TRUE(store.has_measurement("a1", {gpu, "f16f32", "NN", 64, 128, 256, "offline"}));  // failures count
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f32", "NN", 64, 128, 256, "server"}));
  EXPECT_FALSE(store.has_measurement("a2", {gpu, "f16f32", "NN", 64, 128, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {"other gpu", "f16f32", "NN", 64, 128, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f16", "NN", 64, 128, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f32", "TN", 64, 128, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f32", "NN", 65, 128, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f32", "NN", 64, 129, 256, "offline"}));
  EXPECT_FALSE(store.has_measurement("a1", {gpu, "f16f32", "NN", 64, 128, 257, "offline"}));
}

TEST(StoreRoundTrip, Runs) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  const std::string a = store.begin_run("cudal2 tune --grid paper --shard 0/4");
  const std::string b = store.begin_run("cudal2 eval");
  EXPECT_NE(a, b);
  auto got = store.get_run(a);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, a);
  EXPECT_EQ(got->command, "cudal2 tune --grid paper --shard 0/4");
  EXPECT_TRUE(looks_like_utc_timestamp(got->started_at)) << got->started_at;
  EXPECT_FALSE(got->finished_at);

  store.finish_run(a);
  got = store.get_run(a);
  ASSERT_TRUE(got && got->finished_at);
  EXPECT_TRUE(looks_like_utc_timestamp(*got->finished_at)) << *got->finished_at;
  EXPECT_GE(*got->finished_at, got->started_at);
  EXPECT_FALSE(store.get_run(b)->finished_at);
  EXPECT_NE(error_of([&] { store.finish_run("no-such-run"); }).find("no-such-run"), std::string::npos);
  EXPECT_FALSE(store.get_run("no-such-run"));
}

// The typed calls that replaced SQL written outside the store (the tuner's resume, the LLM's
// records and prompts, export): each answers from the rows of its key alone.
TEST(StoreTypedCalls, ProblemKeySelectsOneProblemInOneMode) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  for (const char* h : {"a", "b"}) store.put_spec(spec(h));
  const MeasurementRow fast = timing("a", 64, 10.0);
  MeasurementRow slow = timing("b", 64, 20.0);
  MeasurementRow server = timing("a", 64, 5.0);
  server.mode = "server";
  MeasurementRow other_shape = timing("b", 128, 1.0);
  store.put_measurements({fast, slow, server, other_shape});

  const ProblemKey key = key_of(fast);
  EXPECT_EQ(key, (ProblemKey{fast.gpu, "f16f32", "NN", 64, 128, 256, "offline"}));
  const auto rows = store.list_measurements(key);
  ASSERT_EQ(rows.size(), 2u);  // not the server row, not the other shape
  EXPECT_EQ(rows[0].spec_hash, "a");
  EXPECT_EQ(rows[1].spec_hash, "b");
  EXPECT_EQ(store.list_measurements(key_of(server)).size(), 1u);
  const auto top = store.top_specs(key, "graph", 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0], (std::pair<std::string, double>{"a", 10.0}));
  EXPECT_EQ(store.top_specs(key, "graph", 1).size(), 1u);
  EXPECT_TRUE(store.top_specs(key, "host", 5).empty());
  ASSERT_TRUE(store.get_best(key));
  EXPECT_EQ(store.get_best(key)->spec_hash, "a");
  EXPECT_EQ(store.gpus_with_best(), std::vector<std::string>{fast.gpu});

  const auto refs = store.best_with_specs("f16f32", "NN", "");
  ASSERT_EQ(refs.size(), 2u);  // one best per shape
  for (const auto& r : refs) EXPECT_EQ(r.text, "text of " + r.best.spec_hash);
  EXPECT_EQ(store.best_with_specs("f16f32", "NN", fast.gpu).size(), 2u);
  EXPECT_TRUE(store.best_with_specs("f16f32", "NN", "other gpu").empty());
  EXPECT_TRUE(store.best_with_specs("f16f32", "TN", "").empty());

  const auto timed = store.timed_specs(fast.gpu);  // ok offline graph rows, oldest first
  ASSERT_EQ(timed.size(), 3u);
  EXPECT_EQ(timed[0].spec_text, "text of a");
  EXPECT_EQ(timed[0].median_us, 10.0);
  EXPECT_EQ(timed[0].baseline_json, fast.baseline_json);
  EXPECT_EQ(timed[2].m, 128);
}

TEST(StoreTypedCalls, LlmTurnsProfilesAndFailures) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  TurnRow t;
  t.run_id = "r1", t.episode = "e1", t.kind = "propose", t.model = "m", t.dtype = "f32", t.layout = "nn";
  t.m = 64, t.n = 32, t.k = 16, t.reply = "ok", t.spec_hash = "a";
  const auto id = store.put_turn(t);
  TurnRow other = t;
  other.run_id = "r2";
  store.put_turn(other);
  store.set_turn_outcome(id, "ok", "", 12.5, 25.0, 2.0);
  const auto turns = store.turns("r1");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].status, "ok");
  EXPECT_EQ(turns[0].time_us, 12.5);
  EXPECT_EQ(turns[0].reward, 2.0);
  EXPECT_EQ(store.turns().size(), 2u);

  ProfileRow p;
  p.spec_hash = "a", p.gpu = "G", p.dtype = "f32", p.layout = "nn", p.m = 64, p.n = 32, p.k = 16;
  p.metrics_json = R"({"dram_pct": 40})";
  store.put_profile(p);
  p.metrics_json = R"({"dram_pct": 41})";
  store.put_profile(p);
  ASSERT_TRUE(store.latest_profile("a", 64, 32, 16));
  EXPECT_EQ(store.latest_profile("a", 64, 32, 16)->metrics_json, p.metrics_json);
  EXPECT_FALSE(store.latest_profile("a", 64, 32, 17));

  store.put_spec(spec("a"));
  MeasurementRow ok = timing("a", 64, 3.0);
  MeasurementRow bad = timing("a", 96, 0);
  bad.status = "wrong-result", bad.failure = "max rel err 0.5";
  bad.median_us = bad.p10_us = bad.p90_us = bad.min_us = std::nullopt;
  bad.samples_us.clear();
  store.put_measurements({ok, bad});
  const ProblemKey any_gpu{"", ok.dtype, ok.layout, 64, 128, 256, ""};  // gpu and mode not consulted
  EXPECT_EQ(store.best_gpus("a", any_gpu), std::vector<std::string>{ok.gpu});
  EXPECT_EQ(store.measured_gpu("a", any_gpu), ok.gpu);
  EXPECT_EQ(store.measured_gpu("b", any_gpu), "");
  EXPECT_EQ(store.failure_detail("a"), "wrong-result on M=96 N=128 K=256: max rel err 0.5");
  store.put_build(BuildRow{0, "a", "src", "compile-error", 1.0, "error: x", "", ""});
  EXPECT_EQ(store.failure_detail("a"), "error: x");  // a failed build's log comes first
  EXPECT_EQ(store.failure_detail("b"), "");
}

// The Python readers (python/cudal2/store_csv.py) refuse a store of a schema newer than they know:
// their constants must follow the migrations, or they would refuse the stores this build writes.
TEST(StoreTypedCalls, PythonReadersKnowTheLatestSchema) {
  std::ifstream f(std::string(CUDAL2_SOURCE_DIR) + "/python/cudal2/store_csv.py");
  ASSERT_TRUE(f) << "python/cudal2/store_csv.py";
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find(fmt::format("\nSCHEMA_VERSION = {}\n", kMigrations.size())), std::string::npos);
  EXPECT_NE(text.str().find(fmt::format("\nAPPLICATION_ID = 0x{:08x}\n", kApplicationId)), std::string::npos);
}

TEST(StoreBest, OnlyAFasterOkOfflineGraphMeasurementUpdatesIt) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  for (const char* h : {"a", "b", "c"}) store.put_spec(spec(h));
  const std::string gpu = timing("a", 1, 1).gpu;
  auto best = [&] { return store.get_best({gpu, "f16f32", "NN", 512, 128, 256}); };
  EXPECT_FALSE(best());

  const auto first = store.put_measurement(timing("a", 512, 10.0));
  EXPECT_TRUE(first.new_best);
  ASSERT_TRUE(best());
  EXPECT_EQ(best()->spec_hash, "a");
  EXPECT_EQ(best()->median_us, 10.0);
  EXPECT_EQ(best()->measurement_id, first.id);
  EXPECT_TRUE(looks_like_utc_timestamp(best()->updated_at));

  EXPECT_FALSE(store.put_measurement(timing("b", 512, 12.0)).new_best);  // slower
  EXPECT_FALSE(store.put_measurement(timing("b", 512, 10.0)).new_best);  // a tie keeps the incumbent
  auto failed = timing("c", 512, 1.0);
  failed.status = "wrong-result";
  EXPECT_FALSE(store.put_measurement(failed).new_best);
  auto server = timing("c", 512, 1.0);
  server.mode = "server";
  EXPECT_FALSE(store.put_measurement(server).new_best);
  auto eager = timing("c", 512, 1.0);
  eager.timer = "eager";
  EXPECT_FALSE(store.put_measurement(eager).new_best);
  auto host = timing("c", 512, 1.0);
  host.timer = "host";
  EXPECT_FALSE(store.put_measurement(host).new_best);
  EXPECT_EQ(best()->spec_hash, "a");
  EXPECT_EQ(best()->median_us, 10.0);
  EXPECT_EQ(best()->measurement_id, first.id);

  const auto faster = store.put_measurement(timing("c", 512, 7.5));
  EXPECT_TRUE(faster.new_best);
  EXPECT_EQ(best()->spec_hash, "c");
  EXPECT_EQ(best()->median_us, 7.5);
  EXPECT_EQ(best()->measurement_id, faster.id);

  // Other problems and GPUs are separate entries.
  EXPECT_FALSE(store.get_best({gpu, "f16f32", "TN", 512, 128, 256}));
  EXPECT_FALSE(store.get_best({"other", "f16f32", "NN", 512, 128, 256}));
}

TEST(StoreBest, ListBestIsPerGpuAndOrdered) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a"));
  auto on = [](std::string gpu, std::string layout, std::int64_t m, double us) {
    auto r = timing("a", m, us);
    r.gpu = std::move(gpu);
    r.layout = std::move(layout);
    return r;
  };
  store.put_measurement(on("H100", "TN", 64, 3));
  store.put_measurement(on("H100", "NN", 4096, 2));
  store.put_measurement(on("H100", "NN", 128, 1));
  store.put_measurement(on("H200", "NN", 64, 5));
  const auto h100 = store.list_best("H100");
  ASSERT_EQ(h100.size(), 3u);
  EXPECT_EQ(h100[0].layout, "NN");
  EXPECT_EQ(h100[0].m, 128);
  EXPECT_EQ(h100[0].median_us, 1);
  EXPECT_EQ(h100[1].m, 4096);
  EXPECT_EQ(h100[2].layout, "TN");
  EXPECT_EQ(h100[2].n, 128);
  EXPECT_EQ(h100[2].k, 256);
  ASSERT_EQ(store.list_best("H200").size(), 1u);
  EXPECT_EQ(store.list_best("H200")[0].median_us, 5);
  EXPECT_TRUE(store.list_best("A100").empty());
}

TEST(StoreValidation, BadRowsAreRefusedAndLeaveNothingBehind) {
  TempDir dir;
  auto store = Store::open(dir / "s.db");
  store.put_spec(spec("a"));
  // Unknown spec: the foreign key fails inside the transaction, which must roll back cleanly.
  const std::string fk = error_of([&] { store.put_measurement(timing("unknown", 64, 1)); });
  EXPECT_NE(fk.find("FOREIGN KEY"), std::string::npos) << fk;
  EXPECT_NE(fk.find("INSERT INTO measurements"), std::string::npos) << fk;
  EXPECT_NE(fk.find("s.db"), std::string::npos) << fk;
  auto typo = timing("a", 64, 1);
  typo.mode = "Offline";
  EXPECT_NE(error_of([&] { store.put_measurement(typo); }).find("CHECK"), std::string::npos);
  auto no_time = timing("a", 64, 1);
  no_time.median_us = std::nullopt;
  EXPECT_NE(error_of([&] { store.put_measurement(no_time); }).find("CHECK"), std::string::npos);
  auto nan = timing("a", 64, 1);
  nan.samples_us.push_back(std::nan(""));
  EXPECT_NE(error_of([&] { store.put_measurement(nan); }).find("non-finite"), std::string::npos);
  auto bad_json = timing("a", 64, 1);
  bad_json.gpu_json = "{sms: 132";
  EXPECT_NE(error_of([&] { store.put_measurement(bad_json); }).find("gpu_json"), std::string::npos);
  auto no_run = timing("a", 64, 1);
  no_run.run_id = "never-begun";
  EXPECT_NE(error_of([&] { store.put_measurement(no_run); }).find("FOREIGN KEY"), std::string::npos);
  EXPECT_NE(error_of([&] {
              store.put_build(BuildRow{0, "a", "s", "crashed", 1, "", "", ""});
            }).find("CHECK"),
            std::string::npos);

  EXPECT_FALSE(store.get_best({timing("a", 64, 1).gpu, "f16f32", "NN", 64, 128, 256}));
  EXPECT_EQ(RawDb(dir / "s.db").integer("SELECT count(*) FROM measurements"), 0);
  // No transaction was left open: the next write works.
  EXPECT_TRUE(store.put_measurement(timing("a", 64, 1)).new_best);
}

TEST(StoreMigration, FreshDatabaseIsAtTheLatestVersionInWalMode) {
  TempDir dir;
  auto store = Store::open(dir / "fresh.db");
  EXPECT_EQ(Store::latest_schema_version(), static_cast<int>(kMigrations.size()));
  EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
  EXPECT_EQ(store.integrity_check(), "ok");
  RawDb raw(dir / "fresh.db");
  EXPECT_EQ(raw.integer("PRAGMA user_version"), Store::latest_schema_version());
  EXPECT_EQ(raw.integer("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('specs', 'builds', 'measurements', 'best', 'runs')"),
            5);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'measurements_by_problem'"), 1);
}

TEST(StoreMigration, ReopeningIsANoOpAndKeepsData) {
  TempDir dir;
  const auto path = dir / "s.db";
  {
    auto store = Store::open(path);
    store.put_spec(spec("kept"));
  }
  const std::string schema_before = RawDb(path).text("SELECT group_concat(sql, ';') FROM sqlite_master");
  auto store = Store::open(path);
  EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
  EXPECT_TRUE(store.get_spec("kept"));
  EXPECT_EQ(RawDb(path).text("SELECT group_concat(sql, ';') FROM sqlite_master"), schema_before);
}

TEST(StoreMigration, NewMigrationsApplyInOrderEachInOneTransaction) {
  TempDir dir;
  const auto path = dir / "s.db";
  // A file at schema 1 (whatever the latest schema is now).
  sql::Db db(path.string());
  const std::vector<std::string_view> one = {kMigrations[0]};
  migrate(db, one);
  db.exec("INSERT INTO specs (hash, family, text) VALUES ('kept', 'sm90_cutlass', 'text of kept')");
  const std::vector<std::string_view> two = {kMigrations[0], "ALTER TABLE specs ADD COLUMN note TEXT"};
  migrate(db, two);
  EXPECT_EQ(user_version(db), 2);
  RawDb raw(path);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM pragma_table_info('specs') WHERE name = 'note'"), 1);

  // A failing migration 3 leaves version 2 and none of its statements.
  const std::vector<std::string_view> three = {two[0], two[1], "CREATE TABLE extra (a); SELECT * FROM missing"};
  const std::string err = error_of([&] { migrate(db, three); });
  EXPECT_NE(err.find("missing"), std::string::npos) << err;
  EXPECT_EQ(user_version(db), 2);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'extra'"), 0);
  EXPECT_EQ(raw.text("SELECT text FROM specs WHERE hash = 'kept'"), "text of kept");
}

TEST(StoreMigration, NewerSchemaIsRefusedNamingThePath) {
  TempDir dir;
  const auto path = dir / "newer.db";
  Store::open(path);
  const int newer = Store::latest_schema_version() + 1;
  RawDb(path).exec(fmt::format("PRAGMA user_version = {}", newer));
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find(fmt::format("created by a newer cudal2 (schema {} > {})", newer, newer - 1)), std::string::npos)
      << err;
  EXPECT_EQ(RawDb(path).integer("PRAGMA user_version"), newer);  // left as it was
}

TEST(StoreMigration, GarbageFileIsRefusedAndLeftUntouched) {
  TempDir dir;
  const auto path = dir / "garbage.db";
  std::string bytes;
  std::mt19937 rng(7);
  for (int i = 0; i < 8192; ++i) bytes += static_cast<char>(rng());
  std::ofstream(path, std::ios::binary) << bytes;
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("not a cudal2 database"), std::string::npos) << err;
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), bytes);
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));
}

TEST(StoreMigration, SomeoneElsesSqliteDatabaseIsRefused) {
  TempDir dir;
  const auto path = dir / "other.db";
  RawDb(path).exec("CREATE TABLE notes (body TEXT)");
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("not a cudal2 database"), std::string::npos) << err;
  EXPECT_EQ(RawDb(path).integer("SELECT count(*) FROM sqlite_master WHERE name = 'specs'"), 0);
}

TEST(StoreMigration, UnopenablePathNamesThePath) {
  TempDir dir;
  const auto path = dir / "no-such-dir" / "s.db";
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

TEST(StoreMigration, CorruptFileIsReportedAsCorrupt) {
  TempDir dir;
  const auto path = dir / "corrupt.db";
  Store::open(path).put_spec(spec("a"));  // closing checkpoints the WAL into the file
  ASSERT_FALSE(fs::exists(path.string() + "-wal"));
  {
    // Keep the 100-byte header (so it is still recognisably SQLite), wreck page 1's b-tree.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    const std::string junk(400, '\xa5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string err = error_of([&] { Store::open(path); });
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
}

// Row i of the kill test: every field depends on i, so a torn or mixed-up row cannot pass.
MeasurementRow kill_row(int i) {
  auto r = timing(fmt::format("s{}", i % 4), 64 * (1 + std::int64_t{i} % 8), 1e6 / (i + 1));
  r.layout = i % 2 ? "TN" : "NN";
  r.failure = fmt::format("note {}", i);
  r.baseline_json = fmt::format(R"({{"cublas-nn":{}}})", i);
  r.samples_us = {static_cast<double>(i), i + 0.5, i + 0.25};
  return r;
}

TEST(StoreCrash, KillNineMidWriteLosesNoCommittedRowAndTearsNone) {
  TempDir dir;
  const auto path = dir / "kill.db";
  {
    auto store = Store::open(path);
    for (int s = 0; s < 4; ++s) store.put_spec(spec(fmt::format("s{}", s)));
  }
  Child writer([&] {
    auto store = Store::open(path);
    for (int i = 0;; ++i) store.put_measurement(kill_row(i));
  });
  std::int64_t seen = 0;
  {
    RawDb raw(path);
    const auto deadline = std::chrono::steady_clock::now() + 4s;
    while (seen < 50 && !writer.exited() && std::chrono::steady_clock::now() < deadline) {
      seen = std::max<std::int64_t>(seen, raw.integer("SELECT count(*) FROM measurements"));
      std::this_thread::sleep_for(1ms);
    }
  }
  ASSERT_FALSE(writer.exited()) << "the writer stopped by itself, status " << writer.wait();
  ASSERT_GE(seen, 50) << "the writer was too slow";
  ASSERT_EQ(kill(writer.pid(), SIGKILL), 0);
  const int status = writer.wait();
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  auto store = Store::open(path);
  EXPECT_EQ(store.integrity_check(), "ok");
  RawDb raw(path);
  const auto count = raw.integer("SELECT count(*) FROM measurements");
  EXPECT_GE(count, seen);
  EXPECT_EQ(raw.integer("SELECT max(id) FROM measurements"), count);  // ids 1..count, no holes
  for (std::int64_t id = 1; id <= count; ++id) {
    auto got = store.get_measurement(id);
    ASSERT_TRUE(got) << id;
    ASSERT_EQ(*got, with_store_fields(kill_row(static_cast<int>(id - 1)), *got)) << "row " << id;
  }
  // best moved with its measurement, in the same transactions: it is the minimum of what survived.
  const auto bests = store.list_best(kill_row(0).gpu);
  EXPECT_EQ(bests.size(), std::min<std::size_t>(8, count));
  for (const auto& b : bests) {
    const auto expected = raw.integer(fmt::format(
        "SELECT id FROM measurements WHERE layout = '{}' AND m = {} ORDER BY median_us, id LIMIT 1", b.layout, b.m));
    EXPECT_EQ(b.measurement_id, expected) << b.layout << " " << b.m;
    EXPECT_EQ(b.median_us, *store.get_measurement(b.measurement_id)->median_us);
  }
}

// Reader test rows: 20 problems, 10 specs each, each spec faster than the one before.
MeasurementRow reader_row(int i) {
  const int spec_no = i / 20;  // the spec number doubles as the time step: s9 ends fastest
  return timing(fmt::format("s{}", spec_no), 16 * (1 + std::int64_t{i} % 20), 100.0 - spec_no);
}

TEST(StoreConcurrency, ReaderInOneProcessWhileAnotherWrites) {
  TempDir dir;
  const auto path = dir / "rw.db";
  {
    auto store = Store::open(path);
    for (int s = 0; s < 10; ++s) store.put_spec(spec(fmt::format("s{}", s)));
  }
  const std::string gpu = reader_row(0).gpu;
  Child writer([&] {
    auto store = Store::open(path);
    for (int i = 0; i < 200; ++i) store.put_measurement(reader_row(i));
  });

  auto store = Store::open(path);
  int reads = 0;
  std::string error;
  try {
    while (!writer.exited()) {
      for (const auto& b : store.list_best(gpu)) {
        if (b.median_us < 91 || b.median_us > 100) error = fmt::format("impossible best {}", b.median_us);
      }
      store.has_measurement("s0", {gpu, "f16f32", "NN", 16, 128, 256, "offline"});
      // An occasional write of our own contends for the write lock: busy_timeout must absorb it.
      if (++reads % 8 == 0) store.put_spec(spec(fmt::format("reader{}", reads)));
    }
  } catch (const StoreError& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "");
  EXPECT_EQ(writer.wait(), 0) << "the writer failed (its error is on stderr)";
  EXPECT_GT(reads, 0);

  for (int i = 0; i < 200; ++i) {
    const auto r = reader_row(i);
    EXPECT_TRUE(store.has_measurement(r.spec_hash, {gpu, r.dtype, r.layout, r.m, r.n, r.k, r.mode})) << i;
  }
  const auto bests = store.list_best(gpu);
  ASSERT_EQ(bests.size(), 20u);
  for (const auto& b : bests) {
    EXPECT_EQ(b.spec_hash, "s9");
    EXPECT_EQ(b.median_us, 91);
  }
}

}  // namespace
}  // namespace cudal2::store
