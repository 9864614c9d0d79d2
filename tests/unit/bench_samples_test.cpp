// cudal2 bench --samples-csv: every sample in the order the rounds took them, with the method that
// ran just before each (judge/bench_csv.cpp write_samples).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/csv.hpp"
#include "judge/bench_steps.hpp"
#include "temp_dir.hpp"

namespace cudal2 {
namespace {

MethodResult sampled(const std::string& name, std::vector<double> graph_us) {
  MethodResult m;
  m.method = name;
  m.samples[Mode::Offline][static_cast<int>(TimerKind::Graph)] = std::move(graph_us);
  return m;
}

TEST(BenchSamples, RowsFollowTheRoundsOrderAndNameThePreviousMethod) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "samples.csv").string();
  BenchOptions opt;
  opt.samples_csv_path = path;
  opt.timers = {};
  opt.timers[static_cast<int>(TimerKind::Graph)] = true;
  ShapeResult sr;
  sr.shape = Shape{4, 4096, 4096};
  // "b" failed in the second round: one sample, and it is in no later round.
  sr.methods = {sampled("a", {1.0, 2.0, 3.0}), sampled("b", {10.0, 20.0})};
  sr.rounds[Mode::Offline] = {{1, 0}, {0, 1}, {0}};
  {
    auto csv = open_samples_csv(opt);
    ASSERT_TRUE(csv);
    write_samples(*csv, sr, opt);
  }
  const auto rows = read_csv(path);
  ASSERT_EQ(rows.size(), 5u);
  const std::vector<std::string> method{"b", "a", "a", "b", "a"}, previous{"", "b", "a", "a", "b"},
      us{"10", "1", "2", "20", "3"}, round{"0", "0", "1", "1", "2"}, position{"0", "1", "0", "1", "0"};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("method"), method[i]) << i;
    EXPECT_EQ(rows[i].at("previous"), previous[i]) << i;
    EXPECT_EQ(rows[i].at("us"), us[i]) << i;
    EXPECT_EQ(rows[i].at("round"), round[i]) << i;
    EXPECT_EQ(rows[i].at("position"), position[i]) << i;
    EXPECT_EQ(rows[i].at("timer"), "graph");
    EXPECT_EQ(rows[i].at("n"), "4096");
  }
}

TEST(BenchSamples, NoPathNoFile) {
  BenchOptions opt;
  EXPECT_FALSE(open_samples_csv(opt));
}

}  // namespace
}  // namespace cudal2
