// Every reported time against the physical floor, the single call's included (judge/time_floor.hpp).
#include "judge/time_floor.hpp"

#include <gtest/gtest.h>

namespace cudal2 {
namespace {

using Timers = std::vector<std::pair<std::string, std::vector<double>>>;

TEST(TimeFloor, TimesAboveTheFloorPass) {
  EXPECT_FALSE(below_floor(Timers{{"graph", {10, 11, 12}}, {"eager", {12, 13}}}, {20, 21, 22}, 5));
}

TEST(TimeFloor, ASingleCallBelowTheFloorIsCaughtWhenEveryBatchIsPlausible) {
  // restart_timer.cu's shape: honest batches, a one-call graph whose timer starts after the work.
  const auto b = below_floor(Timers{{"graph", {10, 11, 12}}, {"eager", {12, 13, 14}}}, {0.01, 0.02, 0.01}, 5);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->what, "single-call");
  EXPECT_DOUBLE_EQ(b->median_us, 0.01);
}

TEST(TimeFloor, TheFirstTimerBelowTheFloorIsNamed) {
  const auto b = below_floor(Timers{{"graph", {10}}, {"eager", {1, 2, 3}}, {"host", {0.5}}}, {20}, 5);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->what, "eager");
  EXPECT_DOUBLE_EQ(b->median_us, 2);
}

TEST(TimeFloor, TimersWithoutSamplesAreSkipped) {
  EXPECT_FALSE(below_floor(Timers{{"graph", {}}, {"eager", {10}}}, {}, 5));
}

}  // namespace
}  // namespace cudal2
