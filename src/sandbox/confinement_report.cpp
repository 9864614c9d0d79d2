// What a child's confinement applied and what it could not (sandbox/confine.hpp), as a summary
// line and as JSON.
#include <cstddef>
#include <string>
#include <string_view>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox {

bool ConfinementReport::has(std::string_view mechanism) const {
  for (const auto& a : applied) {
    if (a == mechanism) return true;
  }
  return false;
}

std::string ConfinementReport::summary() const {
  if (applied.empty() && missing.empty()) return "none";
  std::string s;
  for (const auto& a : applied) {
    if (!s.empty()) s += '+';
    s += a;
  }
  if (!missing.empty()) {
    s += s.empty() ? "missing[" : " missing[";
    for (std::size_t i = 0; i < missing.size(); ++i) s += (i ? "; " : "") + missing[i];
    s += ']';
  }
  return s;
}

nlohmann::json ConfinementReport::to_json() const {
  return {{"summary", summary()},
          {"applied", applied},
          {"missing", missing},
          {"scratch", scratch},
          {"landlock_abi", landlock_abi}};
}

}  // namespace cudal2::sandbox
