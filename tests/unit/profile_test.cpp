// The profiler observer's parts that need no GPU: the ncu command line, parsing of ncu's raw CSV
// (tests/unit/data/ncu_raw_sample.csv: written by hand in the layout ncu --csv --page raw prints,
// with its ==PROF== lines, units row and thousands separators; not recorded on a GPU, since ncu
// cannot read the counters on the device machines' gVisor runtime), the
// summary the prompt shows, and storage in the profiles table.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "llm/profile.hpp"
#include "llm/prompt.hpp"
#include "llm/records.hpp"

using namespace cudal2::llm;

namespace {
std::string data_path() {
  // The unit tests' data folder, found from this source file.
  return (std::filesystem::path(__FILE__).parent_path() / "data" / "ncu_raw_sample.csv").string();
}
}  // namespace

TEST(NcuCommand, WrapsTheRunnerCommand) {
  NcuOptions o;
  o.kernel_regex = "^(?!sm90_xmma)";
  o.launch_skip = 3;
  const auto argv = ncu_command(o, {"/work/main/build/cudal2", "eval", "--source", "my kernel.cu"});
  ASSERT_GE(argv.size(), 10u);
  EXPECT_EQ(argv[0], "ncu");
  EXPECT_EQ(argv[1], "--csv");
  const auto joined = shell_join(argv);
  EXPECT_NE(joined.find("--page raw"), std::string::npos);
  EXPECT_NE(joined.find("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"), std::string::npos);
  EXPECT_NE(joined.find("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"), std::string::npos);
  EXPECT_NE(joined.find("--target-processes all"), std::string::npos);
  EXPECT_NE(joined.find("--kernel-name 'regex:^(?!sm90_xmma)'"), std::string::npos);
  EXPECT_NE(joined.find("--launch-skip 3 --launch-count 1 -- /work/main/build/cudal2 eval --source 'my kernel.cu'"),
            std::string::npos)
      << joined;
  EXPECT_EQ(shell_join({"it's"}), "'it'\\''s'");
}

TEST(NcuCsv, ParsesTheRawPage) {
  const auto ks = parse_ncu_csv(read_text_file(data_path()));
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].id, "0");
  EXPECT_EQ(ks[0].kernel.rfind("naive_gemm(", 0), 0u);
  EXPECT_DOUBLE_EQ(ks[0].metrics.at("gpu__time_duration.sum"), 1234.56);  // "1,234.56"
  EXPECT_EQ(ks[0].units.at("gpu__time_duration.sum"), "usecond");
  EXPECT_DOUBLE_EQ(ks[1].metrics.at("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"), 88.4);
  EXPECT_EQ(ks[0].metrics.count("Block Size"), 0u);

  const auto k = pick_kernel(ks, {"xmma", "cublas", "cutlass"});
  ASSERT_TRUE(k);
  EXPECT_EQ(k->id, "0");
  const auto s = summarize(*k, 3);
  EXPECT_DOUBLE_EQ(s.metrics.at("duration_us"), 1234.56);
  EXPECT_DOUBLE_EQ(s.metrics.at("dram_pct"), 12.34);
  EXPECT_DOUBLE_EQ(s.metrics.at("l2_pct"), 45.6);
  EXPECT_DOUBLE_EQ(s.metrics.at("tensor_pipe_pct"), 0);
  EXPECT_DOUBLE_EQ(s.metrics.at("achieved_occupancy_pct"), 87.21);
  ASSERT_EQ(s.top_stalls.size(), 3u);
  EXPECT_EQ(s.top_stalls[0].first, "long_scoreboard");  // "selected" is not a stall
  EXPECT_EQ(s.top_stalls[1].first, "wait");
  EXPECT_EQ(s.top_stalls[2].first, "short_scoreboard");
  EXPECT_NEAR(s.top_stalls[0].second, 20.48 / (0.12 + 20.48 + 1.5 + 0.73 + 2.31 + 3.05), 1e-9);

  EXPECT_THROW(parse_ncu_csv("==PROF== Failed to initialize the profiler: LibraryNotLoaded\n"), std::runtime_error);
  EXPECT_TRUE(parse_ncu_csv(R"("ID","Kernel Name","gpu__time_duration.sum")").empty());
}

TEST(NcuCsv, StoredAndShownInThePrompt) {
  const auto dir = std::filesystem::temp_directory_path() / ("cudal2_profile_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto db = (dir / "p.db").string();
  const auto ks = parse_ncu_csv(read_text_file(data_path()));
  const auto s = summarize(ks.at(0));
  Records rec(db);
  ProfileRow row;
  row.spec_hash = "abc", row.gpu = "NVIDIA H100", row.dtype = "f32", row.layout = "nn", row.m = 1024, row.n = 1024,
  row.k = 1024;
  row.metrics_json = nlohmann::json(s.metrics).dump();
  row.stalls_json = nlohmann::json(s.top_stalls).dump();
  row.command = shell_join(ncu_command({}, {"cudal2", "eval"}));
  rec.put_profile(row);
  const auto got = rec.latest_profile("abc", 1024, 1024, 1024);
  ASSERT_TRUE(got);
  EXPECT_EQ(nlohmann::json::parse(got->metrics_json)["achieved_occupancy_pct"], 87.21);
  EXPECT_EQ(nlohmann::json::parse(got->stalls_json)[0][0], "long_scoreboard");
  EXPECT_FALSE(rec.latest_profile("abc", 1, 1, 1));
  std::filesystem::remove_all(dir);
}
