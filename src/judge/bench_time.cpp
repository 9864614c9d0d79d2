// A bench's shape, timed (judge/bench_steps.hpp): every method sampled in shuffled order per
// round, untrusted ones checked by the judge around every batch; then what runners left behind.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "judge/bench_steps.hpp"
#include "judge/runner_proxy.hpp"
#include "judge/secret_seeds.hpp"
#include "measure/timing.hpp"
#include "protocol/contention.hpp"

namespace cudal2 {

void ShapeRun::time() {
  // Time on fresh random-normal inputs.
  buf.fill(false, sr.seed ^ 0x71A1ull, job.st);
  const InputDistribution& timing_inputs = verification_distributions().front();
  for (auto mode : job.opt.modes) time_mode(mode, timing_inputs);
}

void ShapeRun::time_mode(Mode mode, const InputDistribution& timing_inputs) {
  const BenchOptions& opt = job.opt;
  std::vector<MethodPtr>& runners = job.runners;
  const cudaStream_t st = job.st;
  L2Flusher* flusher = job.flusher;
  std::mt19937_64& rng = job.rng;
  const bool interleave = job.interleave, chains = job.chains;
  const Shape& s = sr.shape;
  TimingConfig cfg;
  cfg.mode = mode;
  cfg.qps = opt.qps;
  cfg.timers = opt.timers;
  // Untrusted methods time offline batches of ~1 ms: the judge's clock bounds what a runner
  // reports within a calibrated margin per batch, small against this. (Baselines keep theirs.)
  // Chains: a batch holds no more calls than the judge keeps outputs for; every method of the
  // job is timed the same way, so ratios compare like with like.
  cfg.interleave = interleave;
  if (chains) cfg.max_inner = std::min(cfg.max_inner, buf.chain_capacity());
  TimingConfig untrusted_cfg = cfg;
  untrusted_cfg.target_batch_us = 1000;
  cfg.settle = opt.settle;  // trusted methods only: an untrusted one's batches start on fresh inputs
  std::vector<std::unique_ptr<SampleTimer>> timers(runners.size());
  // Set up (warm-up calls, graphs instantiated) in a shuffled order too: in server mode, one
  // library in two or three slots measured up to 1.6% slower in the slot set up first (H200;
  // docs/measuring.md), so no method may keep one place in every shape.
  std::vector<size_t> setup_order = live;
  std::shuffle(setup_order.begin(), setup_order.end(), rng);
  for (size_t i : setup_order) {
    try {
      TimingConfig c = runners[i]->trusted() ? cfg : untrusted_cfg;
      c.interlude = buf.interlude(runners[i]->layout());
      c.seed_buffer = &buf.seed, c.slot_buffer = &buf.slots;
      timers[i] = runners[i]->make_timer(st, c, flusher);
      timers[i]->setup();
    } catch (const CandidateFault& e) {
      fault(i, e.kind, e.what());
      timers[i].reset();
    } catch (const std::exception& e) {
      sr.methods[i].status = Status::Error;
      sr.methods[i].reason = e.what();
      timers[i].reset();
      cudaGetLastError();
    }
  }
  std::vector<size_t> order;
  for (size_t i : live)
    if (timers[i]) order.push_back(i);
  const bool server = mode == Mode::Server;
  for (int rep = 0; rep < opt.reps; ++rep) {
    std::shuffle(order.begin(), order.end(), rng);
    sr.rounds[mode].push_back(order);
    std::vector<size_t> failed;
    for (size_t i : order) {
      if (runners[i]->trusted()) {
        for (auto t : kTimers)
          if (cfg.timers[static_cast<int>(t)]) timers[i]->sample(t, server ? &rng : nullptr);
        continue;
      }
      // Untrusted: fresh inputs before every batch, the output poisoned before it and verified
      // after it; a chained batch gives every call inputs of its own and verifies every call's
      // output (nothing to memoize); offline, one fresh single call besides.
      bool ok = true;
      for (auto t : kTimers) {
        if (!ok || !cfg.timers[static_cast<int>(t)]) continue;
        TimingConfig c = cfg;
        c.interlude = buf.interlude(runners[i]->layout());
        if (chained(c, t)) {
          ok = checked_chain(
              i, [&] { timers[i]->sample(t, nullptr); }, timers[i]->inner());
          continue;
        }
        judge->fresh_inputs(timing_inputs, secret_seed());
        ok = checked(i, [&] { timers[i]->sample(t, server ? &rng : nullptr); });
      }
      if (ok && !server) {
        judge->fresh_inputs(timing_inputs, secret_seed());
        ok = checked(i, [&] { timers[i]->sample_single(); });
      }
      if (!ok) failed.push_back(i);
    }
    std::erase_if(order, [&](size_t i) { return std::find(failed.begin(), failed.end(), i) != failed.end(); });
    const int mhz = job.clocks.sm_mhz();
    if (mhz > 0) {
      sr.sm_mhz_min = sr.sm_mhz_min < 0 ? mhz : std::min(sr.sm_mhz_min, mhz);
      sr.sm_mhz_max = std::max(sr.sm_mhz_max, mhz);
    }
  }
  for (size_t i : order) {
    auto& mr = sr.methods[i];
    if (!runners[i]->trusted()) {
      if (const CandidateFault defect = timers[i]->defect(plausible_floor_us(s, !server, job.peak))) {
        mr.judge.fail(defect.kind, defect.what());
        mr.status = Status::Failed;
        continue;
      }
    }
    for (auto t : kTimers)
      if (!timers[i]->samples(t).empty()) {
        mr.timing[mode][static_cast<int>(t)] = summarize(timers[i]->samples(t));
        mr.samples[mode][static_cast<int>(t)] = timers[i]->samples(t);
      }
    mr.graph_error[mode] = timers[i]->graph_error();
    mr.inner[mode] = timers[i]->inner();
  }
}

void ShapeRun::leftovers() {
  std::vector<MethodPtr>& runners = job.runners;
  for (size_t i : live) {
    if (runners[i]->trusted()) continue;
    const std::string left = runners[i]->leftovers();
    if (!left.empty() && sr.methods[i].judge.ok) {
      sr.methods[i].judge.fail(FailureKind::HostThread, left);
      sr.methods[i].status = Status::Failed;
      sr.methods[i].timing.clear();
    }
  }
}

ShapeResult ShapeRun::result() {
  // Contention: an untrusted method measured while another process used the GPU is gpu-disturbed
  // when it passed or failed in a way that contention can cause (its times, a lost launch): it is
  // measured again, never charged, never rewarded. A failure contention cannot cause stands.
  for (size_t i = 0; i < sr.methods.size(); ++i) {
    if (job.runners[i]->trusted()) continue;
    const std::string seen = take_disturbance(*job.runners[i]);
    auto& mr = sr.methods[i];
    if (seen.empty()) continue;
    const FailureKind kind = kind_of_check(mr.first_failure().failure);
    if (!recorded_as_disturbed(true, mr.status, kind)) continue;
    mr.reason = mr.status == Status::Ok
                    ? "the GPU was disturbed while it was measured: " + seen
                    : fmt::format("{} (would have been {}: {})", "the GPU was disturbed while it was measured: " + seen,
                                  to_string(kind), mr.first_failure().detail.substr(0, 400));
    mr.status = Status::GpuDisturbed;
  }
  // A method that failed while being timed keeps no times: nothing of it may be recorded as fast.
  for (auto& mr : sr.methods)
    if (mr.status != Status::Ok) {
      mr.timing.clear();
      mr.samples.clear();
    }
  return std::move(sr);
}

}  // namespace cudal2
