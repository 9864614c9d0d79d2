#include "tuner/tune.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "search/reward.hpp"
#include "search/space.hpp"
#include "store/claims.hpp"
#include "store/store.hpp"
#include "tuner/lt_space.hpp"
#include "tuner/record.hpp"

namespace cudal2::tuner {

using search::Observation;
using search::ProblemSpace;
using search::Proposal;

namespace {

using Clock = std::chrono::steady_clock;

// How often a tuner whose remaining work other tuners hold looks whether it was measured or its
// claimer died: short next to a judge job (seconds), long next to a claim (a transaction).
constexpr double kClaimPollSeconds = 0.2;

// The GPU name this run's results are found under (the store is keyed by device name; the devices
// as the caller found them, TuneOptions::local): the local GPU's; on a machine without one (a
// --judge that answers from recorded measurements) the one GPU the store holds results of, which
// is the judge's: the rows are stored under the name the judge reports, and looking them up
// under "unknown" found nothing, so a finished tune re-ran (and re-stored) everything.
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

// Sleeps about `seconds`, waking early when the stop flag is set.
void nap(double seconds, const std::atomic<bool>* stop) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until && !(stop && stop->load())) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string trim(const std::string& t) {
  const auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const auto c = text.find(',', at);
    out.push_back(trim(text.substr(at, c == std::string::npos ? std::string::npos : c - at)));
    if (c == std::string::npos) return out;
    at = c + 1;
  }
}

// One GPU lane of a round: its request (judge environment, compile share, command) and totals.
struct LaneState {
  EvalRequest req;
  TuneResult::Lane stats;
};

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

// The store's key of problem p measured on gpu in mode.
store::ProblemKey store_key(const std::string& gpu, const Problem& p, Mode mode) {
  return {gpu,       std::string(to_string(p.accum)), std::string(to_string(p.layout)), p.shape.m, p.shape.n,
          p.shape.k, std::string(to_string(mode))};
}

// What the store already knows about the run's specs on one problem, one observation per spec:
// its offline graph row when there is one (the objective), else its first row.
std::vector<Observation> stored_observations(const store::Store& db, const std::string& gpu, const Problem& p,
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
  std::vector<Observation> out;
  for (const auto& [hash, r] : pick) {
    Observation o;
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

// One round's candidates: the problems' proposals without duplicates, highest priority first,
// ties in the space's order (free-form sources after specs, in proposal order), at most n. For
// policies whose problem lists follow one global order (exhaustive: the space's; random: its
// permutation) this is exactly the first n of that order not yet known on every problem.
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

// Evaluates one round on the lanes: candidate i goes to lane i % lanes.size(), the lanes run at
// once (one thread each; the judges, compilers and store connections are the lane's own), and
// the outcomes come back in the round's order. A lane that throws stops the round with its error
// once every lane has finished.
std::vector<CandidateOutcome> evaluate_lanes(std::vector<LaneState>& lanes, const std::vector<Proposal>& round,
                                             double deadline_minutes, const std::string& db_path);

// Evaluates one round: the specs in one call, free-form sources in one call per layout and
// accumulator, each recorded in the store at db_path under a run of its own. Outcomes in the
// proposals' order.
std::vector<CandidateOutcome> evaluate_round(const EvalRequest& base, const std::vector<Proposal>& round,
                                             const std::string& db_path) {
  std::vector<CandidateOutcome> out(round.size());
  EvalRequest req = base;
  req.specs.clear(), req.free_sources.clear();
  req.spec_shapes.clear();
  std::vector<size_t> spec_at;
  std::map<std::pair<Layout, Accum>, std::vector<size_t>> sources;
  for (size_t i = 0; i < round.size(); ++i) {
    if (round[i].source.empty()) {
      req.specs.push_back(round[i].spec);
      req.spec_shapes.push_back(round[i].shapes);
      spec_at.push_back(i);
    } else {
      sources[{round[i].spec.layout, round[i].spec.accum}].push_back(i);
    }
  }
  const auto t0 = Clock::now();
  if (!req.specs.empty()) {
    const auto got = evaluate_and_record(req, db_path);
    for (size_t j = 0; j < got.size(); ++j) out[spec_at[j]] = got[j];
  }
  for (const auto& [la, idx] : sources) {
    EvalRequest fr = base;
    fr.specs.clear();
    fr.free_sources.clear();
    fr.free_layout = la.first, fr.free_accum = la.second;
    for (size_t i : idx) fr.free_sources.push_back(round[i].source);
    if (fr.deadline_minutes > 0) {
      fr.deadline_minutes -= std::chrono::duration<double>(Clock::now() - t0).count() / 60.0;
      if (fr.deadline_minutes <= 0) {
        for (size_t i : idx) out[i].status = Status::NotRun;
        continue;
      }
    }
    const auto got = evaluate_and_record(fr, db_path);
    for (size_t j = 0; j < got.size(); ++j) out[idx[j]] = got[j];
  }
  return out;
}

std::vector<CandidateOutcome> evaluate_lanes(std::vector<LaneState>& lanes, const std::vector<Proposal>& round,
                                             double deadline_minutes, const std::string& db_path) {
  const size_t g = lanes.size();
  std::vector<std::vector<Proposal>> dealt(g);
  std::vector<std::vector<size_t>> at(g);
  for (size_t i = 0; i < round.size(); ++i) {
    dealt[i % g].push_back(round[i]);
    at[i % g].push_back(i);
  }
  std::vector<CandidateOutcome> out(round.size());
  std::vector<std::exception_ptr> errors(g);
  auto run_lane = [&](size_t l) {
    try {
      if (dealt[l].empty()) return;
      EvalRequest req = lanes[l].req;
      req.deadline_minutes = deadline_minutes;
      const auto t0 = Clock::now();
      const auto got = evaluate_round(req, dealt[l], db_path);
      lanes[l].stats.busy_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      for (size_t j = 0; j < got.size(); ++j) {
        out[at[l][j]] = got[j];
        lanes[l].stats.candidates += got[j].status != Status::NotRun && got[j].status != Status::GpuDisturbed;
      }
    } catch (...) {
      errors[l] = std::current_exception();
    }
  };
  if (g == 1) {
    run_lane(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t l = 0; l < g; ++l) threads.emplace_back(run_lane, l);
    for (auto& t : threads) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace

std::vector<int> parse_gpus(const std::string& text, int count) {
  const std::string t = trim(text);
  if (t == "all") {
    if (count <= 0) throw InputError("--gpus all: this process sees no GPU");
    std::vector<int> out(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) out[static_cast<size_t>(i)] = i;
    return out;
  }
  std::vector<int> out;
  for (const auto& item : split_commas(t)) {
    const bool digits = !item.empty() && item.size() <= 4 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw InputError(fmt::format("--gpus '{}': expected 'all' or device numbers such as 0,1 (got '{}')", text, item));
    const int d = std::stoi(item);
    if (d >= count)
      throw InputError(fmt::format("--gpus '{}': GPU {} does not exist (this process sees {} GPU{}: 0..{})", text, d,
                                   count, count == 1 ? "" : "s", count - 1));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw InputError(fmt::format("--gpus '{}': GPU {} is listed twice", text, d));
    out.push_back(d);
  }
  return out;
}

std::string visible_device_of(int ordinal) {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v || trim(v).empty()) return std::to_string(ordinal);
  const auto entries = split_commas(v);
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= entries.size() || entries[static_cast<size_t>(ordinal)].empty())
    throw InputError(fmt::format("GPU {} is not in CUDA_VISIBLE_DEVICES={}", ordinal, v));
  return entries[static_cast<size_t>(ordinal)];
}

std::optional<double> score_measurement(const ScoreInput& in) {
  return search::reward({in.status, in.time_us, in.baseline_us, in.rel_err, in.source_bytes});
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

TuneResult run_tune(const TuneOptions& o) {
  // Everything that can be refused is refused before the GPU is touched.
  auto policy = search::make_policy(o.search, o.policy);
  if (o.families.empty()) throw InputError("--families names no kernel family");
  // A listed space (@FILE) is the run's whole space, cublaslt specs included; otherwise cublaslt's
  // space is asked of a judge per problem (below) and the other families' is enumerated here.
  const bool listed = o.space.starts_with("@");
  ProblemSpace space;
  space.common = search::search_space(listed ? o.families : search::shape_independent(o.families), o.space, o.accum);
  if (o.final_top > 0 && o.final_csv.empty()) throw InputError("--final-top needs --final-csv FILE");
  if (o.budget < 0) throw InputError("--budget must be 0 (no limit) or positive");
  if (o.per_problem < 0) throw InputError("--per-problem must be 0 (as --round) or positive");
  if (o.max_rounds < 0) throw InputError("--rounds must be 0 (no limit) or positive");
  if (o.eval.shapes.empty()) throw InputError("no shapes to tune");
  if (o.layouts.empty()) throw InputError("--layouts names no layout");
  if (!o.gpus.empty() && trim(o.gpus) != "all") parse_gpus(o.gpus, 1 << 20);  // its syntax, before the GPU
  // A policy file that cannot be read is bad input, refused before the GPU is looked for.
  if (!o.policy.state_path.empty() && std::filesystem::exists(o.policy.state_path)) policy->load(o.policy.state_path);
  if (o.check_gpu) o.local.require();
  // The GPU lanes: one without --gpus (today's single judge), else one per listed GPU.
  std::vector<int> ordinals{0};
  if (!o.gpus.empty()) {
    const int count = o.gpu_count >= 0 ? o.gpu_count : o.local.count();
    ordinals = parse_gpus(o.gpus, count);
    if (o.check_gpu)
      for (int d : ordinals)
        if (o.local.names.at(static_cast<size_t>(d)) != o.local.names.at(static_cast<size_t>(ordinals.front())))
          throw InputError(
              fmt::format("--gpus: GPU {} ({}) and GPU {} ({}) differ; the store keys results by GPU "
                          "model, so tune one model per run",
                          ordinals.front(), o.local.names.at(static_cast<size_t>(ordinals.front())), d,
                          o.local.names.at(static_cast<size_t>(d))));
  }
  // One problem's own space: cuBLASLt's neighbourhood of its heuristic.
  if (search::needs_gpu_space(o.families) && !o.skip_search && !listed) {
    // cuBLASLt answers for the GPU in use: ask a judge (the process that owns the device).
    for (auto& [p, specs] : judge_lt_space(o.eval.judge_exe, o.eval.shapes, o.layouts, o.accum, o.lt_max,
                                           o.eval.job_overhead_s + o.eval.timeout_s))
      space.per_problem[search::problem_key(p.shape, p.layout)] = std::move(specs);
  }
  const auto all = space.all();
  std::map<std::string, size_t> space_index;
  for (size_t i = 0; i < all.size(); ++i) space_index.emplace(all[i].text(), i);

  std::vector<Problem> problems;
  for (const auto& sh : o.eval.shapes)
    for (auto layout : o.layouts) problems.push_back({sh, layout, o.accum});

  TuneResult result;
  result.space_size = all.size();
  EvalRequest req = o.eval;
  req.score = score_measurement;
  req.local_gpu = o.local.first_name();
  req.progress = o.progress && req.progress;
  std::vector<LaneState> lanes;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (int d : ordinals) {
    LaneState lane{req, {}};
    lane.stats.ordinal = d;
    if (!o.gpus.empty()) {
      lane.stats.device = lane.req.visible_devices = visible_device_of(d);
      // The run row of each lane's store writes names its GPU.
      lane.req.command_line += fmt::format(" [gpu {}: CUDA_VISIBLE_DEVICES={}]", d, lane.stats.device);
    }
    // The lanes compile at once: share the cores between them instead of starting cores x lanes nvcc.
    if (ordinals.size() > 1 && lane.req.compile_jobs <= 0)
      lane.req.compile_jobs = static_cast<int>(std::max<size_t>(1, cores / ordinals.size()));
    lanes.push_back(std::move(lane));
  }
  // The final measurement runs on the first lane's GPU.
  req.visible_devices = lanes.front().req.visible_devices;
  req.command_line = lanes.front().req.command_line;
  const Mode mode = o.eval.modes.front();
  if (!o.skip_search) {
    const std::string gpu = stored_gpu_name(o.db_path, o.local, ordinals.front());
    // Claims need a name every tuner on the store agrees on from the start: without a local GPU,
    // the stored name above depends on whether another tuner has stored a row yet, so claim under
    // "" (the judge's GPU, store/claims.hpp).
    const std::string claim_gpu = o.local.available() ? gpu : std::string();
    store::WorkClaims claims(o.db_path);
    std::mutex claims_mu;  // one connection, asked by every lane's thread
    for (auto& lane : lanes) {
      lane.req.stop = o.stop;
      lane.req.claim = [&](const std::vector<WorkItem>& items) {
        std::vector<store::WorkKey> keys;
        for (const auto& it : items)
          keys.push_back({it.spec_hash, claim_gpu, std::string(to_string(it.accum)), std::string(to_string(it.layout)),
                          it.shape.m, it.shape.n, it.shape.k, std::string(to_string(mode))});
        const std::lock_guard<std::mutex> l(claims_mu);
        return claims.claim(keys);
      };
    }
    {
      // Resume: what the store knows about this GPU, these problems and the run's specs.
      const auto db = store::Store::open(o.db_path);
      for (const auto& p : problems) policy->observe(stored_observations(db, gpu, p, mode, space.for_problem(p)));
    }
    const auto t0 = Clock::now();
    int evaluated = 0;
    bool announced = false;  // the first planned round's size is printed once
    int replanned = 0;       // empty rounds in a row planned again after observing others' rows
    // Free-form sources a round had no room for (more problems than --round), per problem: each
    // cost a model call and is not proposed again, so it waits for the next round, and its problem
    // is not asked for more meanwhile. (Specs left out are simply proposed again.)
    std::vector<std::vector<Proposal>> queued(problems.size());
    for (;;) {
      if (o.max_rounds > 0 && result.rounds >= o.max_rounds) break;
      if (o.stop && o.stop->load()) break;
      int n = o.round > 0 ? o.round : 0;
      if (o.budget > 0) n = n > 0 ? std::min(n, o.budget - evaluated) : o.budget - evaluated;
      std::vector<std::vector<Proposal>> lists;
      std::map<std::string, std::vector<Shape>> wanted;  // spec text -> shapes whose problem proposed it
      for (size_t pi = 0; pi < problems.size(); ++pi) {
        const auto& p = problems[pi];
        const auto ps = space.for_problem(p);
        const int asked = o.per_problem > 0 ? o.per_problem : n > 0 ? n : static_cast<int>(ps.size());
        lists.push_back(queued[pi].empty() ? policy->propose(p, asked, ps) : std::exchange(queued[pi], {}));
        for (const auto& prop : lists.back()) {
          auto& v = wanted[prop.spec.text()];
          if (prop.source.empty() && std::find(v.begin(), v.end(), p.shape) == v.end()) v.push_back(p.shape);
        }
      }
      auto round = merge(lists, n, space_index);
      {
        std::set<std::string> in_round;
        for (const auto& prop : round)
          if (!prop.source.empty()) in_round.insert(prop.source);
        for (size_t pi = 0; pi < problems.size(); ++pi)
          for (auto& prop : lists[pi])
            if (!prop.source.empty() && !in_round.count(prop.source)) {
              ++prop.priority;  // ahead of fresh proposals next round, so none waits forever
              queued[pi].push_back(std::move(prop));
            }
      }
      // A spec is measured on the shapes whose problems proposed it (not yet measured there), not
      // on every shape of the run: on a resumed run the latter re-measured every finished shape
      // (for cuBLASLt's per-problem spaces, and for the common spaces of our own families too: a
      // resumed 14-shape wgmma_swapab run spent its whole budget on the 7 shapes already done).
      for (auto& prop : round)
        if (prop.source.empty()) prop.shapes = wanted[prop.spec.text()];
      const auto planned = plan_round(claims, claim_gpu, mode, o.accum, o.eval.shapes, round);
      if (!planned.measured_elsewhere.empty()) {
        // Another tuner measured these: the policy learns them from the store, as on a resume, and
        // proposes other work next (with --round N, the first N proposals measured elsewhere
        // made an empty round, and the tuner left with the rest of the space open).
        const std::string stored_gpu = stored_gpu_name(o.db_path, o.local, ordinals.front());
        const auto db = store::Store::open(o.db_path);
        std::map<std::string, std::pair<Problem, std::vector<KernelSpec>>> by_problem;
        for (const auto& [p, spec] : planned.measured_elsewhere) {
          auto& entry = by_problem.try_emplace(search::problem_key(p.shape, p.layout), p, std::vector<KernelSpec>{})
                            .first->second;
          entry.second.push_back(spec);
        }
        for (const auto& [key, ps] : by_problem)
          policy->observe(stored_observations(db, stored_gpu, ps.first, mode, ps.second));
      }
      if (!announced) {
        announced = true;
        result.first_round = round.size();
        if (o.progress)
          std::fprintf(stderr, "cudal2 tune: %zu of %zu candidate(s) left to evaluate on %zu shape(s)\n", round.size(),
                       all.size(), o.eval.shapes.size());
      }
      double deadline = 0;
      if (o.budget_minutes > 0) {
        deadline = o.budget_minutes - std::chrono::duration<double>(Clock::now() - t0).count() / 60.0;
        if (deadline <= 0) break;
      }
      if (round.empty()) {
        // Measured elsewhere and now observed: plan again once (a policy that proposes them anyway
        // ends the run here, as an empty round always did).
        if (planned.held == 0 && (planned.measured_elsewhere.empty() || ++replanned > 1)) break;
        // Work other tuners hold is waited for, not left: if one of them dies with it, its claims
        // lapse and this tuner takes the work over (it used to exit at once, and the work stayed
        // undone until a resume).
        if (planned.held > 0) nap(kClaimPollSeconds, o.stop);
        continue;
      }
      replanned = 0;
      ++result.rounds;
      if (o.progress && result.rounds > 1)
        std::fprintf(stderr, "cudal2 tune: round %d: %zu candidate(s), %.1f min elapsed\n", result.rounds, round.size(),
                     std::chrono::duration<double>(Clock::now() - t0).count() / 60.0);
      const auto outcomes = evaluate_lanes(lanes, round, deadline, o.db_path);
      std::vector<Observation> seen;
      bool cut_short = false;
      size_t disturbed = 0;
      for (size_t i = 0; i < round.size(); ++i) {
        // Not run because another tuner took all of it is no reason to stop; a deadline or a signal is.
        const size_t its_shapes = round[i].shapes.empty() ? o.eval.shapes.size() : round[i].shapes.size();
        cut_short =
            cut_short || (outcomes[i].status == Status::NotRun && outcomes[i].elsewhere_shapes.size() < its_shapes);
        disturbed += outcomes[i].status == Status::GpuDisturbed;
        auto obs =
            observations_of(round[i], outcomes[i], round[i].shapes.empty() ? o.eval.shapes : round[i].shapes, o.accum);
        seen.insert(seen.end(), obs.begin(), obs.end());
      }
      policy->observe(seen);
      if (!o.policy.state_path.empty()) policy->save(o.policy.state_path);
      result.outcomes.insert(result.outcomes.end(), outcomes.begin(), outcomes.end());
      evaluated += static_cast<int>(round.size());
      if (cut_short || (o.budget > 0 && evaluated >= o.budget)) break;
      // gpu-disturbed candidates are proposed again in a later round; a round that measured
      // nothing else says the GPU stays disturbed: stop rather than go round in circles (a
      // resumed run measures them).
      if (disturbed == round.size()) {
        if (o.progress)
          std::fprintf(stderr, "cudal2 tune: the GPU was disturbed for every candidate of the round; stopping\n");
        break;
      }
    }
    result.search_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (auto& lane : lanes) lane.req.claim = nullptr;  // refers to `claims`, which ends here
  } else if (o.progress) {
    std::fprintf(stderr, "cudal2 tune: %zu of %zu candidate(s) left to evaluate on %zu shape(s)\n", size_t{0},
                 all.size(), o.eval.shapes.size());
  }

  for (const auto& l : lanes) result.lanes.push_back(l.stats);

  result.stopped = o.stop && o.stop->load();
  if (o.final_top > 0 && !result.stopped) {
    // Phase 2: each shape's fastest specs against the baselines, every timer, the final modes.
    for (const auto& [shape, specs] : top_candidates(o.db_path, o.eval.shapes, o.accum, o.final_top, o.local)) {
      if (specs.empty()) continue;
      EvalRequest fin = req;
      fin.specs = specs;
      fin.free_sources.clear();
      fin.shapes = {shape};
      fin.modes = o.final_modes;
      fin.timers = {true, true, true};
      fin.reps = o.final_reps;
      fin.batch = static_cast<int>(specs.size());
      fin.csv_path = o.final_csv;
      fin.baselines = o.final_baselines;
      fin.name_by_hash = true;
      fin.deadline_minutes = 0;
      if (o.progress)
        std::fprintf(stderr, "cudal2 tune: final measurement of %s (%zu specs)\n", shape.str().c_str(), specs.size());
      evaluate_and_record(fin, o.db_path);
    }
  }
  return result;
}

void print_tune_summary(const std::vector<CandidateOutcome>& outcomes) {
  std::map<std::string, int> by_status;
  double compile_s = 0, measure_s = 0;
  std::map<std::string, std::pair<double, std::string>> best;  // shape -> (us, spec)
  for (const auto& o : outcomes) {
    ++by_status[std::string(to_string(o.status))];
    compile_s += o.compile_seconds;
    measure_s += o.measure_seconds;
    for (const auto& [shape, us] : o.graph_us)
      if (!best.count(shape) || us < best[shape].first) best[shape] = {us, o.spec_text};
  }
  std::printf("%zu candidate(s):", outcomes.size());
  for (const auto& [st, n] : by_status) std::printf(" %s %d", st.c_str(), n);
  std::printf("\ncompile time %.0f s (summed over parallel compiles), measure time %.0f s\n", compile_s, measure_s);
  for (const auto& [shape, b] : best) std::printf("  %-20s %9.2f us  %s\n", shape.c_str(), b.first, b.second.c_str());
}

void print_tune_summary(const TuneResult& r) {
  print_tune_summary(r.outcomes);
  if (r.search_seconds <= 0 || r.outcomes.empty()) return;
  auto per_min = [](double n, double s) { return s > 0 ? 60.0 * n / s : 0.0; };
  if (r.lanes.size() > 1 || (r.lanes.size() == 1 && !r.lanes[0].device.empty()))
    for (const auto& l : r.lanes)
      std::printf("  gpu %d (CUDA_VISIBLE_DEVICES=%s): %d candidate(s) in %.0f s busy, %.1f per minute\n", l.ordinal,
                  l.device.empty() ? "inherited" : l.device.c_str(), l.candidates, l.busy_seconds,
                  per_min(l.candidates, l.busy_seconds));
  int n = 0;
  for (const auto& l : r.lanes) n += l.candidates;
  std::printf("throughput: %d candidate(s) in %.0f s on %zu GPU(s): %.1f per minute (%.1f per minute per GPU)\n", n,
              r.search_seconds, r.lanes.size(), per_min(n, r.search_seconds),
              per_min(n, r.search_seconds) / static_cast<double>(std::max<size_t>(1, r.lanes.size())));
}

}  // namespace cudal2::tuner
