// `cudal2 merge` (src/store/merge.hpp): two shard stores into one, provenance kept, best
// recomputed, idempotent, and refusals.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "store/merge.hpp"
#include "store/store.hpp"

namespace cudal2::store {
namespace {

namespace fs = std::filesystem;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("cudal2-merge-test-{}-{:08x}", static_cast<long>(getpid()), std::random_device{}());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path path(const std::string& name) const { return dir_ / name; }

  static std::int64_t count(const fs::path& db, const std::string& table) {
    sqlite3* raw = nullptr;
    sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(raw, ("SELECT count(*) FROM " + table).c_str(), -1, &s, nullptr);
    std::int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    sqlite3_close_v2(raw);
    return n;
  }

  // A shard's store: one run, specs, a build, and measurements of one shape.
  static std::string fill(Store& db, const std::string& shard, const std::vector<std::pair<std::string, double>>& times,
                          std::int64_t m) {
    const std::string run = db.begin_run("tune --shard " + shard);
    for (const auto& [hash, us] : times) {
      db.put_spec({hash, "sm90_cutlass", "spec " + hash, ""});
      db.put_build({0, hash, "src-" + hash, "ok", 12.5, "", "/cache/" + hash + ".so", ""});
      MeasurementRow r;
      r.spec_hash = hash;
      r.gpu = "NVIDIA H100 80GB HBM3";
      r.dtype = "f32";
      r.layout = "nn";
      r.m = m, r.n = 1024, r.k = 1024;
      r.mode = "offline";
      r.timer = "graph";
      r.status = us > 0 ? "ok" : "wrong-result";
      if (us > 0) r.median_us = r.p10_us = r.p90_us = r.min_us = us;
      r.samples_us = us > 0 ? std::vector<double>{us, us} : std::vector<double>{};
      r.run_id = run;
      db.put_measurement(r);
    }
    db.finish_run(run);
    return run;
  }

  fs::path dir_;
};

TEST_F(MergeTest, TwoShardsMergeWithProvenanceAndBest) {
  std::string run_a, run_b;
  {
    auto a = Store::open(path("a.db"));
    run_a = fill(a, "0/2", {{"aaaa000000000001", 30.0}, {"aaaa000000000002", 25.0}, {"aaaa000000000003", -1}}, 512);
    // A spec both shards measured, on different shapes.
    fill(a, "0/2", {{"cccc000000000001", 40.0}}, 256);
  }
  {
    auto b = Store::open(path("b.db"));
    run_b = fill(b, "1/2", {{"bbbb000000000001", 20.0}, {"cccc000000000001", 35.0}}, 512);
  }
  const auto stats = merge_stores(path("out.db"), {path("a.db"), path("b.db")}, "merge --from a.db --from b.db");
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].added.at("measurements"), 4);
  EXPECT_EQ(stats[1].added.at("measurements"), 2);
  EXPECT_EQ(stats[1].added.at("specs"), 1);  // cccc... came with a
  EXPECT_EQ(stats[0].best_changed, 2);       // 512 and 256 were new problems
  EXPECT_EQ(stats[1].best_changed, 1);       // b's 20 us beats a's 25 us on 512

  auto out = Store::open(path("out.db"));
  EXPECT_EQ(count(path("out.db"), "specs"), 5);
  EXPECT_EQ(count(path("out.db"), "builds"), 6);
  EXPECT_EQ(count(path("out.db"), "measurements"), 6);
  EXPECT_EQ(count(path("out.db"), "runs"), 4);  // a's two, b's one, the merge
  const auto best = out.get_best({"NVIDIA H100 80GB HBM3", "f32", "nn", 512, 1024, 1024});
  ASSERT_TRUE(best);
  EXPECT_EQ(best->spec_hash, "bbbb000000000001");
  EXPECT_DOUBLE_EQ(best->median_us, 20.0);
  // The best row points at OUT's copy of b's measurement, which still names b's run.
  const auto m = out.get_measurement(best->measurement_id);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->run_id, run_b);
  EXPECT_EQ(m->samples_us, (std::vector<double>{20.0, 20.0}));
  ASSERT_TRUE(out.get_run(run_a));
  EXPECT_EQ(out.get_run(run_a)->command, "tune --shard 0/2");
  EXPECT_TRUE(out.get_run(run_a)->finished_at.has_value());
  const auto b256 = out.get_best({"NVIDIA H100 80GB HBM3", "f32", "nn", 256, 1024, 1024});
  ASSERT_TRUE(b256);
  EXPECT_EQ(b256->spec_hash, "cccc000000000001");
  EXPECT_EQ(out.integrity_check(), "ok");
}

TEST_F(MergeTest, MergingAgainAddsNothing) {
  {
    auto a = Store::open(path("a.db"));
    fill(a, "0/1", {{"aaaa000000000001", 30.0}, {"aaaa000000000002", -1}}, 512);
  }
  merge_stores(path("out.db"), {path("a.db")});
  const auto again = merge_stores(path("out.db"), {path("a.db"), path("a.db")});
  for (const auto& st : again) {
    for (const auto& [table, n] : st.added) EXPECT_EQ(n, 0) << table;
    EXPECT_EQ(st.best_changed, 0);
  }
  EXPECT_EQ(count(path("out.db"), "measurements"), 2);
  // A merged store merges on: out into a fresh store gives the same rows.
  merge_stores(path("out2.db"), {path("out.db")});
  EXPECT_EQ(count(path("out2.db"), "measurements"), 2);
  EXPECT_EQ(count(path("out2.db"), "best"), 1);
}

TEST_F(MergeTest, Refusals) {
  {
    auto a = Store::open(path("a.db"));
    fill(a, "0/1", {{"aaaa000000000001", 30.0}}, 512);
  }
  EXPECT_THROW(merge_stores(path("out.db"), {path("missing.db")}), StoreError);
  EXPECT_FALSE(fs::exists(path("missing.db")));  // never created by looking
  EXPECT_THROW(merge_stores(path("a.db"), {path("a.db")}), StoreError);
  {
    std::ofstream f(path("notes.db"));
    f << "not a database\n";
  }
  EXPECT_THROW(merge_stores(path("out.db"), {path("notes.db")}), StoreError);
  // A SQLite file of something else.
  sqlite3* raw = nullptr;
  sqlite3_open_v2(path("other.db").c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close_v2(raw);
  EXPECT_THROW(merge_stores(path("out.db"), {path("other.db")}), StoreError);
  EXPECT_FALSE(fs::exists(path("out.db")));  // every source is checked before OUT is created
}

#ifdef CUDAL2_CLI
TEST_F(MergeTest, MergeCommand) {
  {
    auto a = Store::open(path("a.db"));
    fill(a, "0/2", {{"aaaa000000000001", 30.0}}, 512);
    auto b = Store::open(path("b.db"));
    fill(b, "1/2", {{"bbbb000000000001", 20.0}}, 512);
  }
  const std::string cmd = fmt::format("{} merge --db {} --from {} --from {} 2>&1", CUDAL2_CLI, path("out.db").string(),
                                      path("a.db").string(), path("b.db").string());
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[4096];
  while (fgets(buf, sizeof buf, f)) out += buf;
  EXPECT_EQ(pclose(f), 0) << out;
  EXPECT_NE(out.find("merged into"), std::string::npos) << out;
  EXPECT_EQ(count(path("out.db"), "measurements"), 2);
  const std::string bad = fmt::format("{} merge --db {} --from {} >/dev/null 2>&1", CUDAL2_CLI, path("out.db").string(),
                                      path("missing.db").string());
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 2);
}
#endif

}  // namespace
}  // namespace cudal2::store
