#include "tuner/stored.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <map>

#include "search/reward.hpp"
#include "search/space.hpp"
#include "tuner/tune.hpp"

namespace cudal2::tuner {

namespace {

// The best baseline's offline graph median recorded with a measurement (0: none).
double best_baseline_us(const std::string& baseline_json) {
  const auto bj = nlohmann::json::parse(baseline_json, nullptr, false);
  double best = 0;
  if (!bj.is_object()) return 0;
  for (const auto& [name, t] : bj.items()) {
    if (!t.is_object() || !t.contains("offline") || !t["offline"].contains("graph")) continue;
    const auto& g = t["offline"]["graph"];
    if (!g.is_object() || !g.contains("median") || !g["median"].is_number()) continue;
    const double us = g["median"].get<double>();
    if (us > 0 && (best == 0 || us < best)) best = us;
  }
  return best;
}

}  // namespace

std::string stored_gpu_name(const std::string& db_path, const LocalGpus& local, int ordinal) {
  if (local.available()) return local.names.at(static_cast<size_t>(ordinal));
  const auto gpus = store::Store::open(db_path).gpus();
  if (gpus.size() > 1)
    throw InputError(
        fmt::format("the store '{}' holds results of several GPUs ({}); without a local GPU tune cannot "
                    "tell which one its judge measures on: give it a store of one GPU",
                    db_path, fmt::join(gpus, ", ")));
  return gpus.empty() ? "unknown" : gpus.front();
}

store::ProblemKey store_key(const std::string& gpu, const Problem& p, Mode mode) {
  return {gpu,       std::string(to_string(p.accum)), std::string(to_string(p.layout)), p.shape.m, p.shape.n,
          p.shape.k, std::string(to_string(mode))};
}

std::vector<search::Observation> stored_observations(const store::Store& db, const std::string& gpu, const Problem& p,
                                                     Mode mode, const std::vector<KernelSpec>& space) {
  std::map<std::string, const KernelSpec*> by_hash;
  for (const auto& s : space) by_hash.emplace(s.hash(), &s);
  std::map<std::string, store::MeasurementRow> pick;
  for (auto& r : db.list_measurements(store_key(gpu, p, mode))) {
    if (!by_hash.count(r.spec_hash)) continue;
    auto it = pick.find(r.spec_hash);
    const bool graph = r.mode == "offline" && r.timer == "graph";
    if (it == pick.end())
      pick.emplace(r.spec_hash, std::move(r));
    else if (graph && !(it->second.mode == "offline" && it->second.timer == "graph"))
      it->second = std::move(r);
  }
  std::vector<search::Observation> out;
  for (const auto& [hash, r] : pick) {
    search::Observation o;
    o.problem = p, o.spec = *by_hash.at(hash), o.status = r.status;
    o.time_us = r.median_us.value_or(0);
    o.baseline_us = best_baseline_us(r.baseline_json);
    // A stored word this build does not know counts as an error (docs/tuning.md, "Reward").
    const Outcome status = parse_outcome(r.status).value_or(Outcome(FailureKind::Error));
    const auto rw = r.reward ? r.reward : search::reward({status, o.time_us, o.baseline_us, r.rel_err, 0});
    o.reward = rw.value_or(0);
    out.push_back(std::move(o));
  }
  return out;
}

void observe_measured_elsewhere(search::Policy& policy, const std::string& db_path, const LocalGpus& local, int ordinal,
                                Mode mode, const std::vector<std::pair<Problem, KernelSpec>>& measured) {
  if (measured.empty()) return;
  const std::string stored_gpu = stored_gpu_name(db_path, local, ordinal);
  const auto db = store::Store::open(db_path);
  std::map<std::string, std::pair<Problem, std::vector<KernelSpec>>> by_problem;
  for (const auto& [p, spec] : measured) {
    auto& entry =
        by_problem.try_emplace(search::problem_key(p.shape, p.layout), p, std::vector<KernelSpec>{}).first->second;
    entry.second.push_back(spec);
  }
  for (const auto& [key, ps] : by_problem)
    policy.observe(stored_observations(db, stored_gpu, ps.first, mode, ps.second));
}

std::vector<std::pair<Shape, std::vector<KernelSpec>>> top_candidates(const std::string& db_path,
                                                                      const std::vector<Shape>& shapes, Accum accum,
                                                                      int top, const LocalGpus& local) {
  const std::string gpu = stored_gpu_name(db_path, local, 0);
  auto db = store::Store::open(db_path);
  std::vector<std::pair<Shape, std::vector<KernelSpec>>> out;
  for (const auto& sh : shapes) {
    std::vector<KernelSpec> specs;
    for (auto layout : {Layout::NN, Layout::TN})
      for (const auto& [hash, us] :
           db.top_specs(store_key(gpu, Problem{sh, layout, accum}, Mode::Offline), "graph", top)) {
        const auto row = db.get_spec(hash);
        if (!row || row->family == "source" || row->family == "artifact") continue;  // no spec to re-run
        specs.push_back(parse_spec(row->text));
      }
    out.emplace_back(sh, std::move(specs));
  }
  return out;
}

}  // namespace cudal2::tuner
