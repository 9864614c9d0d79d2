#pragma once
// Timers and modes (DESIGN.md, "Measuring").
//   graph: `inner` back-to-back calls captured in one CUDA graph, replayed, timed with events;
//          per-call device time as an inference server sees it. The primary number.
//   eager: `inner` back-to-back stream launches timed with events (includes launch gaps).
//   host:  the paper's protocol: wall clock around one call plus cudaStreamSynchronize.
// Modes: offline = back-to-back with warm L2; server = each timed call comes after an idle gap
// drawn from an exponential distribution (mean 1/qps) with the L2 flushed, one call per sample.
#include <cuda_runtime.h>

#include <array>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "eval/device.hpp"
#include "eval/runner.hpp"

namespace cudal2 {

enum class Mode { Offline, Server };
enum class TimerKind { Graph = 0, Eager = 1, Host = 2 };
inline constexpr std::array<TimerKind, 3> kTimers{TimerKind::Graph, TimerKind::Eager, TimerKind::Host};
std::string_view to_string(Mode m);
std::string_view to_string(TimerKind t);
Mode parse_mode(std::string_view s);

using LaunchFn = std::function<void(cudaStream_t)>;

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
// graph, which events recorded outside it would include, stays out. Capture failures are kept,
// not thrown.
class CallGraph {
 public:
  CallGraph(const LaunchFn& fn, cudaStream_t s, int calls);
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
  // Which timers sample() feeds (indexed by TimerKind); a search ranks by graph time alone.
  std::array<bool, 3> timers{true, true, true};
};

// Samples of one method on one shape, one timer at a time. setup() warms up and captures. The
// bench interleaves the samples of all methods in shuffled order. Local methods are timed by
// MethodTimer in this process; an untrusted candidate by the judge's RemoteTimer (eval/remote).
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
  virtual Finding defect(double floor_us) const { return {}; }
  const std::vector<double>& samples(TimerKind t) const { return samples_[static_cast<int>(t)]; }
  // Empty when the graph timer works; otherwise why it could not be captured.
  const std::string& graph_error() const { return graph_error_; }
  int inner() const { return inner_; }

 protected:
  std::array<std::vector<double>, 3> samples_;
  std::string graph_error_;
  int inner_ = 1;
};

class MethodTimer : public SampleTimer {
 public:
  MethodTimer(Runner& runner, cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher);
  void setup() override;
  void sample(TimerKind t, std::mt19937_64* gap_rng) override;
  // Every timer the config enables, in order graph, eager, host.
  void sample_all(std::mt19937_64& rng);
  // Device time of one call on its own (a one-call graph; eager if capture fails): what a fresh
  // call costs.
  double single_us();

 private:
  void gap_and_flush(std::mt19937_64& rng);
  Runner& runner_;
  cudaStream_t stream_;
  TimingConfig cfg_;
  L2Flusher* flusher_;
  LaunchFn fn_;
  std::unique_ptr<CallGraph> graph_, single_;
  EventPair events_;
};

}  // namespace cudal2
