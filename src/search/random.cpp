// `--search random`: specs of the space in a random order fixed by the seed (the same order for
// every problem, so a budget picks one random subset that all shapes share), skipping what is
// already known for the problem. A baseline for the learning policies: they must beat it.
#include <algorithm>
#include <random>
#include <string>

#include "search/observed.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

namespace {

class Random : public Policy {
 public:
  explicit Random(std::uint64_t seed) : seed_(seed ? seed : 0x5eed) {}
  std::string name() const override { return "random"; }
  std::vector<Proposal> propose(const Problem& p, int n, const std::vector<KernelSpec>& space) override {
    // Rank by a keyed hash of the spec: a permutation that depends on the seed only, so it is
    // the same for every problem and does not change when the space grows.
    std::vector<std::pair<std::uint64_t, const KernelSpec*>> order;
    for (const auto& s : space)
      if (!seen_.has(p, s)) order.emplace_back(mix(fnv1a64(s.text()) ^ seed_), &s);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Proposal> out;
    for (const auto& [rank, s] : order) {
      if (n > 0 && static_cast<int>(out.size()) >= n) break;
      // The permutation's order as a priority, so merging the problems' lists keeps it.
      out.push_back({*s, "", "random", -static_cast<double>(rank >> 11)});
    }
    return out;
  }
  void observe(const std::vector<Observation>& results) override { seen_.add(results); }

 private:
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27, x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  std::uint64_t seed_;
  ObservedSet seen_;
};

}  // namespace

std::unique_ptr<Policy> make_random_policy(const PolicyOptions& options) {
  return std::make_unique<Random>(options.seed);
}

}  // namespace cudal2::search
