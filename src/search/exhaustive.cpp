// `--search exhaustive`: every spec of the space in the space's order, skipping what is already
// known for the problem (the store's rows, loaded through observe(): what makes a rerun resume).
#include <set>
#include <string>
#include <utility>

#include "search/observed.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

namespace {

class Exhaustive : public Policy {
 public:
  std::string name() const override { return "exhaustive"; }
  std::vector<Proposal> propose(const Problem& p, int n, const std::vector<KernelSpec>& space) override {
    std::vector<Proposal> out;
    for (const auto& s : space) {
      if (n > 0 && static_cast<int>(out.size()) >= n) break;
      if (seen_.has(p, s)) continue;
      out.push_back({s, "", "next in space order"});
    }
    return out;
  }
  void observe(const std::vector<Observation>& results) override { seen_.add(results); }

 private:
  ObservedSet seen_;
};

}  // namespace

std::unique_ptr<Policy> make_exhaustive_policy(const PolicyOptions&) { return std::make_unique<Exhaustive>(); }

}  // namespace cudal2::search
