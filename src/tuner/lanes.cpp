#include "tuner/lanes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <thread>
#include <utility>

#include "tuner/evaluator.hpp"

namespace cudal2::tuner {

using search::Proposal;

StoreSink& Lane::sink() {
  if (!sink_) sink_ = std::make_unique<StoreSink>(db_path, req.command_line);
  return *sink_;
}

sandbox::Child* Lane::judge() {
  if (!judge_) judge_ = std::make_unique<sandbox::Child>(evaluation::make_judge(req));
  return judge_.get();
}

void Lane::start_judge() { judge()->start(); }

const Compiler* Lane::compiler() {
  if (!jit_) jit_ = std::make_unique<Compiler>(compile_options(req));
  return jit_.get();
}

void Lane::finish() {
  if (sink_) sink_->finish();
  sink_.reset();
  if (judge_) judge_->stop();
  judge_.reset();
}

std::vector<CandidateOutcome> Lane::evaluate(const std::vector<Proposal>& round, const Budget& budget) {
  std::vector<CandidateOutcome> out(round.size());
  EvalRequest specs = req;
  specs.specs.clear(), specs.free_sources.clear();
  specs.spec_shapes.clear();
  std::vector<size_t> spec_at;
  std::map<std::pair<Layout, Accum>, std::vector<size_t>> sources;
  for (size_t i = 0; i < round.size(); ++i) {
    if (round[i].source.empty()) {
      specs.specs.push_back(round[i].spec);
      specs.spec_shapes.push_back(round[i].shapes);
      spec_at.push_back(i);
    } else {
      sources[{round[i].spec.layout, round[i].spec.accum}].push_back(i);
    }
  }
  if (!specs.specs.empty()) {
    specs.deadline_minutes = budget.deadline_minutes();
    specs.judge = judge();
    specs.compiler = compiler();
    const auto got = evaluate_candidates(specs, sink());
    for (size_t j = 0; j < got.size(); ++j) out[spec_at[j]] = got[j];
  }
  for (const auto& [la, idx] : sources) {
    if (budget.out_of_time()) {
      for (size_t i : idx) out[i].status = Status::NotRun;
      continue;
    }
    EvalRequest fr = req;
    fr.specs.clear();
    fr.free_sources.clear();
    fr.free_layout = la.first, fr.free_accum = la.second;
    for (size_t i : idx) fr.free_sources.push_back(round[i].source);
    fr.deadline_minutes = budget.deadline_minutes();
    fr.judge = judge();
    fr.compiler = compiler();
    const auto got = evaluate_candidates(fr, sink());
    for (size_t j = 0; j < got.size(); ++j) out[idx[j]] = got[j];
  }
  return out;
}

std::vector<Lane> make_lanes(const TuneOptions& o, const EvalRequest& req, const std::vector<int>& ordinals) {
  std::vector<Lane> lanes;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (int d : ordinals) {
    Lane lane;
    lane.req = req;
    lane.db_path = o.db_path;
    lane.stats.ordinal = d;
    if (!o.gpus.empty()) {
      lane.stats.device = lane.req.visible_devices = visible_device_of(d);
      // Each lane's run row names its GPU.
      lane.req.command_line += fmt::format(" [gpu {}: CUDA_VISIBLE_DEVICES={}]", d, lane.stats.device);
    }
    // The lanes compile at once: share the cores between them instead of starting cores x lanes nvcc.
    if (ordinals.size() > 1 && lane.req.compile_jobs <= 0)
      lane.req.compile_jobs = static_cast<int>(std::max<size_t>(1, cores / ordinals.size()));
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

void share_claims(std::vector<Lane>& lanes, const std::atomic<bool>* stop, store::WorkClaims& claims, std::mutex& mu,
                  const std::string& claim_gpu, Mode mode) {
  for (auto& lane : lanes) {
    lane.req.stop = stop;
    lane.req.claim = [&claims, &mu, claim_gpu, mode](const std::vector<WorkItem>& items) {
      std::vector<store::WorkKey> keys;
      for (const auto& it : items)
        keys.push_back({it.spec_hash, claim_gpu, std::string(to_string(it.accum)), std::string(to_string(it.layout)),
                        it.shape.m, it.shape.n, it.shape.k, std::string(to_string(mode))});
      const std::lock_guard<std::mutex> l(mu);
      return claims.claim(keys);
    };
  }
}

std::vector<CandidateOutcome> evaluate_lanes(std::vector<Lane>& lanes, const std::vector<Proposal>& round,
                                             const Budget& budget) {
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
      const Budget::Clock::time_point t0 = Budget::Clock::now();
      const auto got = lanes[l].evaluate(dealt[l], budget);
      lanes[l].stats.busy_seconds += std::chrono::duration<double>(Budget::Clock::now() - t0).count();
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
    for (size_t l = 0; l < g; ++l)
      if (!dealt[l].empty()) lanes[l].start_judge();
    std::vector<std::thread> threads;
    for (size_t l = 0; l < g; ++l) threads.emplace_back(run_lane, l);
    for (auto& t : threads) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace cudal2::tuner
