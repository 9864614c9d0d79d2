#include "measure/graph_path.hpp"

namespace cudal2 {

namespace {

// Nodes reachable from `from` along adj (from itself included).
std::vector<bool> reach(size_t nodes, const std::vector<std::vector<size_t>>& adj, size_t from) {
  std::vector<bool> seen(nodes, false);
  std::vector<size_t> todo{from};
  seen[from] = true;
  while (!todo.empty()) {
    const size_t n = todo.back();
    todo.pop_back();
    for (size_t m : adj[n])
      if (!seen[m]) seen[m] = true, todo.push_back(m);
  }
  return seen;
}

}  // namespace

std::vector<size_t> off_timed_path(size_t nodes, const std::vector<std::pair<size_t, size_t>>& edges, size_t start,
                                   size_t end) {
  std::vector<std::vector<size_t>> fwd(nodes), back(nodes);
  for (const auto& [a, b] : edges)
    if (a < nodes && b < nodes) fwd[a].push_back(b), back[b].push_back(a);
  std::vector<size_t> off;
  if (start >= nodes || end >= nodes) {
    for (size_t n = 0; n < nodes; ++n) off.push_back(n);
    return off;
  }
  const auto after_start = reach(nodes, fwd, start);
  const auto before_end = reach(nodes, back, end);
  for (size_t n = 0; n < nodes; ++n)
    if (n != start && n != end && !(after_start[n] && before_end[n])) off.push_back(n);
  // The end event itself must follow the start event.
  if (start != end && !after_start[end]) off.push_back(end);
  return off;
}

}  // namespace cudal2
