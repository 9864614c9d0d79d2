#pragma once
// The search's one interface: a policy proposes candidates for a problem from what it knows and
// learns from what the loop measured. Exhaustive and random search, the RL policy and the LLM
// proposer all implement it; the tuning loop (run_tune) drives any of them the same way:
//   propose -> codegen -> jit -> evaluate (the judge) -> reward -> store -> observe.
// No CUDA here: policies never touch the GPU (docs/architecture.md, "Folders").
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace cudal2::search {

// One candidate the loop evaluated, as a policy sees it.
struct Observation {
  Problem problem;         // shape, layout, accumulator
  KernelSpec spec;         // family "source" for free-form candidates
  std::string source;      // free-form candidates: the source text (empty for specs)
  std::string status;      // "ok" or a failure kind (docs/threat-model.md)
  double time_us = 0;      // offline graph median when ok
  double baseline_us = 0;  // best baseline of the same job (0: none)
  double reward = 0;       // reward() of this measurement
};

// A free-form proposal (an LLM's kernel): source text with the kernel C ABI.
struct Proposal {
  KernelSpec spec;     // the spec, or layout/accum only with family "source"
  std::string source;  // non-empty for free-form proposals
  std::string note;    // why it was proposed (logged)
  // How much the policy wants it, comparable across the problems of one round: run_tune merges
  // the problems' proposals highest first, ties in the space's order (exhaustive: all 0), and a
  // budget keeps the first ones. (Added for the merge of per-problem proposals.)
  double priority = 0;
  // The shapes to measure it on; empty: every shape of the run. run_tune fills it for specs that
  // belong to some problems only (cuBLASLt's neighbourhood of one shape's heuristic).
  std::vector<Shape> shapes;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Up to n candidates for this problem, none of them already observed for it. `space` is the
  // valid spec space of the families in the run (the families' validity rules mask invalid
  // actions); a policy may also return free-form sources.
  virtual std::vector<Proposal> propose(const Problem& p, int n, const std::vector<KernelSpec>& space) = 0;
  // What the loop measured for earlier proposals (and anything else in the store it loads).
  virtual void observe(const std::vector<Observation>& results) = 0;
  // Persisted state (a policy file); policies without state save nothing.
  virtual void save(const std::string& path) const {}
  virtual void load(const std::string& path) {}
};

// What a policy is made with (`cudal2 tune --search NAME --seed S --policy-file F --policy-opt K=V`).
struct PolicyOptions {
  std::uint64_t seed = 0;                    // random and learning policies; 0: a fixed default
  std::string state_path;                    // the policy file (load at start, save after each round)
  std::map<std::string, std::string> extra;  // policy-specific settings
};

// A policy of a room above search/ (the LLM proposer, src/llm/) is registered by the composition
// root that links that room (the CLI's `tune`, a test), so that search/ neither names nor links it.
using PolicyFactory = std::unique_ptr<Policy> (*)(const PolicyOptions&);
// Adds `name` after the built-in policies; a name registered again gets the new factory. Not
// thread-safe: register before anything lists or makes policies.
void register_policy(std::string_view name, PolicyFactory make);

// The policies `--search` knows: the registry table's (src/search/registry.cpp), then the
// registered ones in the order they were first registered.
std::vector<std::string> policy_names();
// Throws InputError naming the known policies for an unknown name.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options = {});

}  // namespace cudal2::search
