#include "tuner/round.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "search/reward.hpp"

namespace cudal2::tuner {

using search::Observation;
using search::Proposal;

namespace {

// The observations of one evaluated candidate: one per requested shape, for the spec's layout.
std::vector<Observation> observations_of(const Proposal& prop, const CandidateOutcome& co,
                                         const std::vector<Shape>& shapes, Accum accum) {
  std::vector<Observation> out;
  if (co.status == Status::NotRun || co.status == Status::GpuDisturbed) return out;
  for (const auto& sh : shapes) {
    // Not measured there because the GPU was disturbed: nothing observed (measured again later);
    // nor where another tuner on the store measures it.
    if (std::find(co.disturbed_shapes.begin(), co.disturbed_shapes.end(), sh.str()) != co.disturbed_shapes.end() ||
        std::find(co.elsewhere_shapes.begin(), co.elsewhere_shapes.end(), sh.str()) != co.elsewhere_shapes.end())
      continue;
    Observation o;
    o.problem = {sh, prop.spec.layout, prop.source.empty() ? prop.spec.accum : accum};
    o.spec = prop.spec, o.source = prop.source;
    const auto key = sh.str();
    const auto t = co.graph_us.find(key);
    const Outcome status = co.status == Status::Ok && t == co.graph_us.end() ? Outcome(Status::Unsupported) : co.status;
    o.status = std::string(to_string(status));
    o.time_us = t == co.graph_us.end() ? 0 : t->second;
    o.baseline_us = co.baseline_us.count(key) ? co.baseline_us.at(key) : 0;
    const auto s = co.score.find(key);
    o.reward = s != co.score.end()
                   ? s->second
                   : search::reward({status, o.time_us, o.baseline_us, std::nullopt, prop.source.size()}).value_or(0);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::vector<Proposal> merge(const std::vector<std::vector<Proposal>>& lists, int n,
                            const std::map<std::string, size_t>& space_index) {
  std::vector<Proposal> out;
  std::map<std::string, size_t> at;  // key -> index in out
  for (const auto& l : lists)
    for (const auto& p : l) {
      const std::string key = p.source.empty() ? p.spec.text() : "source " + p.source;
      const auto it = at.find(key);
      if (it == at.end()) {
        at.emplace(key, out.size());
        out.push_back(p);
      } else if (p.priority > out[it->second].priority) {
        out[it->second].priority = p.priority;
      }
    }
  auto index = [&](const Proposal& p) {
    if (!p.source.empty()) return space_index.size();
    const auto it = space_index.find(p.spec.text());
    return it == space_index.end() ? space_index.size() : it->second;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Proposal& a, const Proposal& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return index(a) < index(b);
  });
  if (n > 0 && out.size() > static_cast<size_t>(n)) out.resize(static_cast<size_t>(n));
  return out;
}

std::vector<Proposal> propose_round(search::Policy& policy, const search::ProblemSpace& space,
                                    const std::vector<Problem>& problems,
                                    const std::map<std::string, size_t>& space_index, int n, int per_problem,
                                    std::vector<std::vector<Proposal>>& queued) {
  std::vector<std::vector<Proposal>> lists;
  std::map<std::string, std::vector<Shape>> wanted;  // spec text -> shapes whose problem proposed it
  for (size_t pi = 0; pi < problems.size(); ++pi) {
    const auto& p = problems[pi];
    const auto ps = space.for_problem(p);
    const int asked = per_problem > 0 ? per_problem : n > 0 ? n : static_cast<int>(ps.size());
    lists.push_back(queued[pi].empty() ? policy.propose(p, asked, ps) : std::exchange(queued[pi], {}));
    for (const auto& prop : lists.back()) {
      auto& v = wanted[prop.spec.text()];
      if (prop.source.empty() && std::find(v.begin(), v.end(), p.shape) == v.end()) v.push_back(p.shape);
    }
  }
  auto round = merge(lists, n, space_index);
  // Each free-form source cost a model call and is not proposed again, so one the round had no
  // room for waits for the next round, and its problem is not asked for more meanwhile. (Specs
  // left out are simply proposed again.)
  std::set<std::string> in_round;
  for (const auto& prop : round)
    if (!prop.source.empty()) in_round.insert(prop.source);
  for (size_t pi = 0; pi < problems.size(); ++pi)
    for (auto& prop : lists[pi])
      if (!prop.source.empty() && !in_round.count(prop.source)) {
        ++prop.priority;  // ahead of fresh proposals next round, so none waits forever
        queued[pi].push_back(std::move(prop));
      }
  // A spec is measured on the shapes whose problems proposed it (not yet measured there), not
  // on every shape of the run: on a resumed run the latter re-measured every finished shape
  // (for cuBLASLt's per-problem spaces, and for the common spaces of our own families too: a
  // resumed 14-shape wgmma_swapab run spent its whole budget on the 7 shapes already done).
  for (auto& prop : round)
    if (prop.source.empty()) prop.shapes = wanted[prop.spec.text()];
  return round;
}

Planned plan_round(store::WorkClaims& claims, const std::string& gpu, Mode mode, Accum accum,
                   const std::vector<Shape>& all_shapes, std::vector<Proposal>& round) {
  Planned planned;
  std::vector<store::WorkKey> keys;
  std::vector<std::pair<size_t, Shape>> at;  // key i -> (proposal, shape)
  for (size_t i = 0; i < round.size(); ++i) {
    if (!round[i].source.empty()) continue;  // free-form sources are not shared work
    const std::string hash = round[i].spec.hash();
    for (const auto& sh : round[i].shapes.empty() ? all_shapes : round[i].shapes) {
      keys.push_back({hash, gpu, std::string(to_string(accum)), std::string(to_string(round[i].spec.layout)), sh.m,
                      sh.n, sh.k, std::string(to_string(mode))});
      at.emplace_back(i, sh);
    }
  }
  if (keys.empty()) return planned;
  const auto got = claims.states(keys);
  std::vector<std::vector<Shape>> kept(round.size());
  std::vector<bool> is_spec(round.size(), false);
  for (size_t j = 0; j < keys.size(); ++j) {
    const auto& [i, sh] = at[j];
    is_spec[i] = true;
    if (got[j] == store::WorkClaims::State::Open) kept[i].push_back(sh);
    if (got[j] == store::WorkClaims::State::Held) ++planned.held;
    if (got[j] == store::WorkClaims::State::Measured)
      planned.measured_elsewhere.emplace_back(Problem{sh, round[i].spec.layout, accum}, round[i].spec);
  }
  std::vector<Proposal> out;
  for (size_t i = 0; i < round.size(); ++i) {
    if (is_spec[i]) {
      if (kept[i].empty()) continue;
      round[i].shapes = std::move(kept[i]);
    }
    out.push_back(std::move(round[i]));
  }
  round = std::move(out);
  return planned;
}

RoundResult read_round(const std::vector<Proposal>& round, const std::vector<CandidateOutcome>& outcomes,
                       const std::vector<Shape>& all_shapes, Accum accum) {
  RoundResult r;
  for (size_t i = 0; i < round.size(); ++i) {
    const auto& shapes = round[i].shapes.empty() ? all_shapes : round[i].shapes;
    r.cut_short =
        r.cut_short || (outcomes[i].status == Status::NotRun && outcomes[i].elsewhere_shapes.size() < shapes.size());
    r.disturbed += outcomes[i].status == Status::GpuDisturbed;
    auto obs = observations_of(round[i], outcomes[i], shapes, accum);
    r.seen.insert(r.seen.end(), obs.begin(), obs.end());
  }
  return r;
}

}  // namespace cudal2::tuner
