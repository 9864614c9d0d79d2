#pragma once
// Every node of a timed graph must lie on a path from its start event to its end event. Stream
// capture lets code rewrite the captured stream's dependencies (cudaStreamUpdateCaptureDependencies)
// so that a kernel hangs off the graph with nothing after it, or starts before the start event: the
// end event then does not wait for it, and the events time less than the graph does. A plain
// function of the graph's shape, so that the rule is tested without a GPU
// (tests/unit/graph_path_test.cpp); measure/timing.cpp applies it to every captured graph.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cudal2 {

// Prefix of CallGraph::error() when a captured graph has nodes off the timed path: the judge
// fails a runner that reports it (timing-mismatch) rather than time it without a graph.
inline constexpr const char* kOffTimedPath = "off the timed path: ";

// The nodes (0..nodes-1, start and end excluded) that are not both reachable from `start` and able
// to reach `end` along `edges` (from, to). Empty when every node is on a path between them.
std::vector<size_t> off_timed_path(size_t nodes, const std::vector<std::pair<size_t, size_t>>& edges, size_t start,
                                   size_t end);

}  // namespace cudal2
