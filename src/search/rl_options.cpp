// The rl policy's options (search/rl_policy.hpp): `--policy-option k=v` parsed and checked, and
// the target the cost model learns.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>

#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "search/rl_policy.hpp"

namespace cudal2::search {

double efficiency_target(const Problem& p, double time_us) {
  return std::log(roofline_us(p.shape) / std::max(time_us, 1e-6));
}

RlOptions rl_options(const std::map<std::string, std::string>& options) {
  RlOptions o;
  for (const auto& kv : options) {
    // Not a structured binding: clang (tidy) before 16 cannot capture one in a lambda.
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    auto num = [&] {
      try {
        size_t used = 0;
        const double d = std::stod(v, &used);
        if (used != v.size() || !std::isfinite(d)) throw std::invalid_argument(v);
        return d;
      } catch (const std::exception&) {
        throw InputError(fmt::format("rl policy option {}={}: not a number", k, v));
      }
    };
    if (k == "method") {
      if (v != "thompson" && v != "greedy" && v != "reinforce")
        throw InputError(fmt::format("rl policy method '{}' (thompson, greedy, reinforce)", v));
      o.method = v;
    } else if (k == "seed") {
      o.seed = static_cast<uint64_t>(num());
    } else if (k == "explore") {
      o.explore = num();
    } else if (k == "prior") {
      o.prior = num();
    } else if (k == "noise") {
      o.noise = num();
    } else if (k == "lr") {
      o.lr = num();
    } else if (k == "temperature") {
      o.temperature = num();
    } else if (k == "sm_count") {
      o.features.sm_count = static_cast<int>(num());
    } else {
      throw InputError(fmt::format(
          "unknown rl policy option '{}' (method, seed, explore, prior, noise, lr, temperature, sm_count)", k));
    }
  }
  if (!(o.prior > 0) || !(o.noise > 0) || !(o.temperature > 0) || o.features.sm_count < 1)
    throw InputError("rl policy: prior, noise, temperature and sm_count must be positive");
  return o;
}

}  // namespace cudal2::search
