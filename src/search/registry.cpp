// The policy registry: `cudal2 tune --search NAME`. A new policy of search/ adds its factory's
// declaration and one line to kPolicies (and its .cpp to src/CMakeLists.txt); a policy of a room
// above search/ is registered by the composition root instead (register_policy), so that search/
// names no such room and links without it (the cudal2_search_boundary link check).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/problem.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

std::unique_ptr<Policy> make_exhaustive_policy(const PolicyOptions& options);  // exhaustive.cpp
std::unique_ptr<Policy> make_random_policy(const PolicyOptions& options);      // random.cpp
std::unique_ptr<Policy> make_rl_policy(const PolicyOptions& options);          // rl_policy.cpp

namespace {

struct PolicyEntry {
  std::string_view name;
  PolicyFactory make;
};

constexpr std::array kPolicies{
    PolicyEntry{"exhaustive", make_exhaustive_policy},
    PolicyEntry{"random", make_random_policy},
    PolicyEntry{"rl", make_rl_policy},
};

// The registered policies, in the order of their first registration.
std::vector<std::pair<std::string, PolicyFactory>>& registered() {
  static std::vector<std::pair<std::string, PolicyFactory>> entries;
  return entries;
}

}  // namespace

void register_policy(std::string_view name, PolicyFactory make) {
  for (auto& [n, f] : registered())
    if (n == name) {
      f = make;
      return;
    }
  registered().emplace_back(std::string(name), make);
}

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const auto& e : kPolicies) out.emplace_back(e.name);
  for (const auto& [name, make] : registered())
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options) {
  for (const auto& [n, make] : registered())  // a registered name overrides a built-in one
    if (n == name) return make(options);
  for (const auto& e : kPolicies)
    if (e.name == name) return e.make(options);
  throw InputError(fmt::format("unknown search '{}' (available: {})", name, fmt::join(policy_names(), ", ")));
}

}  // namespace cudal2::search
