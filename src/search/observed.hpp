#pragma once
// Which (problem, spec) pairs a policy has seen a result for: what "none of them already observed"
// in Policy::propose means. Shared by the policies that keep no other state.
#include <set>
#include <string>
#include <vector>

#include "search/policy.hpp"
#include "search/space.hpp"

namespace cudal2::search {

class ObservedSet {
 public:
  static std::string key(const Problem& p, const KernelSpec& s) {
    return problem_key(p.shape, p.layout) + " " + std::string(to_string(p.accum)) + " " + s.hash();
  }
  bool has(const Problem& p, const KernelSpec& s) const { return keys_.count(key(p, s)) > 0; }
  void add(const std::vector<Observation>& results) {
    for (const auto& o : results) keys_.insert(key(o.problem, o.spec));
  }

 private:
  std::set<std::string> keys_;
};

}  // namespace cudal2::search
