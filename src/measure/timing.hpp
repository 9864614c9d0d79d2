#pragma once
// Timers and modes (docs/measuring.md).
//   graph: `inner` back-to-back calls captured in one CUDA graph, replayed, timed with events;
//          per-call device time as an inference server sees it. The primary number.
//   eager: `inner` back-to-back stream launches timed with events (includes launch gaps).
//   host:  the paper's protocol: wall clock around one call plus cudaStreamSynchronize.
//   chain: a graph of [trusted interlude, call] x inner less a paired replay of [interlude] x
//          inner (measure/interlude.hpp): no call follows another call directly, so nothing one call
//          leaves running (PDL) overlaps the next, and every call has inputs of its own.
// Chained batches: with TimingConfig::interleave, graph and eager batches are chains too (every
// untrusted candidate's, and every method's of its job): no timed call can reuse an earlier one.
// Modes: offline = back-to-back with warm L2; server = each timed call comes after an idle gap
// drawn from an exponential distribution (mean 1/qps) with the L2 flushed, one call per sample.
#include <cuda_runtime.h>

#include <array>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "measure/device.hpp"
#include "measure/interlude.hpp"
#include "measure/method.hpp"
#include "protocol/modes.hpp"

namespace cudal2 {

using LaunchFn = std::function<void(cudaStream_t)>;
// Trusted work before call `call` of a batch (measure/interlude.hpp).
using InterludeFn = std::function<void(int call, cudaStream_t)>;

// Events created once, reused.
class EventPair {
 public:
  EventPair();
  ~EventPair();
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start(cudaStream_t s);
  float stop_ms(cudaStream_t s);  // records the end event, synchronizes, returns elapsed ms
  cudaEvent_t first() const { return a_; }
  cudaEvent_t second() const { return b_; }

 private:
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

// A CUDA graph holding `calls` back-to-back launches of fn between two event-record nodes, so
// a replay is timed from the device's own start to its own end: the host's time to submit the
// graph, which events recorded outside it would include, stays out. With `before`, a chain:
// before(i) precedes call i. Capture failures are kept, not thrown.
class CallGraph {
 public:
  CallGraph(const LaunchFn& fn, cudaStream_t s, int calls, const InterludeFn* before = nullptr);
  ~CallGraph();
  CallGraph(const CallGraph&) = delete;
  CallGraph& operator=(const CallGraph&) = delete;
  bool ok() const { return exec_ != nullptr; }
  const std::string& error() const { return error_; }
  int calls() const { return calls_; }
  void launch(cudaStream_t s);
  // Launch, wait, and return the device time per call in microseconds.
  double replay_us(cudaStream_t s);

 private:
  cudaGraphExec_t exec_ = nullptr;
  EventPair events_;
  int calls_ = 0;
  std::string error_;
};

// Quick per-call device time for fn (median of `reps` event-timed batches of `inner` eager
// calls). Used to size batches and by auto-tuning to rank candidates.
double quick_time_us(const LaunchFn& fn, cudaStream_t s, int inner, int reps);

// Per-call device time for ranking candidates: a graph of back-to-back calls sized to ~200 us of
// device time (eager launches if capture fails); median of 5 replays.
double rank_time_us(const LaunchFn& fn, cudaStream_t s);

struct TimingConfig {
  Mode mode = Mode::Offline;
  double target_batch_us = 200;  // offline batches aim for at least this much device time
  int max_inner = 1000;
  double qps = 200;  // server mode: mean idle gap 1/qps seconds
  // Which timers sample() feeds; a search ranks by graph time alone.
  TimerSet timers = kDefaultTimers;
  // This process's interlude buffers; unset: no chains (the chain timer gives no samples). The
  // seed word and the slots as allocations, for a runner in another process to map.
  std::optional<InterludeArgs> interlude;
  const GuardedBuffer* seed_buffer = nullptr;
  const GuardedBuffer* slot_buffer = nullptr;
  // Offline graph and eager batches are chains too (untrusted candidates and their jobs).
  bool interleave = false;
  // Chain samples are per call less a paired replay of the interludes alone. Off in a runner: it
  // reports the whole chain and the judge subtracts interludes it times itself.
  bool subtract = true;
  // Offline graph and chain samples: first flush the L2 (with the flusher the timer was given) and
  // replay the batch once untimed, so the timed batch starts from the L2 that the method's own
  // calls leave, not from what the method sampled before it left (methods of one shape share its
  // operands, and a kernel whose loads do not stay in the L2 otherwise finds another's lines).
  bool settle = false;
};

// Whether a sample of timer t in this configuration is a chained batch.
bool chained(const TimingConfig& cfg, TimerKind t);

// The interludes of a batch of `calls` alone, as a graph and as eager launches: what a chain
// sample subtracts, timed in the process that trusts it.
class InterludeTimer {
 public:
  InterludeTimer(const InterludeArgs& args, cudaStream_t s, int calls);
  // Per call, in microseconds: the graph of interludes, or eager launches of them.
  double graph_us();
  double eager_us();
  bool ok() const { return graph_.ok(); }

 private:
  InterludeFn fn_;
  cudaStream_t stream_;
  int calls_;
  CallGraph graph_;
  EventPair events_;
};

// Samples of one method on one shape, one timer at a time. setup() warms up and captures. The
// bench interleaves the samples of all methods in shuffled order. Local methods are timed by
// MethodTimer in this process; an untrusted candidate by the judge's RemoteTimer (judge/runner_proxy.cpp).
class SampleTimer {
 public:
  virtual ~SampleTimer() = default;
  virtual void setup() = 0;
  // Adds one sample of timer t. gap_rng: server mode's idle gap and L2 flush come first.
  virtual void sample(TimerKind t, std::mt19937_64* gap_rng) = 0;
  // Untrusted timers: one fresh call on its own (the judge compares batches against it).
  virtual void sample_single() {}
  // Untrusted timers: nothing when the samples so far can be believed, else the defect (kinds
  // implausible-time, timing-mismatch, inconsistent-time). floor_us: the least time per call the
  // hardware allows for this shape in this mode.
  virtual CandidateFault defect(double floor_us) const { return {}; }
  const std::vector<double>& samples(TimerKind t) const { return samples_[static_cast<int>(t)]; }
  // Empty when the graph timer works; otherwise why it could not be captured.
  const std::string& graph_error() const { return graph_error_; }
  int inner() const { return inner_; }

 protected:
  std::array<std::vector<double>, kTimerCount> samples_;
  std::string graph_error_;
  int inner_ = 1;
};

class MethodTimer : public SampleTimer {
 public:
  MethodTimer(Method& runner, cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher);
  void setup() override;
  void sample(TimerKind t, std::mt19937_64* gap_rng) override;
  // Every timer the config enables, in order graph, eager, host, chain.
  void sample_all(std::mt19937_64& rng);
  // Device time of one call on its own (a one-call graph; eager if capture fails): what a fresh
  // call costs.
  double single_us();

 private:
  void gap_and_flush(std::mt19937_64& rng);
  double eager_batch(bool chain);
  Method& runner_;
  cudaStream_t stream_;
  TimingConfig cfg_;
  L2Flusher* flusher_;
  LaunchFn fn_;
  InterludeFn interlude_;
  // graph_: the graph timer's batch (a chain when interleaved); chain_: the chain timer's when
  // graph_ is not one.
  std::unique_ptr<CallGraph> graph_, chain_, single_;
  std::unique_ptr<InterludeTimer> alone_;  // what chain samples subtract
  EventPair events_;
};

}  // namespace cudal2
