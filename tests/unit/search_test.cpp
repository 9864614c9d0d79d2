// The search (src/search/) and the tuner (src/tuner/): policies, the reward, the spaces of the wgmma
// and cublaslt families, the judge's lt-space op seen from the parent, the store sink and reward
// column, and run_tune end to end against scripted judges (CPU only).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <thread>
#include <utility>

#include "codegen/family_cublaslt.hpp"
#include "search/policy.hpp"
#include "search/reward.hpp"
#include "search/space.hpp"
#include "store/schema.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/lt_space.hpp"
#include "tuner/record.hpp"
#include "tuner/tune.hpp"

namespace cudal2::search {
namespace {

using tuner::measurement_row;
using tuner::score_measurement;
using tuner::StoreSink;

std::vector<KernelSpec> mma_space(Layout l) {
  std::vector<KernelSpec> out;
  for (const auto& s : search_space({"mma"}, "core", Accum::F32))
    if (s.layout == l) out.push_back(s);
  return out;
}

Observation seen(const Problem& p, const KernelSpec& s, const std::string& status = "ok") {
  Observation o;
  o.problem = p, o.spec = s, o.status = status;
  return o;
}

PolicyOptions seeded(std::uint64_t seed) {
  PolicyOptions o;
  o.seed = seed;
  return o;
}

TEST(Registry, KnowsExhaustiveAndRandomAndRefusesOthers) {
  const auto names = policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "exhaustive"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "random"), names.end());
  EXPECT_EQ(make_policy("exhaustive")->name(), "exhaustive");
  EXPECT_EQ(make_policy("random")->name(), "random");
  try {
    make_policy("simulated-annealing");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exhaustive"), std::string::npos) << e.what();
  }
}

// A room above search/ (the LLM proposer) adds its policy through register_policy, from the
// composition root: the registry lists and makes it without search/ naming that room.
TEST(Registry, RegisteredPoliciesAreListedAfterTheBuiltInsAndMade) {
  register_policy("registered-for-test", [](const PolicyOptions& o) { return make_policy("random", o); });
  register_policy("registered-for-test", [](const PolicyOptions& o) { return make_policy("exhaustive", o); });
  const auto names = policy_names();
  const auto at = std::find(names.begin(), names.end(), "registered-for-test");
  ASSERT_NE(at, names.end());
  EXPECT_EQ(std::count(names.begin(), names.end(), "registered-for-test"), 1);  // registered again: replaced
  EXPECT_GT(at - names.begin(), std::find(names.begin(), names.end(), "rl") - names.begin());
  EXPECT_EQ(make_policy("registered-for-test")->name(), "exhaustive");
}

TEST(Exhaustive, ProposesTheSpaceInOrderSkippingWhatIsObserved) {
  const auto space = mma_space(Layout::NN);
  ASSERT_GT(space.size(), 10u);
  auto pol = make_policy("exhaustive");
  const Problem p{{64, 64, 4096}, Layout::NN, Accum::F32};
  const Problem q{{128, 64, 4096}, Layout::NN, Accum::F32};
  auto first = pol->propose(p, 3, space);
  ASSERT_EQ(first.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(first[i].spec, space[i]);
  // Observed on p (a failure counts: the store has a row, a rerun skips it); q is untouched.
  pol->observe({seen(p, space[0]), seen(p, space[2], "compile-error")});
  auto next = pol->propose(p, 2, space);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].spec, space[1]);
  EXPECT_EQ(next[1].spec, space[3]);
  EXPECT_EQ(pol->propose(q, 1, space)[0].spec, space[0]);
  // Everything observed: nothing left.
  std::vector<Observation> all;
  for (const auto& s : space) all.push_back(seen(p, s));
  pol->observe(all);
  EXPECT_TRUE(pol->propose(p, 0, space).empty());
}

TEST(Random, SeededPermutationCoversTheSpaceOnceAndRepeats) {
  const auto space = mma_space(Layout::NN);
  const Problem p{{64, 64, 4096}, Layout::NN, Accum::F32};
  auto a = make_policy("random", seeded(7));
  auto b = make_policy("random", seeded(7));
  auto c = make_policy("random", seeded(8));
  const auto pa = a->propose(p, static_cast<int>(space.size()), space);
  const auto pb = b->propose(p, static_cast<int>(space.size()), space);
  const auto pc = c->propose(p, static_cast<int>(space.size()), space);
  ASSERT_EQ(pa.size(), space.size());
  std::set<std::string> texts;
  for (const auto& x : pa) texts.insert(x.spec.text());
  EXPECT_EQ(texts.size(), space.size());
  bool same_ab = true, same_ac = true, same_space = true;
  for (size_t i = 0; i < pa.size(); ++i) {
    same_ab = same_ab && pa[i].spec == pb[i].spec;
    same_ac = same_ac && pa[i].spec == pc[i].spec;
    same_space = same_space && pa[i].spec == space[i];
  }
  EXPECT_TRUE(same_ab);
  EXPECT_FALSE(same_ac);
  EXPECT_FALSE(same_space);
  // The same order for another problem (a budget picks one subset all shapes share).
  const Problem q{{512, 64, 64}, Layout::NN, Accum::F32};
  EXPECT_EQ(a->propose(q, 5, space)[0].spec, pa[0].spec);
  a->observe({seen(p, pa[0].spec)});
  EXPECT_EQ(a->propose(p, 1, space)[0].spec, pa[1].spec);
}

// A row stored under `word`, read back as run_tune reads the store (a word this build does not
// know is an error).
RewardInput R(const char* word, double t = 0, double b = 0, std::optional<double> err = std::nullopt,
              size_t bytes = 0) {
  RewardInput in;
  in.status = parse_outcome(word).value_or(Outcome(FailureKind::Error));
  in.time_us = t, in.baseline_us = b, in.rel_err = err, in.source_bytes = bytes;
  return in;
}

TEST(Reward, SpeedupMinusPenaltiesAndAFixedValuePerFailure) {
  EXPECT_DOUBLE_EQ(*reward(R("ok", 10, 12, 1e-4, 0)), 1.2);
  EXPECT_DOUBLE_EQ(*reward(R("ok", 10, 0, std::nullopt, 0)), 1.0);  // no baseline: neutral
  // Deviation: 0.05 per doubling above 2e-4, at most 0.5.
  EXPECT_NEAR(*reward(R("ok", 10, 10, 8e-4, 0)), 1.0 - 0.1, 1e-12);
  EXPECT_NEAR(*reward(R("ok", 10, 10, 1.0, 0)), 0.5, 1e-12);
  // Source length: free up to 8 KiB, then 0.01 per KiB, at most 0.25.
  EXPECT_DOUBLE_EQ(*reward(R("ok", 10, 10, std::nullopt, 8192)), 1.0);
  EXPECT_NEAR(*reward(R("ok", 10, 10, std::nullopt, 8192 + 10 * 1024)), 0.9, 1e-12);
  EXPECT_NEAR(*reward(R("ok", 10, 10, std::nullopt, 1 << 20)), 0.75, 1e-12);
  for (const char* k : {"wrong-result", "out-of-bounds", "input-modified", "timing-mismatch", "inconsistent-time",
                        "implausible-time", "host-thread", "protocol-error"})
    EXPECT_DOUBLE_EQ(*reward(R(k)), -1.0) << k;
  for (const char* k :
       {"illegal-address", "device-assert", "illegal-instruction", "cuda-fatal", "crash", "hang", "exited"})
    EXPECT_DOUBLE_EQ(*reward(R(k)), -0.8) << k;
  EXPECT_DOUBLE_EQ(*reward(R("compile-error")), -0.2);
  EXPECT_DOUBLE_EQ(*reward(R("compile-timeout")), -0.3);
  EXPECT_DOUBLE_EQ(*reward(R("unsupported")), -0.1);
  EXPECT_DOUBLE_EQ(*reward(R("error")), -0.5);
  EXPECT_FALSE(parse_outcome("something-new"));
  EXPECT_DOUBLE_EQ(*reward(R("something-new")), -0.5);
  // A failed check counts as the kind it is stored as.
  EXPECT_DOUBLE_EQ(failure_reward(FailureKind::ExactMismatch), -1.0);
  EXPECT_DOUBLE_EQ(failure_reward(FailureKind::OutOfBoundsWrite), -1.0);
  EXPECT_DOUBLE_EQ(failure_reward(FailureKind::None), -0.5);
  EXPECT_DOUBLE_EQ(*reward(R("ok", 0, 10)), -0.5);  // an ok row without a time is an error
  EXPECT_FALSE(reward(R("not-run")));
  EXPECT_FALSE(reward(R("not-capturable")));
  EXPECT_FALSE(reward(R("gpu-disturbed")));  // not measured: nobody's fault
  // Every correct candidate, however slow, outranks every failure.
  EXPECT_DOUBLE_EQ(*reward(R("ok", 1000, 1, 1.0, 1 << 20)), 0.0);
  EXPECT_GT(*reward(R("ok", 1000, 1, 1.0, 1 << 20)), *reward(R("unsupported")));
}

TEST(Space, WgmmaCoreIsClusterFreeWithSwizzleOneOrEight) {
  const auto full = search_space({"wgmma"}, "full", Accum::F32);
  const auto core = search_space({"wgmma"}, "core", Accum::F32);
  ASSERT_FALSE(core.empty());
  EXPECT_LT(core.size(), full.size());
  std::set<std::string> full_texts;
  for (const auto& s : full) full_texts.insert(s.text());
  std::set<int> swizzles;
  for (const auto& s : core) {
    EXPECT_TRUE(full_texts.count(s.text())) << s.text();
    EXPECT_EQ(s.cluster_m * s.cluster_n, 1) << s.text();
    swizzles.insert(s.swizzle);
  }
  EXPECT_EQ(swizzles, (std::set<int>{1, 8}));
}

TEST(Space, ListedSpecsAreExactlyTheFilesLinesAndBadLinesAreNamed) {
  const testing::TempDir dir;
  const std::string pp =
      "wgmma tn f32 tile=128x128x64 cluster=1x1 stages=6 mainloop=pingpong | raster=along_n swizzle=8";
  const std::string coop = "wgmma nn f32 tile=128x256x64 cluster=1x1 stages=4 | raster=along_m swizzle=8 splits=auto";
  const auto path = dir.file(
      "specs.txt", "# the campaign's neighbourhood\n\n" + pp + "  # best on 4096^3\n" + coop + "\n" + pp + "\n");
  const auto listed = search_space({"wgmma"}, "@" + path, Accum::F32);
  ASSERT_EQ(listed.size(), 2u);  // the repeated line once
  EXPECT_EQ(listed[0].text(), parse_spec(pp).text());
  EXPECT_EQ(listed[0].raster, Raster::AlongN);
  EXPECT_EQ(listed[1].layout, Layout::NN);
  EXPECT_EQ(listed[1].splits, 0);
  const auto message = [&](const std::vector<std::string>& families, const std::string& text, Accum accum) {
    try {
      search_space(families, "@" + dir.file("bad.txt", "# ok\n" + text + "\n"), accum);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"mma"}, pp, Accum::F32).find("line 2: family 'wgmma' is not in --families"), std::string::npos);
  EXPECT_NE(message({"wgmma"}, pp, Accum::F16).find("line 2: accumulator f32"), std::string::npos);
  EXPECT_NE(message({"wgmma"}, "wgmma tn f32 tile=128x256x64 cluster=1x1 stages=6 mainloop=pingpong", Accum::F32)
                .find("line 2: invalid spec: pingpong tile"),
            std::string::npos);
  EXPECT_NE(message({"wgmma"}, "wgmma tn f32 tile=banana", Accum::F32).find("line 2:"), std::string::npos);
  EXPECT_NE(message({"wgmma"}, "", Accum::F32).find("no specs"), std::string::npos);
  EXPECT_THROW(search_space({"wgmma"}, "@" + (dir / "missing.txt").string(), Accum::F32), InputError);
  EXPECT_THROW(search_space({"wgmma"}, "most", Accum::F32), InputError);
}

TEST(Space, CublasLtNeedsAShapeAndGpu) {
  EXPECT_THROW(search_space({"cublaslt"}, "core", Accum::F32), InputError);
  EXPECT_TRUE(needs_gpu_space({"mma", "cublaslt"}));
  EXPECT_FALSE(needs_gpu_space({"mma", "wgmma"}));
  EXPECT_EQ(shape_independent({"cublaslt", "wgmma", "mma", "tiny", "sm90_cutlass"}),
            (std::vector<std::string>{"wgmma", "mma", "tiny", "sm90_cutlass"}));
  // Every shape-independent family of the CLI's example has a space.
  EXPECT_FALSE(search_space({"wgmma", "mma", "tiny", "sm90_cutlass"}, "core", Accum::F32).empty());
}

TEST(Space, ProblemSpaceGivesEachProblemItsLayoutAndItsOwnSpecs) {
  ProblemSpace ps;
  ps.common = search_space({"tiny"}, "core", Accum::F32);
  KernelSpec lt = default_spec(kCublasLtFamily);
  lt.layout = Layout::TN;
  ps.per_problem[problem_key({64, 64, 64}, Layout::TN)] = {lt};
  const auto tn = ps.for_problem({{64, 64, 64}, Layout::TN, Accum::F32});
  const auto nn = ps.for_problem({{64, 64, 64}, Layout::NN, Accum::F32});
  const auto other = ps.for_problem({{128, 64, 64}, Layout::TN, Accum::F32});
  EXPECT_EQ(tn.size(), other.size() + 1);
  EXPECT_EQ(tn.back(), lt);
  for (const auto& s : nn) EXPECT_EQ(s.layout, Layout::NN);
  EXPECT_EQ(ps.all().size(), ps.common.size() + 1);
}

// The parent side of the judge's lt-space op, against scripted judges.
class LtSpaceJudge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_lt_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string script(const std::string& body) {
    const auto p = dir_ / "judge.sh";
    std::ofstream(p) << "#!/bin/sh\nread line\n" << body << "\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(LtSpaceJudge, ParsesPerProblemSpecs) {
  const std::string spec = default_spec(kCublasLtFamily).text();
  const auto w = script(R"(echo '{"ok":true,"gpu":"G","spaces":[{"shape":[64,64,64],"layout":"nn","specs":[")" + spec +
                        R"("]},{"shape":[64,64,64],"layout":"tn","specs":[]}]}')");
  const auto got = judge_lt_space(w, {{64, 64, 64}}, {Layout::NN, Layout::TN}, Accum::F32, 4, 10);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first.shape, (Shape{64, 64, 64}));
  EXPECT_EQ(got[0].first.layout, Layout::NN);
  ASSERT_EQ(got[0].second.size(), 1u);
  EXPECT_EQ(got[0].second[0].text(), spec);
  EXPECT_EQ(got[1].first.layout, Layout::TN);
  EXPECT_TRUE(got[1].second.empty());
}

TEST_F(LtSpaceJudge, FailuresThrowWithTheReason) {
  EXPECT_THROW(judge_lt_space(script(R"(echo '{"ok":false,"error":"no GPU here"}')"), {{64, 64, 64}}, {Layout::NN},
                              Accum::F32, 4, 10),
               std::runtime_error);
  EXPECT_THROW(judge_lt_space(script("exit 3"), {{64, 64, 64}}, {Layout::NN}, Accum::F32, 4, 10), std::runtime_error);
  EXPECT_THROW(judge_lt_space(script(R"(echo '{"ok":true,"spaces":[{"shape":[64],"layout":"nn","specs":[]}]}')"),
                              {{64, 64, 64}}, {Layout::NN}, Accum::F32, 4, 10),
               std::runtime_error);
}

TEST(ScoreMeasurement, IsTheReward) {
  ScoreInput in;
  in.status = Status::Ok, in.time_us = 5, in.baseline_us = 10;
  EXPECT_DOUBLE_EQ(*score_measurement(in), 2.0);
  in.status = FailureKind::Hang;
  EXPECT_DOUBLE_EQ(*score_measurement(in), -0.8);
}

TEST(StoreReward, NewColumnRoundTripsAndOldStoresMigrate) {
  const auto dir = std::filesystem::temp_directory_path() / ("cudal2_reward_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "v1.db").string();
  {
    // A schema-1 store with one row, as an older cudal2 wrote it.
    store::sql::Db db(path);
    store::migrate(db, std::span<const std::string_view>(store::kMigrations.data(), 1));
    db.exec(
        "INSERT INTO specs (hash, family, text) VALUES ('h', 'mma', 'mma nn f32');"
        "INSERT INTO measurements (spec_hash, gpu, dtype, layout, m, n, k, mode, timer, status, median_us) "
        "VALUES ('h', 'G', 'f32', 'nn', 1, 2, 3, 'offline', 'graph', 'ok', 4.0)");
  }
  auto st = store::Store::open(path);
  EXPECT_EQ(st.schema_version(), store::Store::latest_schema_version());
  const auto rows = st.list_measurements({"G", "f32", "nn", 1, 2, 3, "offline"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].reward);
  store::MeasurementRow m = rows[0];
  m.reward = 1.25;
  const auto id = st.put_measurement(m).id;
  EXPECT_EQ(st.get_measurement(id)->reward, 1.25);
  EXPECT_EQ(st.list_measurements({"G", "f32", "nn", 1, 2, 3, "offline"}).size(), 2u);
  EXPECT_TRUE(st.list_measurements({"G", "f32", "nn", 1, 2, 3, "server"}).empty());
  std::filesystem::remove_all(dir);
}

// The loop's sink (tuner/record.hpp): each of eval's records is one row at once, under the run
// the sink began; the run is finished only when asked.
TEST(StoreSink, WritesEachRecordAsItsRowUnderItsRun) {
  const auto dir = std::filesystem::temp_directory_path() / ("cudal2_sink_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "sink.db").string();
  StoreSink sink(path, "cudal2 eval --spec x");
  ASSERT_FALSE(sink.run_id().empty());
  sink.spec({"h1", "tiny", "tiny nn f32 tile=16x16x32"});
  sink.build({"h1", "key1", "ok", 1.5, "nvcc log", "/cache/k.so"});
  MeasurementRecord m;
  m.spec_hash = "h1", m.gpu = "G", m.dtype = "f32", m.layout = "nn", m.m = 64, m.n = 32, m.k = 16;
  m.mode = "offline", m.timer = "graph", m.status = "ok";
  m.median_us = 10, m.p10_us = 9, m.p90_us = 11, m.min_us = 8.5, m.rel_err = 1e-4;
  m.baseline_json = R"({"cublas-nn":{"offline":{"graph":{"median":12.0}}}})";
  m.reward = 1.2;
  sink.measurement(m);
  MeasurementRecord f = m;
  f.timer = "eager", f.status = "wrong-result", f.failure = "max rel err 0.5";
  f.median_us = f.p10_us = f.p90_us = f.min_us = std::nullopt;
  f.reward = -1;
  sink.measurement(f);
  sink.flush();  // the end of the judge job: its rows go in together
  {
    // Another connection sees every row before the run ends: nothing waits for the end.
    auto db = store::Store::open(path);
    const auto spec = db.get_spec("h1");
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->family, "tiny");
    EXPECT_EQ(spec->text, "tiny nn f32 tile=16x16x32");
    const auto build = db.find_build("h1", "key1");
    ASSERT_TRUE(build);
    EXPECT_EQ(build->status, "ok");
    EXPECT_EQ(build->compile_seconds, 1.5);
    EXPECT_EQ(build->log, "nvcc log");
    EXPECT_EQ(build->artifact_path, "/cache/k.so");
    const auto rows = db.list_measurements({"G", "f32", "nn", 64, 32, 16, "offline"});
    ASSERT_EQ(rows.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      auto want = measurement_row(i == 0 ? m : f, sink.run_id());
      want.id = rows[i].id, want.created_at = rows[i].created_at;
      EXPECT_EQ(rows[i], want) << i;
      EXPECT_EQ(rows[i].run_id, sink.run_id());
    }
    EXPECT_EQ(rows[0].median_us, 10.0);
    EXPECT_EQ(rows[1].failure, "max rel err 0.5");
    EXPECT_EQ(rows[1].reward, -1.0);
    ASSERT_TRUE(db.get_best({"G", "f32", "nn", 64, 32, 16}));  // the ok graph row is the best
    EXPECT_EQ(db.get_best({"G", "f32", "nn", 64, 32, 16})->measurement_id, rows[0].id);
    const auto run = db.get_run(sink.run_id());
    ASSERT_TRUE(run);
    EXPECT_EQ(run->command, "cudal2 eval --spec x");
    EXPECT_FALSE(run->finished_at);
  }
  sink.finish();
  EXPECT_TRUE(store::Store::open(path).get_run(sink.run_id())->finished_at);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cudal2::search

namespace cudal2::search {
namespace {

using tuner::parse_gpus;
using tuner::run_tune;
using tuner::TuneOptions;
using tuner::visible_device_of;

// The scripted judges' answer to an eval job `req` (Python, inside their loop over stdin):
// candidate i takes 10 + i us, every baseline 12 us.
constexpr const char* kAnswerEvalJob = R"(    shapes = []
    for m, n, k in req["shapes"]:
        methods = [{"method": c["name"], "status": "ok", "failure": "", "reason": "", "rel_err": 1e-4,
                    "timing": {"offline": {"graph": {"median": 10.0 + i, "p10": 9.0, "p90": 11.0 + i,
                                                     "min": 9.0, "n": 5}}}}
                   for i, c in enumerate(req["candidates"])]
        methods += [{"method": b, "status": "ok", "failure": "", "reason": "", "rel_err": None,
                     "timing": {"offline": {"graph": {"median": 12.0, "p10": 12.0, "p90": 12.0, "min": 12.0,
                                                      "n": 5}}}} for b in req["baselines"]]
        shapes.append({"m": m, "n": n, "k": k, "methods": methods})
    print(json.dumps({"ok": True, "gpu": "unknown", "shapes": shapes}), flush=True)
)";

// The store's run rows as (command, finished), sorted: read with SQL, as the store has no call
// that lists them.
std::vector<std::pair<std::string, bool>> run_rows(const std::string& db_path) {
  std::vector<std::pair<std::string, bool>> out;
  sqlite3* db = nullptr;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT command, finished_at IS NOT NULL FROM runs", -1, &s, nullptr) == SQLITE_OK)
    while (sqlite3_step(s) == SQLITE_ROW)
      out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), sqlite3_column_int(s, 1) != 0);
  sqlite3_finalize(s);
  sqlite3_close_v2(db);
  std::sort(out.begin(), out.end());
  return out;
}

// run_tune end to end on the CPU: the JIT really compiles, a scripted judge answers every eval
// job with fixed times (candidate i: 10 + i us, cublas-nn 12 us), the store gets rows with their
// rewards, and a rerun of the same command resumes with the next candidates.
class TuneLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_tune_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    judge_ = (dir_ / "judge.py").string();
    std::ofstream(judge_) << R"(#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    req = json.loads(line)
)" << kAnswerEvalJob;
    std::filesystem::permissions(judge_, std::filesystem::perms::owner_all);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  TuneOptions options() const {
    TuneOptions o;
    o.eval.shapes = {{64, 64, 64}};
    o.eval.timers = {true, false, false};
    o.eval.baselines = {"cublas-nn"};
    o.db_path = (dir_ / "tune.db").string();
    o.eval.judge_exe = judge_;
    o.eval.batch = 2;
    o.eval.progress = false;
    o.families = {"tiny"};
    o.budget = 2;
    o.progress = false;
    o.check_gpu = false;
    return o;
  }
  std::filesystem::path dir_;
  std::string judge_;
};

TEST_F(TuneLoop, ExhaustiveStoresRewardsAndResumes) {
  const auto space = search_space({"tiny"}, "full", Accum::F32);
  const auto first = run_tune(options());
  EXPECT_EQ(first.space_size, space.size());
  EXPECT_EQ(first.rounds, 1);
  ASSERT_EQ(first.outcomes.size(), 2u);
  EXPECT_EQ(first.outcomes[0].spec_text, space[0].text());
  EXPECT_EQ(first.outcomes[1].spec_text, space[1].text());
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(first.outcomes[i].status, Status::Ok) << first.outcomes[i].detail;
    EXPECT_DOUBLE_EQ(first.outcomes[i].score.at("64x64x64"), 12.0 / (10.0 + static_cast<double>(i)));
    EXPECT_DOUBLE_EQ(first.outcomes[i].baseline_us.at("64x64x64"), 12.0);
  }
  {
    auto db = store::Store::open(options().db_path);
    const auto rows = db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_DOUBLE_EQ(*rows[0].reward, 1.2);
  }
  // The same command again: the next two of the space, nothing measured twice.
  const auto second = run_tune(options());
  ASSERT_EQ(second.outcomes.size(), 2u);
  EXPECT_EQ(second.outcomes[0].spec_text, space[2].text());
  EXPECT_EQ(second.outcomes[1].spec_text, space[3].text());
  // Random with another budget proposes none of the four already known.
  auto o = options();
  o.search = "random";
  o.policy.seed = 3;
  const auto third = run_tune(o);
  ASSERT_EQ(third.outcomes.size(), 2u);
  for (const auto& c : third.outcomes)
    for (size_t i = 0; i < 4; ++i) EXPECT_NE(c.spec_text, space[i].text());
}

// --layouts tn (a model's linear layers): every candidate proposed and measured is TN, none NN;
// no layout at all is refused before anything runs.
TEST_F(TuneLoop, LayoutsLimitTheProblemsToThoseNamed) {
  auto o = options();
  o.layouts = {Layout::TN};
  o.budget = 6;
  const auto r = run_tune(o);
  ASSERT_EQ(r.outcomes.size(), 6u);
  for (const auto& c : r.outcomes) EXPECT_NE(c.spec_text.find("tiny tn "), std::string::npos) << c.spec_text;
  auto db = store::Store::open(o.db_path);
  EXPECT_TRUE(db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"}).empty());
  EXPECT_EQ(db.list_measurements({"unknown", "f32", "tn", 64, 64, 64, "offline"}).size(), 6u);
  o.layouts.clear();
  EXPECT_THROW(run_tune(o), InputError);
}

// cuBLASLt-neighbourhood specs belong to the shapes whose space holds them. On a resumed run a
// spec already measured on one shape and new in another's space is measured on the new shape
// only (it used to be measured again on every shape whose space held it).
TEST_F(TuneLoop, ResumedOwnSpaceSpecsAreMeasuredOnlyWhereMissing) {
  const auto log = dir_ / "jobs.log";
  const std::string lt =
      "cublaslt nn f32 algo={} tile=20 stages=8 reduction=0 swizzle=0 custom=0 inner=0 "
      "cluster=auto | splits=1";
  const std::string s1 = fmt::format(fmt::runtime(lt), 1), s2 = fmt::format(fmt::runtime(lt), 2),
                    s3 = fmt::format(fmt::runtime(lt), 3);
  const std::string judge = (dir_ / "ltjudge.py").string();
  std::ofstream(judge) << "#!/usr/bin/env python3\nimport json, sys\n"
                       << "SPACE = {'64x64x64': ['" << s1 << "', '" << s2 << "'], '128x64x64': ['" << s1 << "', '" << s3
                       << "']}\n"
                       << R"(for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "lt-space":
        spaces = [{"shape": s, "layout": l, "specs": SPACE["x".join(map(str, s))] if l == "nn" else []}
                  for s in req["shapes"] for l in req["layouts"]]
        print(json.dumps({"ok": True, "gpu": "unknown", "spaces": spaces}), flush=True)
        continue
    with open(")" << log.string()
                       << R"(", "a") as f:
        f.write(json.dumps({"shapes": req["shapes"], "specs": [c["spec"] for c in req["candidates"]]}) + "\n")
)" << kAnswerEvalJob;
  std::filesystem::permissions(judge, std::filesystem::perms::owner_all);
  auto o = options();
  o.families = {"cublaslt"};
  o.budget = 0;
  o.eval.judge_exe = judge;
  o.eval.batch = 8;
  const auto first = run_tune(o);  // 64x64x64 alone: s1 and s2 there
  ASSERT_EQ(first.outcomes.size(), 2u);
  std::filesystem::remove(log);
  o.eval.shapes = {{64, 64, 64}, {128, 64, 64}};
  const auto second = run_tune(o);  // s1 and s3 are missing on 128x64x64, nothing on 64x64x64
  ASSERT_EQ(second.outcomes.size(), 2u);
  std::ifstream in(log);
  std::vector<nlohmann::json> jobs;
  for (std::string line; std::getline(in, line);) jobs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["shapes"], nlohmann::json::parse("[[128,64,64]]"));
  auto specs = jobs[0]["specs"].get<std::vector<std::string>>();
  std::sort(specs.begin(), specs.end());
  EXPECT_EQ(specs, (std::vector<std::string>{s1, s3}));
}

// A GPU that stays disturbed (every candidate faults, the trusted canary never healthy): every
// outcome is gpu-disturbed, nothing is stored or rewarded, and the loop stops after the round
// instead of proposing the same candidates again and again; a later run measures them.
TEST_F(TuneLoop, ARoundTheGpuWasDisturbedForStoresNothingAndStops) {
  const std::string lt =
      "cublaslt nn f32 algo={} tile=20 stages=8 reduction=0 swizzle=0 custom=0 inner=0 "
      "cluster=auto | splits=1";
  const std::string s1 = fmt::format(fmt::runtime(lt), 1), s2 = fmt::format(fmt::runtime(lt), 2);
  const std::string judge = (dir_ / "disturbed.py").string();
  std::ofstream(judge) << "#!/usr/bin/env python3\nimport json, sys\n"
                       << "SPACE = ['" << s1 << "', '" << s2 << "']\n"
                       << R"(for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "lt-space":
        spaces = [{"shape": s, "layout": l, "specs": SPACE if l == "nn" else []}
                  for s in req["shapes"] for l in req["layouts"]]
        print(json.dumps({"ok": True, "gpu": "unknown", "spaces": spaces}), flush=True)
    elif req["op"] == "canary":
        print(json.dumps({"ok": True, "healthy": False, "reason": "cudaErrorLaunchFailure"}), flush=True)
    else:
        shapes = [{"m": m, "n": n, "k": k, "methods": [
                      {"method": c["name"], "status": "failed", "failure": "illegal-address",
                       "reason": "cudaErrorIllegalAddress", "rel_err": None, "timing": {}}
                      for c in req["candidates"]]} for m, n, k in req["shapes"]]
        print(json.dumps({"ok": True, "gpu": "unknown", "shapes": shapes}), flush=True)
)";
  std::filesystem::permissions(judge, std::filesystem::perms::owner_all);
  auto o = options();
  o.families = {"cublaslt"};
  o.budget = 0;
  o.round = 1;
  o.eval.judge_exe = judge;
  o.eval.attribution.max_attempts = 2;
  o.eval.attribution.first_backoff_s = 0.01;
  const auto r = run_tune(o);
  EXPECT_EQ(r.rounds, 1);  // not round after round of the same disturbed candidate
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].status, Status::GpuDisturbed) << r.outcomes[0].detail;
  EXPECT_TRUE(r.outcomes[0].score.empty());
  auto db = store::Store::open(o.db_path);
  EXPECT_TRUE(db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"}).empty());
}

// --round 0 --per-problem 1: every problem proposes one spec per round (its next one here, in
// exhaustive order), each measured on the shapes that proposed it; --rounds stops the loop.
TEST_F(TuneLoop, PerProblemRoundsGiveEveryProblemOneEvaluationEach) {
  const auto log = dir_ / "jobs.log";
  const std::string lt =
      "cublaslt nn f32 algo={} tile=20 stages=8 reduction=0 swizzle=0 custom=0 inner=0 "
      "cluster=auto | splits=1";
  const std::string s1 = fmt::format(fmt::runtime(lt), 1), s2 = fmt::format(fmt::runtime(lt), 2),
                    s3 = fmt::format(fmt::runtime(lt), 3);
  const std::string judge = (dir_ / "ltjudge.py").string();
  std::ofstream(judge) << "#!/usr/bin/env python3\nimport json, sys\n"
                       << "SPACE = {'64x64x64': ['" << s1 << "', '" << s2 << "', '" << s3 << "'], '128x64x64': ['" << s3
                       << "', '" << s1 << "', '" << s2 << "']}\n"
                       << R"(for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "lt-space":
        spaces = [{"shape": s, "layout": l, "specs": SPACE["x".join(map(str, s))] if l == "nn" else []}
                  for s in req["shapes"] for l in req["layouts"]]
        print(json.dumps({"ok": True, "gpu": "unknown", "spaces": spaces}), flush=True)
        continue
    with open(")" << log.string()
                       << R"(", "a") as f:
        for s in req["shapes"]:
            for c in req["candidates"]:
                f.write(json.dumps({"shape": "x".join(map(str, s)), "spec": c["spec"]}) + "\n")
)" << kAnswerEvalJob;
  std::filesystem::permissions(judge, std::filesystem::perms::owner_all);
  auto o = options();
  o.families = {"cublaslt"};
  o.budget = 0;
  o.round = 0;
  o.per_problem = 1;
  o.max_rounds = 2;
  o.eval.judge_exe = judge;
  o.eval.shapes = {{64, 64, 64}, {128, 64, 64}};
  auto measured = [&] {
    std::map<std::string, std::vector<std::string>> on;  // shape -> specs, in the order measured
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      on[j["shape"].get<std::string>()].push_back(j["spec"].get<std::string>());
    }
    return on;
  };
  const auto first = run_tune(o);
  EXPECT_EQ(first.rounds, 2);
  EXPECT_EQ(first.outcomes.size(), 4u);  // round 1: s1 (64), s3 (128); round 2: s2 (64), s1 (128)
  auto on = measured();
  EXPECT_EQ(on["64x64x64"], (std::vector<std::string>{s1, s2}));
  EXPECT_EQ(on["128x64x64"], (std::vector<std::string>{s3, s1}));
  // Resumed without a round limit: the third round takes what is left, then nothing is.
  o.max_rounds = 0;
  const auto second = run_tune(o);
  EXPECT_EQ(second.rounds, 1);
  EXPECT_EQ(second.outcomes.size(), 2u);
  on = measured();
  EXPECT_EQ(on["64x64x64"], (std::vector<std::string>{s1, s2, s3}));
  EXPECT_EQ(on["128x64x64"], (std::vector<std::string>{s3, s1, s2}));
  o.per_problem = -1;
  EXPECT_THROW(run_tune(o), InputError);
  o.per_problem = 1;
  o.max_rounds = -2;
  EXPECT_THROW(run_tune(o), InputError);
}

// The same for the common space of our own families: on a resumed run with a new shape, a spec
// already measured on the old shape is measured on the new one only (a resumed 14-shape
// wgmma_swapab run on the H100 spent its whole budget measuring the 7 finished shapes again).
TEST_F(TuneLoop, ResumedCommonSpaceSpecsAreMeasuredOnlyWhereMissing) {
  const auto log = dir_ / "jobs.log";
  const std::string judge = (dir_ / "logjudge.py").string();
  std::ofstream(judge) << "#!/usr/bin/env python3\nimport json, sys\n"
                       << R"(for line in sys.stdin:
    req = json.loads(line)
    with open(")" << log.string()
                       << R"(", "a") as f:
        f.write(json.dumps({"shapes": req["shapes"], "specs": [c["spec"] for c in req["candidates"]]}) + "\n")
)" << kAnswerEvalJob;
  std::filesystem::permissions(judge, std::filesystem::perms::owner_all);
  const auto space = search_space({"tiny"}, "full", Accum::F32);
  auto o = options();
  o.eval.judge_exe = judge;
  ASSERT_EQ(run_tune(o).outcomes.size(), 2u);  // space[0] and space[1] on 64x64x64
  std::filesystem::remove(log);
  o.eval.shapes = {{64, 64, 64}, {128, 64, 64}};
  o.budget = 4;
  run_tune(o);
  std::ifstream in(log);
  int jobs = 0, on_new = 0;
  for (std::string line; std::getline(in, line); ++jobs) {
    const auto j = nlohmann::json::parse(line);
    const auto shapes = j["shapes"].dump();
    on_new += shapes.find("128") != std::string::npos;
    if (shapes.find("[64,64,64]") == std::string::npos) continue;
    for (const auto& spec : j["specs"]) {
      EXPECT_NE(spec.get<std::string>(), space[0].text()) << "measured again on 64x64x64: " << line;
      EXPECT_NE(spec.get<std::string>(), space[1].text()) << "measured again on 64x64x64: " << line;
    }
  }
  EXPECT_GT(jobs, 0);
  EXPECT_GT(on_new, 0);
}

// A tune of several rounds is one run: one run row, finished, every measurement under it (each
// round used to begin a run of its own). A resume is another invocation, so another run.
TEST_F(TuneLoop, RoundsOfOneTuneShareOneRun) {
  auto o = options();
  o.layouts = {Layout::NN};
  o.round = 1;
  o.budget = 3;
  o.eval.command_line = "cudal2 tune --round 1";
  const auto r = run_tune(o);
  EXPECT_EQ(r.rounds, 3);
  ASSERT_EQ(r.outcomes.size(), 3u);
  EXPECT_EQ(run_rows(o.db_path), (std::vector<std::pair<std::string, bool>>{{o.eval.command_line, true}}));
  {
    auto db = store::Store::open(o.db_path);
    const auto rows = db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"});
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& row : rows) EXPECT_EQ(row.run_id, rows[0].run_id);
    ASSERT_TRUE(db.get_run(rows[0].run_id));
    EXPECT_EQ(db.get_run(rows[0].run_id)->command, o.eval.command_line);
  }
  o.budget = 2;
  EXPECT_EQ(run_tune(o).rounds, 2);
  EXPECT_EQ(run_rows(o.db_path).size(), 2u);
}

// A stop (SIGTERM) during a round: the job in flight is recorded, no new round starts, and the
// tune's run is finished, not left looking like one that died. The scripted judge holds its first
// job until the test has set the stop flag.
TEST_F(TuneLoop, AStoppedTuneFinishesItsRun) {
  const auto started = dir_ / "started", go = dir_ / "go";
  const std::string judge = (dir_ / "held.py").string();
  std::ofstream(judge) << R"(#!/usr/bin/env python3
import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    if not os.path.exists(")"
                       << started.string() << R"("):
        open(")" << started.string()
                       << R"(", "w").close()
        for _ in range(1000):
            if os.path.exists(")"
                       << go.string() << R"("):
                break
            time.sleep(0.01)
)" << kAnswerEvalJob;
  std::filesystem::permissions(judge, std::filesystem::perms::owner_all);
  auto o = options();
  o.round = 1;
  o.budget = 3;
  o.eval.judge_exe = judge;
  std::atomic<bool> stop{false};
  o.stop = &stop;
  std::thread stopper([&] {
    for (int i = 0; i < 1000 && !std::filesystem::exists(started); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
    std::ofstream(go.string()) << "go\n";  // always, so that the judge never waits out its loop
  });
  const auto r = run_tune(o);
  stopper.join();
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.rounds, 1);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].status, Status::Ok) << r.outcomes[0].detail;
  const auto runs = run_rows(o.db_path);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].second) << "a stopped tune's run is finished";
}

// `tune --gpus`: two lanes, each with a scripted judge that writes the CUDA_VISIBLE_DEVICES it
// was started with and the specs it measured to a log, so the test sees which lane measured what.
class TuneLanes : public TuneLoop {
 protected:
  void SetUp() override {
    TuneLoop::SetUp();
    log_ = (dir_ / "lanes.log").string();
    std::ofstream(judge_) << R"(#!/usr/bin/env python3
import json, os, sys
for line in sys.stdin:
    req = json.loads(line)
    with open(")" << log_ << R"(", "a") as log:
        for c in req["candidates"]:
            log.write(os.environ.get("CUDA_VISIBLE_DEVICES", "-") + "\t" + c["spec"] + "\n")
)" << kAnswerEvalJob;
    // The tuner sees GPUs 0 and 1, which are the machine's 5 and 7: the lanes' judges get those.
    saved_ = std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "";
    had_ = std::getenv("CUDA_VISIBLE_DEVICES") != nullptr;
    setenv("CUDA_VISIBLE_DEVICES", "5,7", 1);
  }
  void TearDown() override {
    if (had_)
      setenv("CUDA_VISIBLE_DEVICES", saved_.c_str(), 1);
    else
      unsetenv("CUDA_VISIBLE_DEVICES");
    TuneLoop::TearDown();
  }
  TuneOptions lanes() const {
    auto o = options();
    o.gpus = "all";
    o.gpu_count = 2;
    o.budget = 6;
    o.round = 2;
    o.eval.batch = 1;
    return o;
  }
  // spec text -> the CUDA_VISIBLE_DEVICES values of the judges that measured it
  std::map<std::string, std::vector<std::string>> measured() const {
    std::map<std::string, std::vector<std::string>> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      const auto tab = line.find('\t');
      out[line.substr(tab + 1)].push_back(line.substr(0, tab));
    }
    return out;
  }
  std::string log_, saved_;
  bool had_ = false;
};

TEST_F(TuneLanes, EveryCandidateOnceOnItsLanesGpuObservedAndStored) {
  const auto space = search_space({"tiny"}, "full", Accum::F32);
  ASSERT_GE(space.size(), 8u);
  const auto first = run_tune(lanes());
  // Three rounds of two: had the policy not observed both lanes' results, a round would repeat one.
  EXPECT_EQ(first.rounds, 3);
  ASSERT_EQ(first.outcomes.size(), 6u);
  ASSERT_EQ(first.lanes.size(), 2u);
  EXPECT_EQ(first.lanes[0].device, "5");
  EXPECT_EQ(first.lanes[1].device, "7");
  EXPECT_EQ(first.lanes[0].candidates + first.lanes[1].candidates, 6);
  EXPECT_EQ(first.lanes[0].candidates, 3);  // dealt round-robin
  const auto seen = measured();
  EXPECT_EQ(seen.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const auto& c = first.outcomes[i];
    EXPECT_EQ(c.spec_text, space[i].text());  // the space's order, as on one GPU
    ASSERT_EQ(c.status, Status::Ok) << c.detail;
    EXPECT_EQ(c.device, i % 2 == 0 ? "5" : "7");
    ASSERT_TRUE(seen.count(c.spec_text)) << c.spec_text;
    EXPECT_EQ(seen.at(c.spec_text), std::vector<std::string>{c.device}) << "measured once, by its lane's judge";
  }
  {
    auto db = store::Store::open(lanes().db_path);
    const auto rows = db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"});
    std::set<std::string> hashes;
    for (const auto& r : rows) hashes.insert(r.spec_hash);
    EXPECT_EQ(rows.size(), 6u);  // one graph row per candidate: stored once
    EXPECT_EQ(hashes.size(), 6u);
  }
  // A rerun resumes: the next candidates of the space, none measured twice.
  auto again = lanes();
  again.budget = 2;
  const auto second = run_tune(again);
  ASSERT_EQ(second.outcomes.size(), 2u);
  EXPECT_EQ(second.outcomes[0].spec_text, space[6].text());
  EXPECT_EQ(second.outcomes[1].spec_text, space[7].text());
  for (const auto& [spec, judges] : measured()) EXPECT_EQ(judges.size(), 1u) << spec;
}

// Three rounds on two lanes: one run row per lane for the whole tune (each round used to begin a
// run per lane), each naming its lane's GPU, finished, and holding the rows its judge measured.
TEST_F(TuneLanes, EachLaneIsOneRunForTheWholeTune) {
  auto o = lanes();
  o.eval.command_line = "cudal2 tune --gpus all";
  const auto r = run_tune(o);
  EXPECT_EQ(r.rounds, 3);
  ASSERT_EQ(r.outcomes.size(), 6u);
  const std::string lane0 = o.eval.command_line + " [gpu 0: CUDA_VISIBLE_DEVICES=5]";
  const std::string lane1 = o.eval.command_line + " [gpu 1: CUDA_VISIBLE_DEVICES=7]";
  EXPECT_EQ(run_rows(o.db_path), (std::vector<std::pair<std::string, bool>>{{lane0, true}, {lane1, true}}));
  auto db = store::Store::open(o.db_path);
  std::map<std::string, std::string> run_of;  // spec hash -> the command of its row's run
  for (const auto& row : db.list_measurements({"unknown", "f32", "nn", 64, 64, 64, "offline"})) {
    ASSERT_TRUE(db.get_run(row.run_id));
    run_of[row.spec_hash] = db.get_run(row.run_id)->command;
  }
  ASSERT_EQ(run_of.size(), 6u);
  for (const auto& c : r.outcomes) EXPECT_EQ(run_of[c.spec_hash], c.device == "5" ? lane0 : lane1) << c.spec_text;
}

// Three rounds on two lanes: each lane's evaluations all go to one judge process (CUDA started
// once per lane, not once per round), which lives until the tune ends.
TEST_F(TuneLanes, EachLaneKeepsOneJudgeForTheWholeTune) {
  const std::string pids = (dir_ / "pids.log").string();
  std::ofstream(judge_) << R"(#!/usr/bin/env python3
import json, os, sys
for line in sys.stdin:
    req = json.loads(line)
    with open(")" << pids
                        << R"(", "a") as log:
        log.write(os.environ.get("CUDA_VISIBLE_DEVICES", "-") + "\t" + str(os.getpid()) + "\n")
)" << kAnswerEvalJob;
  const auto r = run_tune(lanes());
  EXPECT_EQ(r.rounds, 3);
  ASSERT_EQ(r.outcomes.size(), 6u);
  std::map<std::string, std::set<std::string>> judges;  // device -> judge pids
  std::map<std::string, int> jobs;
  std::ifstream in(pids);
  for (std::string line; std::getline(in, line);) {
    const auto tab = line.find('\t');
    judges[line.substr(0, tab)].insert(line.substr(tab + 1));
    ++jobs[line.substr(0, tab)];
  }
  ASSERT_EQ(judges.size(), 2u);
  for (const auto& [device, p] : judges) {
    EXPECT_EQ(jobs[device], 3) << device << ": a job a round (batch 1, one candidate a lane a round)";
    EXPECT_EQ(p.size(), 1u) << device << ": one judge for the lane's three rounds";
  }
  for (const auto& [device, p] : judges)
    for (const auto& pid : p) EXPECT_NE(::kill(std::stoi(pid), 0), 0) << "the lane's judge outlived the tune";
}

TEST(TuneGpus, ParsesAllAndListsAndRefusesTheRest) {
  EXPECT_EQ(parse_gpus("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_gpus("1,0", 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(parse_gpus(" 0, 2 ", 4), (std::vector<int>{0, 2}));
  for (const char* bad : {"", "2", "0,0", "-1", "0,,1", "x", "1.5", "0,1,"})
    EXPECT_THROW(parse_gpus(bad, 2), InputError) << bad;
  EXPECT_THROW(parse_gpus("all", 0), InputError);
  EXPECT_THROW(parse_gpus("0", 0), InputError);
}

TEST(TuneGpus, VisibleDeviceFollowsTheParentsList) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(visible_device_of(1), "1");
  setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa,3", 1);
  EXPECT_EQ(visible_device_of(0), "GPU-aaaa");
  EXPECT_EQ(visible_device_of(1), "3");
  EXPECT_THROW(visible_device_of(2), InputError);
  if (old)
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else
    unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
}  // namespace cudal2::search

// Merged from tune_test.cpp (one unit-test file per area).
namespace cudal2 {
namespace tune_test_cases {

using search::search_space;

TEST(SearchSpace, CoreIsAValidSubsetOfFullCoveringBothLayouts) {
  const auto full = search_space({"sm90_cutlass"}, "full", Accum::F32);
  const auto core = search_space({"sm90_cutlass"}, "core", Accum::F32);
  std::set<std::string> full_texts;
  for (const auto& s : full) full_texts.insert(s.text());
  EXPECT_EQ(full_texts.size(), full.size()) << "duplicates in the full space";
  EXPECT_EQ(full.size(), 2u * 368u);  // docs/kernel-space.md: 368 per layout and accumulator
  int nn = 0;
  for (const auto& s : core) {
    EXPECT_TRUE(full_texts.count(s.text())) << s.text();
    EXPECT_EQ(invalid_reason(s), "") << s.text();
    EXPECT_EQ(s.tile_k, 64);
    EXPECT_LE(s.cluster_m * s.cluster_n, 2);
    nn += s.layout == Layout::NN;
  }
  EXPECT_EQ(core.size(), 2u * static_cast<size_t>(nn));  // the same configurations for NN and TN
  EXPECT_EQ(core.size(), 2u * 54u);                      // docs/tuning.md
}

TEST(SearchSpace, OwnFamiliesBringTheirSplitCounts) {
  const auto mma = search_space({"mma"}, "core", Accum::F32);
  ASSERT_FALSE(mma.empty());
  std::set<int> splits;
  for (const auto& s : mma) {
    EXPECT_EQ(s.family, "mma");
    EXPECT_EQ(invalid_reason(s), "") << s.text();
    splits.insert(s.splits);
  }
  EXPECT_GT(splits.size(), 1u);
  const auto both = search_space({"mma", "sm90_cutlass"}, "core", Accum::F32);
  EXPECT_EQ(both.size(), mma.size() + search_space({"sm90_cutlass"}, "core", Accum::F32).size());
}

TEST(SearchSpace, RejectsUnknownNames) {
  EXPECT_THROW(search_space({"sm90_cutlass"}, "most", Accum::F32), InputError);
  EXPECT_THROW(search_space({"no_such_family"}, "full", Accum::F32), InputError);
}

TEST(FailureKinds, VerificationChecksMapToKinds) {
  // The word a failed check is stored under.
  auto stored = [](const char* check) { return std::string(to_string(Outcome(*parse_failure_kind(check)))); };
  EXPECT_EQ(stored("out-of-bounds write"), "out-of-bounds");
  for (const char* c : {"exact mismatch", "normal error", "unwritten output", "NaN/Inf"})
    EXPECT_EQ(stored(c), "wrong-result") << c;
  EXPECT_EQ(stored("error"), "error");
  EXPECT_EQ(stored(""), "error");  // a failure nobody named
  // The judge reports kinds directly; they pass through, anything unknown is not a kind.
  for (const char* k : {"input-modified", "implausible-time", "timing-mismatch", "inconsistent-time", "host-thread",
                        "wrong-result", "out-of-bounds", "crash", "hang", "protocol-error"})
    EXPECT_EQ(stored(k), k);
  EXPECT_FALSE(parse_failure_kind("ok"));
}

}  // namespace tune_test_cases
}  // namespace cudal2
