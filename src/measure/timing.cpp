#include "measure/timing.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "core/problem.hpp"
#include "core/stats.hpp"
#include "measure/graph_path.hpp"

namespace cudal2 {

EventPair::EventPair() {
  CUDAL2_CUDA(cudaEventCreate(&a_));
  CUDAL2_CUDA(cudaEventCreate(&b_));
}
EventPair::~EventPair() {
  cudaEventDestroy(a_);
  cudaEventDestroy(b_);
}
void EventPair::start(cudaStream_t s) { CUDAL2_CUDA(cudaEventRecord(a_, s)); }
float EventPair::stop_ms(cudaStream_t s) {
  CUDAL2_CUDA(cudaEventRecord(b_, s));
  CUDAL2_CUDA(cudaEventSynchronize(b_));
  float ms = 0;
  CUDAL2_CUDA(cudaEventElapsedTime(&ms, a_, b_));
  return ms;
}

namespace {

// "" when every node of graph lies between the event-record nodes of start and end (measure/graph_path.hpp);
// else which nodes do not.
std::string nodes_off_path(cudaGraph_t graph, cudaEvent_t start, cudaEvent_t end) {
  size_t n = 0;
  if (cudaGraphGetNodes(graph, nullptr, &n) != cudaSuccess) return "the captured graph's nodes cannot be listed";
  std::vector<cudaGraphNode_t> nodes(n);
  size_t e = 0;
  if (cudaGraphGetNodes(graph, nodes.data(), &n) != cudaSuccess ||
      cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &e) != cudaSuccess)
    return "the captured graph's edges cannot be listed";
  std::vector<cudaGraphNode_t> from(e), to(e);
  std::vector<cudaGraphEdgeData> data(e);
  if (e > 0 && cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &e) != cudaSuccess)
    return "the captured graph's edges cannot be listed";
  std::map<cudaGraphNode_t, size_t> index;
  for (size_t i = 0; i < n; ++i) index[nodes[i]] = i;
  size_t first = n, last = n;
  int records = 0;  // of either timing event: one each, or the timer does not mean what it says
  for (size_t i = 0; i < n; ++i) {
    cudaGraphNodeType type{};
    cudaEvent_t ev = nullptr;
    if (cudaGraphNodeGetType(nodes[i], &type) == cudaSuccess && type == cudaGraphNodeTypeEventRecord &&
        cudaGraphEventRecordNodeGetEvent(nodes[i], &ev) == cudaSuccess) {
      if (ev == start) first = i, ++records;
      if (ev == end) last = i, ++records;
    }
  }
  if (records != 2) return fmt::format("the timing events are recorded {} times in the graph, not once each", records);
  std::vector<std::pair<size_t, size_t>> edges;
  for (size_t i = 0; i < e; ++i) edges.emplace_back(index.at(from[i]), index.at(to[i]));
  const auto off = off_timed_path(n, edges, first, last);
  if (off.empty()) return "";
  std::string kinds;
  for (size_t i : off) {
    cudaGraphNodeType type{};
    cudaGraphNodeGetType(nodes[i], &type);
    kinds += fmt::format("{}{}", kinds.empty() ? "" : ", ", static_cast<int>(type));
  }
  return fmt::format(
      "{} of the captured graph's {} nodes (types {}) do not lie between its timing events: work "
      "the events do not wait for",
      off.size(), n, kinds);
}

}  // namespace

CallGraph::CallGraph(const LaunchFn& fn, cudaStream_t s, int calls, const InterludeFn* before) : calls_(calls) {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    error_ = fmt::format("cudaStreamBeginCapture: {}", cudaGetErrorString(e));
    cudaGetLastError();
    return;
  }
  std::string during;
  try {
    // External event records become event-record nodes of the graph.
    CUDAL2_CUDA(cudaEventRecordWithFlags(events_.first(), s, cudaEventRecordExternal));
    for (int i = 0; i < calls; ++i) {
      if (before) (*before)(i, s);
      fn(s);
    }
    CUDAL2_CUDA(cudaEventRecordWithFlags(events_.second(), s, cudaEventRecordExternal));
  } catch (const std::exception& ex) {
    during = ex.what();
  }
  e = cudaStreamEndCapture(s, &graph);
  if (!during.empty() || e != cudaSuccess || graph == nullptr) {
    error_ = !during.empty() ? during : fmt::format("cudaStreamEndCapture: {}", cudaGetErrorString(e));
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return;
  }
  if (std::string off = nodes_off_path(graph, events_.first(), events_.second()); !off.empty()) {
    error_ = kOffTimedPath + off;
    cudaGraphDestroy(graph);
    cudaGetLastError();
    return;
  }
  e = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    error_ = fmt::format("cudaGraphInstantiate: {}", cudaGetErrorString(e));
    exec_ = nullptr;
    cudaGetLastError();
  }
}
CallGraph::~CallGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
}
void CallGraph::launch(cudaStream_t s) { CUDAL2_CUDA(cudaGraphLaunch(exec_, s)); }
double CallGraph::replay_us(cudaStream_t s) {
  launch(s);
  CUDAL2_CUDA(cudaEventSynchronize(events_.second()));
  float ms = 0;
  CUDAL2_CUDA(cudaEventElapsedTime(&ms, events_.first(), events_.second()));
  return ms * 1000.0 / calls_;
}

double quick_time_us(const LaunchFn& fn, cudaStream_t s, int inner, int reps) {
  EventPair ev;
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    ev.start(s);
    for (int i = 0; i < inner; ++i) fn(s);
    v.push_back(ev.stop_ms(s) * 1000.0 / inner);
  }
  return percentile(v, 50);
}

namespace {
// A graph of enough calls for ~target_us of device time: sized from an eager estimate, then
// re-sized once from the graph's own (smaller, launch-gap-free) per-call time. With `before`, a
// chain (its interludes count toward the target).
std::unique_ptr<CallGraph> sized_graph(const LaunchFn& fn, cudaStream_t s, double target_us, int max_calls,
                                       const InterludeFn* before = nullptr) {
  const LaunchFn one = before ? LaunchFn([&](cudaStream_t st) {
    (*before)(0, st);
    fn(st);
  })
                              : fn;
  const double est = quick_time_us(one, s, 1, 1);
  auto calls_for = [&](double per_call) {
    return static_cast<int>(std::clamp(std::ceil(target_us / std::max(per_call, 0.05)), 1.0, double(max_calls)));
  };
  auto g = std::make_unique<CallGraph>(fn, s, calls_for(est), before);
  if (!g->ok()) return g;
  g->replay_us(s);  // first replay uploads the graph
  const int better = calls_for(g->replay_us(s));
  if (better > g->calls() * 5 / 4) {
    auto g2 = std::make_unique<CallGraph>(fn, s, better, before);
    if (g2->ok()) {
      g2->replay_us(s);
      return g2;
    }
  }
  return g;
}
}  // namespace

double rank_time_us(const LaunchFn& fn, cudaStream_t s) {
  fn(s);
  fn(s);
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  auto graph = sized_graph(fn, s, 200.0, 500);
  if (!graph->ok()) return quick_time_us(fn, s, graph->calls(), 5);
  std::vector<double> v;
  for (int r = 0; r < 5; ++r) v.push_back(graph->replay_us(s));
  return percentile(v, 50);
}

bool chained(const TimingConfig& cfg, TimerKind t) {
  if (!cfg.interlude || cfg.mode != Mode::Offline) return false;
  return t == TimerKind::Chain || (cfg.interleave && (t == TimerKind::Graph || t == TimerKind::Eager));
}

InterludeTimer::InterludeTimer(const InterludeArgs& args, cudaStream_t s, int calls)
    : fn_([args](int call, cudaStream_t st) { launch_interlude(args, call, st); }),
      stream_(s),
      calls_(calls),
      graph_([](cudaStream_t) {}, s, calls, &fn_) {
  if (graph_.ok()) graph_.replay_us(s);  // the first replay uploads the graph
}

double InterludeTimer::graph_us() { return graph_.ok() ? graph_.replay_us(stream_) : eager_us(); }

double InterludeTimer::eager_us() {
  events_.start(stream_);
  for (int i = 0; i < calls_; ++i) fn_(i, stream_);
  return events_.stop_ms(stream_) * 1000.0 / calls_;
}

std::unique_ptr<SampleTimer> Method::make_timer(cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher) {
  return std::make_unique<MethodTimer>(*this, s, cfg, flusher);
}

MethodTimer::MethodTimer(Method& runner, cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher)
    : runner_(runner), stream_(s), cfg_(cfg), flusher_(flusher), fn_([&r = runner](cudaStream_t st) { r.run(st); }) {
  if (cfg_.interlude)
    interlude_ = [args = *cfg_.interlude](int call, cudaStream_t st) { launch_interlude(args, call, st); };
}

void MethodTimer::setup() {
  for (int i = 0; i < 2; ++i) fn_(stream_);
  CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  CUDAL2_CUDA(cudaGetLastError());
  const bool interleave = chained(cfg_, TimerKind::Graph);
  if (cfg_.mode == Mode::Offline) {
    graph_ = sized_graph(fn_, stream_, cfg_.target_batch_us, cfg_.max_inner, interleave ? &interlude_ : nullptr);
  } else {
    graph_ = std::make_unique<CallGraph>(fn_, stream_, 1);
    if (graph_->ok()) graph_->replay_us(stream_);
  }
  // Eager batches use the same count (a failed capture still carries the count it was sized to).
  inner_ = graph_->calls();
  if (!graph_->ok()) {
    graph_error_ = graph_->error();
    graph_.reset();
  }
  // The chain timer's own graph, of the same count, where the graph timer's is not a chain.
  if (chained(cfg_, TimerKind::Chain) && cfg_.timers[static_cast<int>(TimerKind::Chain)] && !interleave) {
    chain_ = std::make_unique<CallGraph>(fn_, stream_, inner_, &interlude_);
    if (chain_->ok())
      chain_->replay_us(stream_);
    else
      chain_.reset();
  }
  if (cfg_.subtract && cfg_.interlude && cfg_.mode == Mode::Offline && (interleave || chain_))
    alone_ = std::make_unique<InterludeTimer>(*cfg_.interlude, stream_, inner_);
}

double MethodTimer::eager_batch(bool chain) {
  events_.start(stream_);
  for (int i = 0; i < inner_; ++i) {
    if (chain) interlude_(i, stream_);
    fn_(stream_);
  }
  return events_.stop_ms(stream_) * 1000.0 / inner_;
}

void MethodTimer::gap_and_flush(std::mt19937_64& rng) {
  if (flusher_) flusher_->flush(stream_);
  CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  std::exponential_distribution<double> gap(cfg_.qps);
  std::this_thread::sleep_for(std::chrono::duration<double>(gap(rng)));
}

void MethodTimer::sample(TimerKind t, std::mt19937_64* gap_rng) {
  using clock = std::chrono::steady_clock;
  const bool chain = chained(cfg_, t);
  // The graph this sample replays, if any. A server-mode call has nothing before or after it but
  // a flush and an idle gap: its chain sample is the one-call graph's.
  CallGraph* g = nullptr;
  if (t == TimerKind::Graph) {
    g = graph_.get();
  } else if (t == TimerKind::Chain) {
    if (cfg_.mode == Mode::Offline && !cfg_.interlude) return;  // no interlude buffers: no chains
    g = chain_ ? chain_.get() : graph_.get();                   // graph_ is a chain when interleaved (or server mode)
    if (cfg_.mode == Mode::Offline && !chain_ && !chained(cfg_, TimerKind::Graph)) g = nullptr;
  }
  if ((t == TimerKind::Graph || t == TimerKind::Chain) && !g) return;
  if (gap_rng) gap_and_flush(*gap_rng);
  if (g && cfg_.settle && cfg_.mode == Mode::Offline && flusher_) {
    flusher_->flush(stream_);
    g->replay_us(stream_);
  }
  auto& out = samples_[static_cast<int>(t)];
  // Chain samples: the interludes alone, replayed right after, are taken out (never below 1 ns: a
  // sample is a time).
  auto less_interludes = [&](double raw, bool graph) {
    if (!chain || !alone_) return raw;
    return std::max(raw - (graph ? alone_->graph_us() : alone_->eager_us()), 1e-3);
  };
  if (g) {
    out.push_back(less_interludes(g->replay_us(stream_), true));
  } else if (t == TimerKind::Eager) {
    out.push_back(less_interludes(eager_batch(chain), false));
  } else {
    const auto t0 = clock::now();
    fn_(stream_);
    CUDAL2_CUDA(cudaStreamSynchronize(stream_));
    out.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
}

void MethodTimer::sample_all(std::mt19937_64& rng) {
  for (auto t : kTimers)
    if (cfg_.timers[static_cast<int>(t)]) sample(t, cfg_.mode == Mode::Server ? &rng : nullptr);
}

double MethodTimer::single_us() {
  // A graph of one call, so the time is the call's device time, not the host's launch path.
  if (!single_) {
    single_ = std::make_unique<CallGraph>(fn_, stream_, 1);
    if (single_->ok()) single_->replay_us(stream_);  // the first replay uploads the graph
  }
  if (single_->ok()) return single_->replay_us(stream_);
  events_.start(stream_);
  fn_(stream_);
  return events_.stop_ms(stream_) * 1000.0;
}

}  // namespace cudal2
