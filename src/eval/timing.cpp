#include "eval/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <thread>

#include "core/problem.hpp"
#include "core/stats.hpp"

namespace cudal2 {

std::string_view to_string(Mode m) { return m == Mode::Offline ? "offline" : "server"; }
std::string_view to_string(TimerKind t) {
  switch (t) {
    case TimerKind::Graph: return "graph";
    case TimerKind::Eager: return "eager";
    case TimerKind::Host: return "host";
  }
  return "?";
}
Mode parse_mode(std::string_view s) {
  if (s == "offline") return Mode::Offline;
  if (s == "server") return Mode::Server;
  throw InputError(fmt::format("unknown mode '{}' (expected offline, server or both)", s));
}

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

CallGraph::CallGraph(const LaunchFn& fn, cudaStream_t s, int calls) {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    error_ = fmt::format("cudaStreamBeginCapture: {}", cudaGetErrorString(e));
    cudaGetLastError();
    return;
  }
  std::string during;
  try {
    for (int i = 0; i < calls; ++i) fn(s);
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

double rank_time_us(const LaunchFn& fn, cudaStream_t s) {
  fn(s);
  fn(s);
  CUDAL2_CUDA(cudaStreamSynchronize(s));
  const double est = quick_time_us(fn, s, 1, 1);
  const int inner = std::clamp(static_cast<int>(200.0 / std::max(est, 0.1)), 1, 200);
  CallGraph graph(fn, s, inner);
  if (!graph.ok()) return quick_time_us(fn, s, inner, 5);
  EventPair ev;
  std::vector<double> v;
  graph.launch(s);
  for (int r = 0; r < 5; ++r) {
    ev.start(s);
    graph.launch(s);
    v.push_back(ev.stop_ms(s) * 1000.0 / inner);
  }
  return percentile(v, 50);
}

MethodTimer::MethodTimer(Runner& runner, cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher)
    : runner_(runner), stream_(s), cfg_(cfg), flusher_(flusher), fn_([&r = runner](cudaStream_t st) { r.run(st); }) {}

void MethodTimer::setup() {
  for (int i = 0; i < 2; ++i) fn_(stream_);
  CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  CUDAL2_CUDA(cudaGetLastError());
  const double est = quick_time_us(fn_, stream_, 3, 1);
  inner_ = cfg_.mode == Mode::Offline
               ? static_cast<int>(std::clamp(std::ceil(cfg_.target_batch_us / std::max(est, 0.1)), 1.0,
                                             static_cast<double>(cfg_.max_inner)))
               : 1;
  graph_ = std::make_unique<CallGraph>(fn_, stream_, inner_);
  if (!graph_->ok()) {
    graph_error_ = graph_->error();
    graph_.reset();
  } else {
    graph_->launch(stream_);  // first replay uploads the graph
    CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  }
}

void MethodTimer::gap_and_flush(std::mt19937_64& rng) {
  if (flusher_) flusher_->flush(stream_);
  CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  std::exponential_distribution<double> gap(cfg_.qps);
  std::this_thread::sleep_for(std::chrono::duration<double>(gap(rng)));
}

void MethodTimer::sample(std::mt19937_64& rng) {
  using clock = std::chrono::steady_clock;
  const bool server = cfg_.mode == Mode::Server;
  auto& g = samples_[static_cast<int>(TimerKind::Graph)];
  auto& e = samples_[static_cast<int>(TimerKind::Eager)];
  auto& h = samples_[static_cast<int>(TimerKind::Host)];
  if (graph_) {
    if (server) gap_and_flush(rng);
    events_.start(stream_);
    graph_->launch(stream_);
    g.push_back(events_.stop_ms(stream_) * 1000.0 / inner_);
  }
  if (server) gap_and_flush(rng);
  events_.start(stream_);
  for (int i = 0; i < inner_; ++i) fn_(stream_);
  e.push_back(events_.stop_ms(stream_) * 1000.0 / inner_);

  if (server) gap_and_flush(rng);
  const auto t0 = clock::now();
  fn_(stream_);
  CUDAL2_CUDA(cudaStreamSynchronize(stream_));
  h.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
}

}  // namespace cudal2
