// Both sides of the judge/runner split (eval/remote.hpp): the runner process that loads a
// candidate and runs it on the judge's buffers, and the judge's proxy for it.
#include "eval/remote.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <type_traits>

#include "core/stats.hpp"
#include "eval/artifact.hpp"
#include "eval/checks.hpp"
#include "eval/protocol.hpp"
#include "eval/timing.hpp"
#include "eval/workspace_limit.hpp"
#include "kernels/cudal2_kernel_abi.h"
#include "sandbox/sandbox.hpp"
#include "sandbox/seccomp.hpp"

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

std::string to_hex(const void* p, size_t n) {
  std::string out;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", b[i]);
  return out;
}

void from_hex(const std::string& hex, void* p, size_t n) {
  if (hex.size() != 2 * n) throw InputError("bad IPC handle");
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
}

// ---------------------------------------------------------------- runner side

// The candidate over pointers into the judge's (mapped) buffers.
class MappedKernel final : public Runner {
 public:
  MappedKernel(std::shared_ptr<Artifact> art, const KernelSpec& spec, const cudal2_gemm_args& args)
      : art_(std::move(art)), spec_(spec), args_(args) {}
  std::string name() const override { return "candidate"; }
  Layout layout() const override { return spec_.layout; }
  Accum accum() const override { return spec_.accum; }
  void prepare(const Shape&, const Operands&, cudaStream_t) override {}
  void run(cudaStream_t s) override { art_->run(args_, s); }
  const cudal2_gemm_args& args() const { return args_; }

 private:
  std::shared_ptr<Artifact> art_;
  KernelSpec spec_;
  cudal2_gemm_args args_;
};

struct RunnerSide {
  cudaStream_t stream = nullptr;
  std::shared_ptr<Artifact> art;
  KernelSpec spec;
  std::map<std::string, void*> mapped;  // IPC handle (hex) -> base of the mapping here
  std::unique_ptr<MappedKernel> kernel;
  std::unique_ptr<MethodTimer> timer;
  std::unique_ptr<CallGraph> spin;
  void* scratch = nullptr;

  void* map(const protocol::IpcBuffer& buf) {
    auto it = mapped.find(buf.handle);
    if (it == mapped.end()) {
      cudaIpcMemHandle_t handle;
      from_hex(buf.handle, &handle, sizeof handle);
      void* p = nullptr;
      CUDAL2_CUDA(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess));
      it = mapped.emplace(buf.handle, p).first;
    }
    return static_cast<char*>(it->second) + buf.offset;
  }
  void unmap_all() {
    timer.reset();
    kernel.reset();
    for (auto& [h, p] : mapped) cudaIpcCloseMemHandle(p);
    mapped.clear();
  }
  cudal2_gemm_args args_for(const Shape& shape) const {
    cudal2_gemm_args a{};
    a.m = shape.m, a.n = shape.n, a.k = shape.k;
    a.raster = static_cast<int>(spec.raster);
    a.swizzle = spec.swizzle;
    a.decomposition = static_cast<int>(spec.decomposition);
    a.splits = spec.splits;
    return a;
  }
  void touch_gpu() {
    if (!scratch) CUDAL2_CUDA(cudaMalloc(&scratch, 256));
    fill_u16(scratch, 1, 0, stream);
    CUDAL2_CUDA(cudaStreamSynchronize(stream));
  }
  MappedKernel& bound() {
    if (!kernel) throw InputError("no problem bound");
    return *kernel;
  }

  json handle(const json& j) {
    const protocol::RunnerRequest req = protocol::parse_runner_request(j);
    if (const auto* r = std::get_if<protocol::InitRequest>(&req)) {
      CUDAL2_CUDA(cudaSetDevice(0));
      CUDAL2_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      // Everything the CUDA runtime starts lazily (IPC, graphs, events) starts now, before the
      // judge counts this process's threads.
      void* warm = map(r->warm);
      fill_u16(warm, 256, 0, stream);
      CallGraph g([warm](cudaStream_t s) { fill_u16(warm, 256, 1, s); }, stream, 2);
      if (!g.ok()) throw CudaError(g.error());
      g.replay_us(stream);
      unmap_all();
      // Trusted set-up is over; candidate code comes next: no sockets from here on.
      if (r->deny_sockets) {
        const std::string why = sandbox::deny_sockets();
        if (!why.empty()) throw std::runtime_error("the runner could not deny sockets: " + why);
      }
      return to_json(protocol::InitAnswer{getpid()});
    }
    if (const auto* r = std::get_if<protocol::CalibrateRequest>(&req)) {
      const unsigned long long ns = r->ns;
      const int calls = r->calls;
      touch_gpu();
      if (!spin || spin->calls() != calls) {
        spin = std::make_unique<CallGraph>([ns](cudaStream_t s) { launch_spin(s, ns); }, stream, calls);
        if (!spin->ok()) throw CudaError(spin->error());
      }
      const double us = spin->replay_us(stream);
      CUDAL2_CUDA(cudaDeviceSynchronize());
      return to_json(protocol::TimeAnswer{us, calls});
    }
    if (const auto* r = std::get_if<protocol::LoadRequest>(&req)) {
      art = std::make_shared<Artifact>(r->artifact);
      if (!r->spec.empty()) {
        spec = parse_spec(r->spec);
      } else {
        spec.layout = r->layout;
        spec.accum = r->accum;
      }
      return protocol::ok_answer();
    }
    if (!art) throw InputError("no artifact loaded");
    if (const auto* r = std::get_if<protocol::QueryRequest>(&req)) {
      const auto a = args_for(r->shape);
      const std::string why = art->can_implement(a);
      return to_json(protocol::QueryAnswer{why, why.empty() ? art->workspace_size(a) : 0});
    }
    if (const auto* r = std::get_if<protocol::BindRequest>(&req)) {
      unmap_all();
      auto a = args_for(r->shape);
      a.A = map(r->A);
      a.B = map(r->B);
      a.C = map(r->C);
      if (r->W) {
        a.workspace = map(*r->W);
        a.workspace_bytes = r->W->bytes;
      }
      kernel = std::make_unique<MappedKernel>(art, spec, a);
      return protocol::ok_answer();
    }
    if (std::holds_alternative<protocol::UnbindRequest>(req)) {
      unmap_all();
      return protocol::ok_answer();
    }
    if (std::holds_alternative<protocol::RunRequest>(req)) {
      bound().run(stream);
      CUDAL2_CUDA(cudaStreamSynchronize(stream));
      return protocol::ok_answer();
    }
    if (const auto* r = std::get_if<protocol::TimerRequest>(&req)) {
      TimingConfig cfg;
      cfg.mode = r->mode;
      cfg.target_batch_us = r->target_us;
      cfg.max_inner = r->max_inner;
      if (r->interlude) {
        // Chains over the judge's buffers: this process reports whole chains and the judge takes
        // out the interludes, which it times itself.
        const auto& a = bound().args();
        InterludeArgs il;
        il.A = const_cast<void*>(a.A), il.B = const_cast<void*>(a.B), il.C = a.C;
        il.slots = r->interlude->slots ? map(*r->interlude->slots) : nullptr;
        il.m = a.m, il.n = a.n, il.k = a.k, il.b_col_major = spec.layout == Layout::TN;
        il.seed = static_cast<const unsigned long long*>(map(r->interlude->seed));
        cfg.interlude = il;
        cfg.interleave = r->interlude->interleave;
        cfg.subtract = false;
        cfg.timers.fill(true);
      }
      timer = std::make_unique<MethodTimer>(bound(), stream, cfg, nullptr);
      timer->setup();
      return to_json(protocol::TimerAnswer{timer->inner(), timer->graph_error()});
    }
    const auto& r = std::get<protocol::SampleRequest>(req);
    if (!timer) throw InputError("no timer set up");
    // The judge used the GPU just before this request: let the GPU switch to this process's
    // context now, outside the timed region (the host timer would count the switch otherwise).
    touch_gpu();
    double us = 0;
    int calls = 1;
    if (r.single) {
      us = timer->single_us();
    } else {
      timer->sample(r.timer, nullptr);
      if (timer->samples(r.timer).empty())
        throw InputError("timer " + std::string(to_string(r.timer)) + " gave no sample");
      us = timer->samples(r.timer).back();
      if (r.timer != TimerKind::Host) calls = timer->inner();
    }
    // Work the candidate left on other streams finishes before the answer, so the judge's
    // clock sees it.
    CUDAL2_CUDA(cudaDeviceSynchronize());
    return to_json(protocol::TimeAnswer{us, calls});
  }
};

json answer(RunnerSide& side, const json& req) {
  json resp;
  try {
    resp = side.handle(req);
  } catch (const std::exception& e) {
    resp = to_json(protocol::ErrorAnswer{e.what()});
  }
  // A fault leaves the context unusable: say which, and end this process after answering.
  if (auto fatal = fatal_fault_answer()) return to_json(*fatal);
  cudaGetLastError();
  return resp;
}

// ---------------------------------------------------------------- judge side

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
  Finding defect(double floor_us) const override;

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

class RemoteRunner final : public Runner {
 public:
  RemoteRunner(const RemoteConfig& cfg, std::string artifact, KernelSpec spec, std::string spec_text, std::string name)
      : cfg_(cfg),
        artifact_(std::move(artifact)),
        spec_(std::move(spec)),
        text_(std::move(spec_text)),
        name_(std::move(name)) {}
  ~RemoteRunner() override = default;

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
    if (!q.refusal.empty()) throw RunnerError(q.refusal);
    const size_t need = q.workspace;
    if (const size_t allowed = max_workspace(shape.m, shape.n); need > allowed)
      throw RunnerError(fmt::format(
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
    return {{"spec", text_}, {"runner", "confined process"}, {"confinement", confinement_}};
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
    const sandbox::Result r = worker_->call(to_json(req));
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
    return {to_hex(&h, sizeof h), b.guard(), b.bytes()};
  }

  void start() {
    if (worker_) return;
    sandbox::Options opt;
    opt.timeout = cfg_.timeout;
    opt.confinement.enabled = cfg_.confine;
    // CUDA IPC needs no /dev/shm; a writable one (even private) is a place to leave files.
    opt.confinement.dev_shm = sandbox::Confinement::DevShm::Deny;
    worker_ = std::make_unique<sandbox::Worker>(std::vector<std::string>{cfg_.runner_exe, "runner"}, opt);
    GuardedBuffer warm(4096);
    payload_or_die(call(protocol::InitRequest{export_buffer(warm), cfg_.confine}), protocol::parse_init_answer);
    pid_ = worker_->pid();  // ours, not the one it reports (it may live in another pid namespace)
    confinement_ = cfg_.confine ? worker_->confinement().summary() + " seccomp[no sockets]" : "off";
    // Each round as a sample goes: the judge works on the GPU first (so the GPU switches from the
    // judge's context to the runner's inside the request, as it does before every sample).
    std::vector<double> spread;
    for (int calls : kCalibrationSizes) {
      std::vector<double> excess, single_us;
      for (int i = 0; i < kCalibrationRounds; ++i) {
        fill_u16(warm.data(), 2048, static_cast<uint16_t>(i), nullptr);
        CUDAL2_CUDA(cudaDeviceSynchronize());
        const auto t0 = Clock::now();
        const json c = call(protocol::CalibrateRequest{kCalibrationNs, calls});
        const double wall = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
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
  std::unique_ptr<sandbox::Worker> worker_;
  std::string confinement_;
  pid_t pid_ = -1;
  std::set<std::string> base_threads_;
  std::vector<std::pair<int, double>> overhead_;  // (calls, median excess) from calibration
  double margin_us_ = 150, single_latency_us_ = 0;
  GuardedBuffer workspace_;
  bool bound_ = false;
  FailureKind dead_kind_ = FailureKind::None;
  std::string dead_detail_;
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
  if (il && cfg_.mode == Mode::Offline) alone_ = std::make_unique<InterludeTimer>(*cfg_.interlude, stream_, inner_);
}

double RemoteTimer::timed_request(const protocol::SampleRequest& req, int nodes_per_call) {
  const auto t0 = Clock::now();
  const json r = r_.call(req);
  const double wall = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
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

Finding RemoteTimer::defect(double floor_us) const {
  for (auto t : kTimers) {
    const auto& v = samples_[static_cast<int>(t)];
    if (v.empty()) continue;
    const double med = percentile(v, 50);
    if (med < floor_us)
      return {
          FailureKind::ImplausibleTime,
          fmt::format("{} median {:.3g} us is below the {:.3g} us the hardware allows", to_string(t), med, floor_us)};
  }
  if (excess_.size() >= 3) {
    const double med = percentile(excess_, 50);
    if (med > r_.margin_us())
      return {FailureKind::TimingMismatch,
              fmt::format(
                  "the judge's clock saw {:.0f} us more per request than the runner reported and the "
                  "calibrated request overhead explain (median; allowed {:.0f} us): work outside the timed stream, or "
                  "forged times [{}]",
                  med, r_.margin_us(), [&] {
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

std::optional<protocol::ErrorAnswer> fatal_fault_answer() {
  const cudaError_t sticky = cudaDeviceSynchronize();
  if (sticky == cudaSuccess) return std::nullopt;
  return protocol::ErrorAnswer{fmt::format("{}: {}", cudaGetErrorName(sticky), cudaGetErrorString(sticky)), true,
                               fatal_error_kind(sticky)};
}

RunnerPtr make_remote_runner(const RemoteConfig& cfg, std::string artifact, KernelSpec spec, std::string spec_text,
                             std::string name) {
  return std::make_unique<RemoteRunner>(cfg, std::move(artifact), std::move(spec), std::move(spec_text),
                                        std::move(name));
}

int runner_main() {
  RunnerSide side;
  return sandbox::serve([&side](const json& req) { return answer(side, req); });
}

}  // namespace cudal2
