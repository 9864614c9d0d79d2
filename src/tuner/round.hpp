#pragma once
// One round of the tune loop, before and after it is evaluated: the problems' proposals merged
// into the round, the round planned against what other tuners on the store hold or measured, and
// what the round's outcomes tell the policy.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"
#include "protocol/modes.hpp"
#include "search/policy.hpp"
#include "search/space.hpp"
#include "store/claims.hpp"
#include "tuner/evaluate.hpp"

namespace cudal2::tuner {

// One round's candidates: the problems' proposals without duplicates, highest priority first,
// ties in the space's order (free-form sources after specs, in proposal order), at most n. For
// policies whose problem lists follow one global order (exhaustive: the space's; random: its
// permutation) this is exactly the first n of that order not yet known on every problem.
std::vector<search::Proposal> merge(const std::vector<std::vector<search::Proposal>>& lists, int n,
                                    const std::map<std::string, size_t>& space_index);

// Asks each problem for proposals (as many as per_problem, else n, else its whole space; a
// problem with free-form sources queued from an earlier round gives those instead) and merges
// them (merge) into at most n candidates, each spec with the shapes whose problems proposed it.
// Free-form sources the round had no room for are queued for their problem's next round.
std::vector<search::Proposal> propose_round(search::Policy& policy, const search::ProblemSpace& space,
                                            const std::vector<Problem>& problems,
                                            const std::map<std::string, size_t>& space_index, int n, int per_problem,
                                            std::vector<std::vector<search::Proposal>>& queued);

// What plan_round left out of a round: the keys another live tuner holds (claimed, not measured
// yet), and the (problem, spec) pairs another tuner has measured, which this tuner's policy has
// not observed.
struct Planned {
  size_t held = 0;
  std::vector<std::pair<Problem, KernelSpec>> measured_elsewhere;
};

// Keeps the round's spec candidates on the shapes still open in the store (store/claims.hpp): what
// another tuner on the same store measures, or has measured, is left out. Nothing is claimed
// here: the evaluation claims job by job (EvalRequest::claim), so that tuners started together
// divide the round between them instead of the first claiming all of it.
Planned plan_round(store::WorkClaims& claims, const std::string& gpu, Mode mode, Accum accum,
                   const std::vector<Shape>& all_shapes, std::vector<search::Proposal>& round);

// What an evaluated round tells the loop: the policy's observations, whether it was cut short
// (a deadline or a signal left candidates not run; not run because another tuner took all of it
// is no reason to stop), and how many candidates found the GPU disturbed.
struct RoundResult {
  std::vector<search::Observation> seen;
  bool cut_short = false;
  size_t disturbed = 0;
};
RoundResult read_round(const std::vector<search::Proposal>& round, const std::vector<CandidateOutcome>& outcomes,
                       const std::vector<Shape>& all_shapes, Accum accum);

}  // namespace cudal2::tuner
