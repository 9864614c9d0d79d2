// The timed-path rule for captured graphs (measure/graph_path.hpp) on synthetic graphs.
#include "measure/graph_path.hpp"

#include <gtest/gtest.h>

namespace cudal2 {
namespace {

using Edges = std::vector<std::pair<size_t, size_t>>;

TEST(GraphPath, AChainBetweenTheEventsIsOnThePath) {
  // 0 = start event, 1..3 = kernels, 4 = end event.
  EXPECT_TRUE(off_timed_path(5, Edges{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, 0, 4).empty());
  // A fork joined before the end event is on the path too.
  EXPECT_TRUE(off_timed_path(5, Edges{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}}, 0, 4).empty());
}

TEST(GraphPath, AKernelTheEndEventDoesNotWaitForIsOff) {
  // Kernel 2 depends on the start but nothing after it: the end event does not wait for it.
  EXPECT_EQ(off_timed_path(4, Edges{{0, 1}, {1, 3}, {0, 2}}, 0, 3), std::vector<size_t>{2});
}

TEST(GraphPath, AKernelBeforeTheStartEventIsOff) {
  // Kernel 0 is a root the start event comes after: it runs before the timer starts.
  EXPECT_EQ(off_timed_path(4, Edges{{0, 1}, {1, 2}, {2, 3}}, 1, 3), std::vector<size_t>{0});
}

TEST(GraphPath, AnEndEventThatDoesNotFollowTheStartIsOff) {
  // Dependencies reset before the end event: it is a root of its own.
  const auto off = off_timed_path(3, Edges{{0, 1}}, 0, 2);
  EXPECT_EQ(off, (std::vector<size_t>{1, 2}));
}

TEST(GraphPath, MissingEventsPutEveryNodeOff) { EXPECT_EQ(off_timed_path(2, Edges{{0, 1}}, 2, 2).size(), 2u); }

}  // namespace
}  // namespace cudal2
