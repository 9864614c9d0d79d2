// The policy registry: `cudal2 tune --search NAME`. A new policy adds its factory's declaration
// and one line to kPolicies (and its .cpp to src/CMakeLists.txt); nothing else changes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <string_view>

#include "core/problem.hpp"
#include "search/policy.hpp"

namespace cudal2::search {

std::unique_ptr<Policy> make_exhaustive_policy(const PolicyOptions& options);  // exhaustive.cpp
std::unique_ptr<Policy> make_random_policy(const PolicyOptions& options);      // random.cpp
std::unique_ptr<Policy> make_rl_policy(const PolicyOptions& options);          // rl_policy.cpp
std::unique_ptr<Policy> make_llm_policy(const PolicyOptions& options);         // llm/cli.cpp

namespace {

struct PolicyEntry {
  std::string_view name;
  std::unique_ptr<Policy> (*make)(const PolicyOptions&);
};

constexpr std::array kPolicies{
    PolicyEntry{"exhaustive", make_exhaustive_policy},
    PolicyEntry{"random", make_random_policy},
    PolicyEntry{"rl", make_rl_policy},
    PolicyEntry{"llm", make_llm_policy},
};

}  // namespace

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const auto& e : kPolicies) out.emplace_back(e.name);
  return out;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options) {
  for (const auto& e : kPolicies)
    if (e.name == name) return e.make(options);
  throw InputError(fmt::format("unknown search '{}' (available: {})", name, fmt::join(policy_names(), ", ")));
}

}  // namespace cudal2::search
