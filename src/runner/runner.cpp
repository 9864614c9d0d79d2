// `cudal2 runner`: the untrusted side of the judge/runner split (docs/threat-model.md). One
// process per candidate, confined by the sandbox: it maps the judge's buffers through CUDA IPC,
// dlopens the candidate (runner/artifact.hpp), runs and times it on request, and answers one line
// per request (the runner ops of protocol/protocol.hpp). Nothing it answers is believed by the
// judge without a check (judge/runner_proxy.hpp).
#include "runner/runner.hpp"

#include <unistd.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "codegen/spec.hpp"
#include "kernels/cudal2_kernel_abi.h"
#include "measure/checks.hpp"
#include "measure/device.hpp"
#include "measure/fatal_fault.hpp"
#include "measure/method.hpp"
#include "measure/timing.hpp"
#include "protocol/protocol.hpp"
#include "runner/artifact.hpp"
#include "runner/contexts.hpp"
#include "sandbox/sandbox.hpp"
#include "sandbox/seccomp.hpp"

namespace cudal2 {

namespace {

using nlohmann::json;

// The candidate over pointers into the judge's (mapped) buffers.
class MappedKernel final : public Method {
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
      protocol::from_hex(buf.handle, &handle, sizeof handle);
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
    return to_json(protocol::TimeAnswer{us, calls});
  }
};

json answer(RunnerSide& side, const json& req) {
  json resp;
  try {
    resp = side.handle(req);
    // Work the candidate left on other streams or in other contexts finishes before the answer,
    // so the judge's clock sees it (runner/contexts.hpp).
    if (const std::string e = sync_every_context(); !e.empty()) resp = to_json(protocol::ErrorAnswer{e});
  } catch (const std::exception& e) {
    resp = to_json(protocol::ErrorAnswer{e.what()});
  }
  // A fault leaves the context unusable: say which, and end this process after answering.
  if (auto fatal = fatal_fault_answer()) return to_json(*fatal);
  cudaGetLastError();
  return resp;
}

}  // namespace

int runner_main() {
  RunnerSide side;
  return sandbox::serve([&side](const json& req) { return answer(side, req); });
}

}  // namespace cudal2
