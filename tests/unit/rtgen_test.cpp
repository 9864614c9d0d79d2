// cudal2_rtgen (src/runtime/rtgen.cpp), the runtime's build step, on a small table with one
// compiled kernel (tiny) and one `cublaslt` configuration: only the tiny kernel gets a .cu, the
// cublaslt one is data in table.cpp (its configuration numbers, no function pointers), entries
// keep their runtime knobs, stale kernel files go, and bad tables are refused. Several tables (one
// per GPU) become one library: each with its own kernel prefix, GPU and compute capability.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_command.hpp"

#ifndef CUDAL2_RTGEN
#error "CUDAL2_RTGEN (path to cudal2_rtgen) must be defined by the build"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kLt = "cublaslt nn f32 algo=66 tile=12 stages=35 reduction=2 swizzle=1 custom=3 inner=0 cluster=2x1";
const std::string kTiny = "tiny nn f32 tile=16x16x32 warps=1x1 kwarps=4";
const std::string kTiny2 = "tiny nn f32 tile=16x16x32 warps=1x1 kwarps=2";

using Outcome = cudal2::test_util::CommandOutcome;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class RtgenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cudal2_rtgen_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static nlohmann::json entry(int64_t m, int64_t n, int64_t k, int kernel, const std::string& spec, double us) {
    return {{"accum", "f32"},
            {"layout", "nn"},
            {"m", m},
            {"n", n},
            {"k", k},
            {"spec", spec},
            {"us", us},
            {"baselines", {{"cublaslt-heuristic-nn", {{"us", 120.0}, {"ratio", 1.0}}}}},
            {"run", {{"kernel", kernel}, {"spec", spec}, {"us", us}}}};
  }
  static nlohmann::json table() {
    return {{"format", "cudal2-table"},
            {"version", 1},
            {"gpu", "NVIDIA H100 80GB HBM3"},
            {"kernels", {kLt, kTiny}},
            {"entries",
             {entry(64, 64, 256, 0, kLt + " | splits=3", 2.5), entry(64, 64, 64, 1, kTiny + " | splits=1", 1.5),
              entry(4096, 4096, 4096, -1, "cublaslt", 120)}}};
  }
  // more: further table files, written as more<i>.json and listed after table.json.
  Outcome rtgen(const nlohmann::json& t, const std::vector<nlohmann::json>& more = {}) {
    std::ofstream(dir_ / "table.json") << t.dump(1);
    std::ostringstream cmd;
    cmd << "'" << CUDAL2_RTGEN << "' '" << (dir_ / "gen").string() << "' '" << (dir_ / "table.json").string() << "'";
    for (size_t i = 0; i < more.size(); ++i) {
      const auto p = dir_ / ("more" + std::to_string(i) + ".json");
      std::ofstream(p) << more[i].dump(1);
      cmd << " '" << p.string() << "'";
    }
    cmd << " 2>&1";
    return cudal2::test_util::run_command(cmd.str());
  }
  fs::path dir_;
};

TEST_F(RtgenTest, CublasLtKernelsAreDataNotSources) {
  fs::create_directories(dir_ / "gen");
  std::ofstream(dir_ / "gen" / "kernel_0.cu") << "// from an earlier table\n";
  std::ofstream(dir_ / "gen" / "t0_k0.cu") << "// from an earlier table\n";
  std::ofstream(dir_ / "gen" / "t0_k7.cu") << "// from an earlier table\n";
  const auto o = rtgen(table());
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("1 compiled, 1 cublaslt"), std::string::npos) << o.output;
  // Only the tiny kernel is compiled; stale kernel files are gone.
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "kernel_0.cu"));
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "t0_k0.cu"));
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "t0_k7.cu"));
  ASSERT_TRUE(fs::exists(dir_ / "gen" / "t0_k1.cu"));
  EXPECT_NE(slurp(dir_ / "gen" / "t0_k1.cu").find("#define cudal2_run cudal2_rt_t0_k1_run"), std::string::npos);
  const std::string t = slurp(dir_ / "gen" / "table.cpp");
  // The cublaslt kernel: its text, cublaslt = true, the configuration (algo, tile, stages,
  // reduction, swizzle, custom, inner, cluster id: 2x1 is CUBLASLT_CLUSTER_SHAPE_2x1x1 = 3), no code.
  EXPECT_NE(t.find("{\"" + kLt +
                   "\", \"cublaslt\", 0, 0, 0, 0, 0, true, true, {66, 12, 35, 2, 1, 3, 0, 3}, "
                   "nullptr, nullptr, nullptr},"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("cudal2_rt_t0_k0_"), std::string::npos);
  EXPECT_NE(t.find("&cudal2_rt_t0_k1_run"), std::string::npos);
  EXPECT_NE(t.find("int cudal2_rt_t0_k1_run("), std::string::npos);
  // Entries: the cublaslt one keeps its split count (3), sorted by shape; whole-number times are
  // valid float literals.
  EXPECT_NE(t.find("{0, 0, 64, 64, 256, 0, 0, 1, 0, 3, \"" + kLt + " | splits=3\", 2.5f, 120.0f},"), std::string::npos)
      << t;
  EXPECT_NE(t.find("{0, 0, 4096, 4096, 4096, -1, 0, 1, 0, 1, \"cublaslt\", 120.0f, 120.0f},"), std::string::npos) << t;
  EXPECT_LT(t.find("64, 64, 64, 1"), t.find("64, 64, 256, 0"));
  // The table: its GPU, file, compute capability (9.0 unless the table says), 2 kernels, 3 entries.
  EXPECT_NE(t.find("{\"NVIDIA H100 80GB HBM3\", \"table.json\", 9, 0, kKernels0, 2, kEntries0, 3},"), std::string::npos)
      << t;
  EXPECT_NE(t.find("const int kNumTables = 1;"), std::string::npos);
  // Unchanged output is not rewritten (nothing rebuilds).
  const auto before = fs::last_write_time(dir_ / "gen" / "table.cpp");
  ASSERT_EQ(rtgen(table()).code, 0);
  EXPECT_EQ(fs::last_write_time(dir_ / "gen" / "table.cpp"), before);
}

TEST_F(RtgenTest, RefusesBadCublasLtKernels) {
  auto t = table();
  t["kernels"][0] = "cublaslt nn f32 algo=66 tile=12 stages=35 reduction=3 swizzle=0 custom=0 inner=0 cluster=1x1";
  auto o = rtgen(t);
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.output.find("reduction 3"), std::string::npos) << o.output;
  t = table();
  t["entries"][0]["run"]["spec"] =
      "cublaslt nn f32 algo=66 tile=13 stages=35 reduction=2 swizzle=1 custom=3 inner=0 "
      "cluster=2x1 | splits=3";  // not kernel 0
  o = rtgen(t);
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.output.find("is not kernel 0"), std::string::npos) << o.output;
}

// Two tables, one per GPU: both in table.cpp with their own arrays and kernel prefixes, each
// table's GPU and compute capability ("cc" in the table, else 9.0). A kernel both list is
// compiled once: the second table calls the first one's functions; a kernel of its own gets its
// own source.
TEST_F(RtgenTest, SeveralTablesOnePerGpu) {
  auto h200 = table();
  h200["gpu"] = "NVIDIA H200";
  h200["cc"] = "9.0";
  h200["kernels"] = {kTiny2, kTiny};
  h200["entries"] = {entry(64, 64, 64, 0, kTiny2 + " | splits=1", 1.25),
                     entry(64, 64, 128, 1, kTiny + " | splits=1", 2.0)};
  const auto o = rtgen(table(), {h200});
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("2 table(s)"), std::string::npos) << o.output;
  EXPECT_TRUE(fs::exists(dir_ / "gen" / "t0_k1.cu"));
  ASSERT_TRUE(fs::exists(dir_ / "gen" / "t1_k0.cu"));
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "t1_k1.cu"));  // kTiny: table 0's t0_k1.cu
  EXPECT_NE(slurp(dir_ / "gen" / "t1_k0.cu").find("#define cudal2_run cudal2_rt_t1_k0_run"), std::string::npos);
  const std::string t = slurp(dir_ / "gen" / "table.cpp");
  EXPECT_NE(t.find("{\"NVIDIA H200\", \"more0.json\", 9, 0, kKernels1, 2, kEntries1, 2},"), std::string::npos) << t;
  EXPECT_NE(t.find("const int kNumTables = 2;"), std::string::npos);
  EXPECT_NE(t.find("&cudal2_rt_t1_k0_run"), std::string::npos);
  EXPECT_EQ(t.find("cudal2_rt_t1_k1_"), std::string::npos) << t;
  const auto table1 = t.substr(t.find("const KernelInfo kKernels1[]"));
  EXPECT_NE(table1.find("&cudal2_rt_t0_k1_run"), std::string::npos) << t;
  // A table whose compute capability is not MAJOR.MINOR is refused.
  h200["cc"] = "90";
  const auto bad = rtgen(table(), {h200});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.output.find("not MAJOR.MINOR"), std::string::npos) << bad.output;
}

// Two files of one GPU (a model's table listed before the grid's): one table, the first file's
// entry wins a shape both have, the second file's kernels follow the first's (indices shifted);
// a kernel the first file lists too is the first file's (one source, one name).
TEST_F(RtgenTest, TablesOfOneGpuMerge) {
  auto model = table();
  model["kernels"] = {kTiny};
  model["entries"] = {entry(64, 64, 64, 0, kTiny + " | splits=1", 1.0),
                      entry(3, 64, 64, 0, kTiny + " | splits=1", 0.9)};
  const auto o = rtgen(model, {table()});
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("1 table(s) (table.json+more0.json)"), std::string::npos) << o.output;
  EXPECT_TRUE(fs::exists(dir_ / "gen" / "t0_k0.cu"));
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "t1_k1.cu"));  // kTiny again: t0_k0.cu
  const std::string t = slurp(dir_ / "gen" / "table.cpp");
  EXPECT_NE(t.find("kKernels0, 3, kEntries0, 4},"), std::string::npos) << t;
  // 64x64x64 from the model's table (1.0 us), 64x64x256 from the grid's with kernel 0 -> 1.
  EXPECT_NE(t.find("{0, 0, 64, 64, 64, 0, 0, 1, 0, 1, \"" + kTiny + " | splits=1\", 1.0f, 120.0f},"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("{0, 0, 64, 64, 64, 2,"), std::string::npos) << t;
  EXPECT_NE(t.find("{0, 0, 64, 64, 256, 1, 0, 1, 0, 3,"), std::string::npos) << t;
  EXPECT_EQ(t.find("cudal2_rt_t1_k1_"), std::string::npos) << t;
  EXPECT_NE(t.find("&cudal2_rt_t0_k0_run"), std::string::npos) << t;
}

}  // namespace
