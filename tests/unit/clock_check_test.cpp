// The wall-clock cross-check per kind of request (judge/clock_check.hpp).
#include "judge/clock_check.hpp"

#include <gtest/gtest.h>

namespace cudal2 {
namespace {

TEST(ClockCheck, CleanRequestsPass) {
  const std::map<std::string, std::vector<double>> by{{"graph", {10, 20, 30}}, {"single", {5, 8, 9}}};
  EXPECT_FALSE(excess_beyond(by, {10, 20, 30, 5, 8, 9}, 150));
}

TEST(ClockCheck, OneKindOfRequestHidingWorkIsCaughtWhenTheOverallMedianIsClean) {
  // Eager batches hide 400 us each; graph, host and single requests are clean: the median over
  // all of them (12 requests, 3 of them eager) is clean, the eager median is not.
  const std::map<std::string, std::vector<double>> by{
      {"eager", {400, 410, 420}}, {"graph", {10, 12, 14}}, {"host", {5, 6, 7}}, {"single", {3, 4, 5}}};
  std::vector<double> all;
  for (const auto& [k, v] : by) all.insert(all.end(), v.begin(), v.end());
  const auto f = excess_beyond(by, all, 150);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, "eager");
  EXPECT_DOUBLE_EQ(f->median_us, 410);
  EXPECT_EQ(f->requests, 3u);
}

TEST(ClockCheck, OneKindIsAllowedMoreThanTheMedianOverAll) {
  // An honest kernel's graph requests just above one margin (noise of 5 requests): not a finding.
  const std::map<std::string, std::vector<double>> by{
      {"graph", {190, 203, 210, 180, 205}}, {"eager", {170, 179, 185}}, {"host", {60, 62, 64}}};
  EXPECT_FALSE(excess_beyond(by, {190, 203, 210, 180, 205, 170, 179, 185, 60, 62, 64}, 202));
  EXPECT_EQ(excess_beyond(by, {190, 203, 210, 180, 205, 170, 179, 185, 60, 62, 64}, 100)->kind, "graph");
}

TEST(ClockCheck, FewerThanThreeRequestsOfAKindAreNotJudgedAlone) {
  const std::map<std::string, std::vector<double>> by{{"host", {900, 900}}, {"graph", {1, 2, 3, 4}}};
  EXPECT_FALSE(excess_beyond(by, {900, 900, 1, 2, 3, 4}, 150));
  // ... but they count in the median over all.
  EXPECT_EQ(excess_beyond(by, {900, 900, 900, 1}, 150)->kind, "all");
}

}  // namespace
}  // namespace cudal2
