// The judge's proxy for a candidate's runner process (judge/runner_proxy.hpp): starts the confined
// `cudal2 runner`, calibrates the request path before candidate code is loaded, hands it the
// judge's buffers through CUDA IPC, and believes nothing it answers without a check. The runner's
// own side is runner/runner.cpp.
#include "judge/runner_proxy.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#include "core/stats.hpp"
#include "judge/clock_check.hpp"
#include "judge/contention.hpp"
#include "judge/time_floor.hpp"
#include "judge/workspace_limit.hpp"
#include "measure/checks.hpp"
#include "measure/device.hpp"
#include "measure/graph_path.hpp"
#include "measure/timing.hpp"
#include "protocol/protocol.hpp"
#include "sandbox/sandbox.hpp"

namespace cudal2 {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Calibration: trusted spin kernels of this length, timed through the same request path as the
// candidate's samples, before any candidate code is loaded.
// Graphs of 1, 64 and 512 spin kernels of 2 us: the request overhead grows with the number of
// graph nodes (launching a graph of hundreds of calls takes the host a while), so the allowance
// for a batch of n calls is interpolated from these.
constexpr unsigned long long kCalibrationNs = 2000;
constexpr int kCalibrationSizes[] = {1, 64, 512};
constexpr int kCalibrationRounds = 5;
// Checks after which the GPU was still busy with nobody else on it before the runner's work
// outliving its answers is the candidate's (one or two can be the host stalling the judge).
constexpr int kOwnBusyLimit = 3;

std::set<std::string> list_dir(const std::string& path) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) out.insert(e.path().filename().string());
  return out;
}

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s, '\0');
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class RemoteRunner;

// Times the candidate through its runner and keeps, per sample, how far the runner's claim falls
// short of the judge's wall clock around the request.
class RemoteTimer final : public SampleTimer {
 public:
  RemoteTimer(RemoteRunner& r, cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher)
      : r_(r), stream_(s), cfg_(cfg), flusher_(flusher) {}
  void setup() override;
  void sample(TimerKind t, std::mt19937_64* gap_rng) override;
  void sample_single() override;
  CandidateFault defect(double floor_us) const override;

 private:
  // The runner's claim per call; the judge's clock around the request is kept against it. A chain
  // has two kernels per call.
  double timed_request(const protocol::SampleRequest& req, int nodes_per_call);
  RemoteRunner& r_;
  cudaStream_t stream_;
  TimingConfig cfg_;
  L2Flusher* flusher_;
  std::unique_ptr<InterludeTimer> alone_;  // the judge's own timing of a batch's interludes
  std::vector<double> excess_, single_;
  std::map<std::string, std::vector<double>> excess_by_;  // per timer, for the report
};

class RemoteRunner final : public Method {
 public:
  RemoteRunner(const RemoteConfig& cfg, std::string artifact, KernelSpec spec, std::string spec_text, std::string name)
      : cfg_(cfg),
        artifact_(std::move(artifact)),
        spec_(std::move(spec)),
        text_(std::move(spec_text)),
        name_(std::move(name)) {}
  ~RemoteRunner() override {
    if (pid_ > 0) ContentionMonitor::get().runner_ended(pid_);
  }

  std::string name() const override { return name_; }
  Layout layout() const override { return spec_.layout; }
  Accum accum() const override { return spec_.accum; }
  bool trusted() const override { return false; }
  // The judge's chain buffers for the runner (TimerRequest::interlude); nullopt without chains.
  static std::optional<protocol::InterludeBuffers> interlude_buffers(const TimingConfig& cfg) {
    const auto seed = export_buffer(cfg.seed_buffer);
    if (!cfg.interlude || !seed) return std::nullopt;
    return protocol::InterludeBuffers{*seed, export_buffer(cfg.slot_buffer), cfg.interleave};
  }

  void prepare(const Shape& shape, const Operands& ops, cudaStream_t s) override {
    start();
    if (bound_) call(protocol::UnbindRequest{});
    bound_ = false;
    const auto q = payload_or_die(call(protocol::QueryRequest{shape}), protocol::parse_query_answer);
    if (!q.refusal.empty()) throw MethodUnsupported(q.refusal);
    const size_t need = q.workspace;
    if (const size_t allowed = max_workspace(shape.m, shape.n); need > allowed)
      throw MethodUnsupported(fmt::format(
          "asks for {:.1f} MiB of workspace, more than the {:.1f} MiB a {} problem may have (64 MiB, or split-K's "
          "partials: 64 splits of fp32 M x N tiles; docs/threat-model.md)",
          need / 1048576.0, allowed / 1048576.0, shape.str()));
    workspace_ = GuardedBuffer();
    protocol::BindRequest bind{shape, export_buffer(*ops.bufA), export_buffer(*ops.bufB), export_buffer(*ops.bufC),
                               std::nullopt};
    if (need > 0) {
      workspace_ = GuardedBuffer(need);
      CUDAL2_CUDA(cudaMemsetAsync(workspace_.data(), 0, need, s));
      CUDAL2_CUDA(cudaStreamSynchronize(s));
      bind.W = export_buffer(workspace_);
    }
    call(bind);
    bound_ = true;
  }

  void run(cudaStream_t s) override {
    CUDAL2_CUDA(cudaStreamSynchronize(s));
    call(protocol::RunRequest{});
  }

  std::unique_ptr<SampleTimer> make_timer(cudaStream_t s, const TimingConfig& cfg, L2Flusher* flusher) override {
    return std::make_unique<RemoteTimer>(*this, s, cfg, flusher);
  }

  std::vector<std::pair<std::string, GuardedBuffer*>> private_buffers() override {
    if (!workspace_.data()) return {};
    return {{"kernel workspace", &workspace_}};
  }

  nlohmann::json details() const override {
    return {{"spec", text_},
            {"runner", "confined process"},
            {"confinement", confinement_},
            {"contention", ContentionMonitor::get().means()}};
  }

  std::string disturbance() {
    own_busy_ = 0;
    return std::exchange(disturbance_, std::string());
  }

  // Threads beyond those the runner had before the candidate was loaded, and child processes.
  std::string leftovers() override {
    if (pid_ <= 0) return "";
    const std::string proc = fmt::format("/proc/{}", pid_);
    std::vector<std::string> extra, children;
    for (const auto& t : list_dir(proc + "/task")) {
      if (!base_threads_.count(t))
        extra.push_back(fmt::format("{} ({})", t, read_small(proc + "/task/" + t + "/comm")));
      const std::string kids = read_small(proc + "/task/" + t + "/children");
      if (!kids.empty()) children.push_back(kids);
    }
    // A double-forked, setsid'd descendant is nobody's child any more, but it stays in the
    // runner's cgroup (when the sandbox gave it one of its own).
    const std::string cg = read_small(proc + "/cgroup");
    if (!cg.empty() && cg != read_small("/proc/self/cgroup")) {
      for (const auto& p : list_dir("/proc")) {
        if (p.empty() || !std::isdigit(static_cast<unsigned char>(p[0])) || p == std::to_string(pid_)) continue;
        if (read_small("/proc/" + p + "/cgroup") == cg)
          children.push_back(fmt::format("{} ({})", p, read_small("/proc/" + p + "/comm")));
      }
    }
    if (extra.empty() && children.empty()) return "";
    return fmt::format("the candidate left {} new thread(s) [{}] and child process(es) [{}] in its runner",
                       extra.size(), fmt::join(extra, ", "), fmt::join(children, ", "));
  }

  // One request; any failure of the runner fails the candidate, for this and every later call.
  json call(const protocol::RunnerRequest& req) {
    if (dead_kind_ != FailureKind::None) throw CandidateFault(dead_kind_, dead_detail_);
    const auto t0 = Clock::now();
    const sandbox::Result r = judge_->call(to_json(req));
    last_request_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    // The GPU right after the answer, outside the request's wall time.
    const ContentionMonitor::Seen seen = ContentionMonitor::get().check();
    if (seen.finding == contention::Finding::Foreign && disturbance_.empty()) disturbance_ = seen.what;
    if (!r.ok()) {
      std::string tail = r.stderr_tail;
      if (tail.size() > 1500) tail = "..." + tail.substr(tail.size() - 1500);
      const std::string detail = r.message + (tail.empty() ? "" : "\n" + tail);
      switch (r.kind) {
        case sandbox::Outcome::Hung:
          fail(FailureKind::Hang, detail);
        case sandbox::Outcome::Crashed:
          fail(FailureKind::Crash, detail);
        case sandbox::Outcome::ProtocolError:
          fail(FailureKind::ProtocolError, detail);
        default:
          fail(FailureKind::Exited, detail);
      }
    }
    const json& resp = r.response;
    std::optional<protocol::ErrorAnswer> err;
    try {
      err = protocol::error_of(resp);
    } catch (const protocol::ProtocolError&) {
      fail(FailureKind::ProtocolError, "runner answer without a boolean 'ok': " + resp.dump().substr(0, 200));
    }
    if (err && err->fatal) fail(err->kind, err->error);
    if (err) fail(FailureKind::Error, err->error.empty() ? resp.dump().substr(0, 200) : err->error);
    if (seen.finding == contention::Finding::Own && ++own_busy_ >= kOwnBusyLimit)
      throw CandidateFault(FailureKind::TimingMismatch,
                           fmt::format("the GPU was still busy after {} of the runner's answers ({}): work in a "
                                       "context or on a stream the runner's timing does not wait for",
                                       own_busy_, seen.what));
    return resp;
  }

  // What a request running `calls` calls costs beyond the device time, as calibrated (piecewise
  // linear in the number of calls, extrapolated past the largest size).
  double overhead_us(int calls) const {
    if (overhead_.empty()) return 0;
    if (calls <= overhead_.front().first) return overhead_.front().second;
    for (size_t i = 1; i < overhead_.size(); ++i) {
      const auto [n0, e0] = overhead_[i - 1];
      const auto [n1, e1] = overhead_[i];
      if (calls <= n1 || i + 1 == overhead_.size()) return e0 + (e1 - e0) * (calls - n0) / static_cast<double>(n1 - n0);
    }
    return overhead_.back().second;
  }
  double margin_us() const { return margin_us_; }
  // The judge's wall time of the last request, from sending it to its answer.
  double last_request_us() const { return last_request_us_; }
  double single_latency_us() const { return single_latency_us_; }

 private:
  [[noreturn]] void fail(FailureKind kind, const std::string& detail) {
    dead_kind_ = kind;
    dead_detail_ = detail;
    throw CandidateFault(kind, detail);
  }

  // The payload of an answer; a malformed one fails the candidate for good (protocol-error).
  template <class Parse>
  std::invoke_result_t<Parse, const json&> payload_or_die(const json& answer, Parse parse) {
    try {
      return parse(answer);
    } catch (const protocol::ProtocolError& e) {
      fail(FailureKind::ProtocolError, e.what());
    }
  }

  static std::optional<protocol::IpcBuffer> export_buffer(const GuardedBuffer* b) {
    if (!b || !b->data()) return std::nullopt;
    return export_buffer(*b);
  }
  static protocol::IpcBuffer export_buffer(const GuardedBuffer& b) {
    cudaIpcMemHandle_t h;
    CUDAL2_CUDA(cudaIpcGetMemHandle(&h, b.base()));
    return {protocol::to_hex(&h, sizeof h), b.guard(), b.bytes()};
  }

  void start() {
    if (judge_) return;
    sandbox::Options opt;
    opt.timeout = cfg_.timeout;
    opt.confinement.enabled = cfg_.confine;
    // CUDA IPC needs no /dev/shm; a writable one (even private) is a place to leave files.
    opt.confinement.dev_shm = sandbox::Confinement::DevShm::Deny;
    judge_ = std::make_unique<sandbox::Child>(std::vector<std::string>{cfg_.runner_exe, "runner"}, opt);
    GuardedBuffer warm(4096);
    payload_or_die(call(protocol::InitRequest{export_buffer(warm), cfg_.confine}), protocol::parse_init_answer);
    pid_ = judge_->pid();  // ours, not the one it reports (it may live in another pid namespace)
    ContentionMonitor::get().runner_started(pid_);
    confinement_ = cfg_.confine ? judge_->confinement().summary() + " seccomp[no sockets]" : "off";
    // Each round as a sample goes: the judge works on the GPU first (so the GPU switches from the
    // judge's context to the runner's inside the request, as it does before every sample).
    std::vector<double> spread;
    for (int calls : kCalibrationSizes) {
      std::vector<double> excess, single_us;
      for (int i = 0; i < kCalibrationRounds; ++i) {
        fill_u16(warm.data(), 2048, static_cast<uint16_t>(i), nullptr);
        CUDAL2_CUDA(cudaDeviceSynchronize());
        const json c = call(protocol::CalibrateRequest{kCalibrationNs, calls});
        const double wall = last_request_us_;
        const double us =
            payload_or_die(c, [](const json& a) { return protocol::parse_time_answer(a, "calibrate"); }).us;
        excess.push_back(wall - us * calls);
        single_us.push_back(us);
      }
      overhead_.emplace_back(calls, percentile(excess, 50));
      // A one-call graph of a 2 us kernel reports 2 us plus the graph's own fixed latency (event
      // and kernel nodes one after the other, nothing to overlap): the same latency is in every
      // single-call sample, and the batch-vs-single comparison takes it out.
      if (calls == 1) single_latency_us_ = std::max(0.0, percentile(single_us, 50) - kCalibrationNs / 1000.0);
      spread.push_back(percentile(excess, 75) - percentile(excess, 25));
    }
    margin_us_ = 150 + 3 * *std::max_element(spread.begin(), spread.end());
    base_threads_ = list_dir(fmt::format("/proc/{}/task", pid_));
    call(protocol::LoadRequest{artifact_, text_, spec_.layout, spec_.accum});
  }

  RemoteConfig cfg_;
  std::string artifact_;
  KernelSpec spec_;
  std::string text_, name_;
  std::unique_ptr<sandbox::Child> judge_;
  std::string confinement_;
  pid_t pid_ = -1;
  std::set<std::string> base_threads_;
  std::vector<std::pair<int, double>> overhead_;  // (calls, median excess) from calibration
  double margin_us_ = 150, single_latency_us_ = 0;
  GuardedBuffer workspace_;
  bool bound_ = false;
  FailureKind dead_kind_ = FailureKind::None;
  std::string dead_detail_;
  std::string disturbance_;  // what used the GPU besides us since the last disturbance() ("" nobody)
  int own_busy_ = 0;         // checks since then that found the GPU busy with only our processes on it
  double last_request_us_ = 0;
};

// The payload of an answer; a malformed one fails the candidate on this shape (protocol-error).
template <class Parse>
auto payload(const json& answer, Parse parse) {
  try {
    return parse(answer);
  } catch (const protocol::ProtocolError& e) {
    throw CandidateFault(FailureKind::ProtocolError, e.what());
  }
}

void RemoteTimer::setup() {
  const auto il = RemoteRunner::interlude_buffers(cfg_);
  const auto r = payload(r_.call(protocol::TimerRequest{cfg_.mode, cfg_.target_batch_us, cfg_.max_inner, il}),
                         protocol::parse_timer_answer);
  if (r.inner > cfg_.max_inner)
    throw CandidateFault(
        FailureKind::ProtocolError,
        fmt::format("the runner set up batches of {} calls, more than the {} asked for", r.inner, cfg_.max_inner));
  inner_ = r.inner;
  graph_error_ = r.graph_error;
  // The runner's capture put work where its timing events do not see it (measure/graph_path.hpp).
  if (graph_error_.rfind(kOffTimedPath, 0) == 0)
    throw CandidateFault(FailureKind::TimingMismatch, "the call's graph has nodes " + graph_error_);
  if (il && cfg_.mode == Mode::Offline) alone_ = std::make_unique<InterludeTimer>(*cfg_.interlude, stream_, inner_);
}

double RemoteTimer::timed_request(const protocol::SampleRequest& req, int nodes_per_call) {
  const json r = r_.call(req);
  const double wall = r_.last_request_us();
  const auto [us, calls] = payload(r, [](const json& a) { return protocol::parse_time_answer(a, "sample"); });
  const int expected = req.single || req.timer == TimerKind::Host ? 1 : inner_;
  if (calls != expected)
    throw CandidateFault(FailureKind::ProtocolError,
                         fmt::format("the runner answered for {} calls where the batch holds {}", calls, expected));
  // What the judge's clock saw beyond the runner's claim and the calibrated overhead of a
  // request of that many calls.
  // Beyond the calibrated overhead, 3% of the claimed time is allowed: measured on the H100, honest
  // requests of 2-200 ms calls on large operands (the judge had just filled hundreds of MB) saw
  // 0.2-2% more than the calibration with its small buffers predicts. Work hidden off the timed
  // stream cannot use this slack in graph replays (they are verified), only in eager/host samples.
  excess_.push_back(wall - us * calls * 1.03 - r_.overhead_us(calls * nodes_per_call));
  excess_by_[req.single ? std::string("single") : std::string(to_string(req.timer))].push_back(excess_.back());
  return us;
}

void RemoteTimer::sample(TimerKind t, std::mt19937_64* gap_rng) {
  // A candidate whose calls cannot be captured has no graph, chained or not.
  if ((t == TimerKind::Graph || t == TimerKind::Chain) && !graph_error_.empty()) return;
  if (gap_rng) {
    // Server mode: the judge flushes the L2 (one cache for every context on the GPU) and waits.
    if (flusher_) flusher_->flush(stream_);
    CUDAL2_CUDA(cudaStreamSynchronize(stream_));
    std::exponential_distribution<double> gap(cfg_.qps);
    std::this_thread::sleep_for(std::chrono::duration<double>(gap(*gap_rng)));
  }
  auto& out = samples_[static_cast<int>(t)];
  if (!chained(cfg_, t)) {
    out.push_back(timed_request(protocol::SampleRequest{false, t}, 1));
    return;
  }
  if (!alone_) throw CandidateFault(FailureKind::Error, "a chained sample without the judge's interlude timing");
  // The batch's interludes, timed here (trusted) just before the runner's whole chain: what the
  // runner's claim less them leaves is the candidate's. (Replaying them leaves the poisoned outputs
  // poisoned: they copy C, still poisoned, into the slots.)
  const double interludes = t == TimerKind::Eager ? alone_->eager_us() : alone_->graph_us();
  out.push_back(std::max(timed_request(protocol::SampleRequest{false, t}, 2) - interludes, 1e-3));
}

void RemoteTimer::sample_single() {
  single_.push_back(timed_request(protocol::SampleRequest{true, TimerKind::Graph}, 1));
}

CandidateFault RemoteTimer::defect(double floor_us) const {
  // Every timer's median and the fresh single call's (the batch-vs-single test trusts it).
  std::vector<std::pair<std::string, std::vector<double>>> timers;
  for (auto t : kTimers) timers.emplace_back(to_string(t), samples_[static_cast<int>(t)]);
  if (const auto breach = below_floor(timers, single_, floor_us))
    return {FailureKind::ImplausibleTime, fmt::format("{} median {:.3g} us is below the {:.3g} us the hardware allows",
                                                      breach->what, breach->median_us, floor_us)};
  if (const auto found = excess_beyond(excess_by_, excess_, r_.margin_us())) {
    const double med = found->median_us;
    return {FailureKind::TimingMismatch,
            fmt::format("the judge's clock saw {:.0f} us more per {}request than the runner reported and the "
                        "calibrated request overhead explain (median of {}; allowed {:.0f} us): work outside the timed "
                        "stream, or forged times [{}]",
                        med, found->kind == "all" ? std::string() : found->kind + " ", found->requests,
                        found->kind == "all" ? r_.margin_us() : kPerKindMargins * r_.margin_us(), [&] {
                          std::string per;
                          for (const auto& [t, v] : excess_by_)
                            per += fmt::format("{}{}: median {:.0f} us over {}", per.empty() ? "" : ", ", t,
                                               percentile(v, 50), v.size());
                          return per + fmt::format("; overhead(1) {:.0f} us, overhead({}) {:.0f} us", r_.overhead_us(1),
                                                   inner_, r_.overhead_us(inner_));
                        }())};
  }
  if (cfg_.mode == Mode::Offline && single_.size() >= 3) {
    double batch = 1e300;
    for (auto t : {TimerKind::Graph, TimerKind::Eager, TimerKind::Chain})
      if (!samples_[static_cast<int>(t)].empty())
        batch = std::min(batch, percentile(samples_[static_cast<int>(t)], 50));
    // One more microsecond of slack for the calibration's own error (a spin kernel lasts at least,
    // not exactly, its 2 us).
    const double single = percentile(single_, 50) - r_.single_latency_us() - 1.0;
    if (batch < 1e300 && batch < 0.5 * single - 1.0)
      return {FailureKind::InconsistentTime,
              fmt::format("{:.3g} us per call in batches but {:.3g} us for a fresh single call (after the "
                          "calibrated {:.3g} us of one-call graph latency): later calls of a batch do less work",
                          batch, single, r_.single_latency_us())};
  }
  return {};
}

}  // namespace

std::string take_disturbance(Method& m) {
  auto* r = dynamic_cast<RemoteRunner*>(&m);
  return r ? r->disturbance() : std::string();
}

MethodPtr make_remote_runner(const RemoteConfig& cfg, std::string artifact, KernelSpec spec, std::string spec_text,
                             std::string name) {
  return std::make_unique<RemoteRunner>(cfg, std::move(artifact), std::move(spec), std::move(spec_text),
                                        std::move(name));
}

}  // namespace cudal2
