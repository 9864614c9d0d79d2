#include "runner/artifact.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "kernels/cudal2_kernel_abi.h"
#include "measure/device.hpp"

namespace cudal2 {

Artifact::Artifact(const std::string& path) {
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw MethodUnsupported(fmt::format("cannot load artifact {}: {}", path, dlerror()));
  auto sym = [&](const char* name) {
    void* p = dlsym(lib_, name);
    if (!p) throw MethodUnsupported(fmt::format("artifact {} lacks {}: not a cudal2 kernel", path, name));
    return p;
  };
  try {
    abi_ = reinterpret_cast<decltype(abi_)>(sym("cudal2_abi_version"));
    describe_ = reinterpret_cast<decltype(describe_)>(sym("cudal2_describe"));
    can_ = reinterpret_cast<decltype(can_)>(sym("cudal2_can_implement"));
    workspace_ = reinterpret_cast<decltype(workspace_)>(sym("cudal2_workspace_size"));
    run_ = reinterpret_cast<decltype(run_)>(sym("cudal2_run"));
  } catch (...) {
    dlclose(lib_);
    throw;
  }
  if (abi_() != CUDAL2_KERNEL_ABI_VERSION) {
    dlclose(lib_);
    throw MethodUnsupported(
        fmt::format("artifact {} has kernel ABI {}, expected {}", path, abi_(), CUDAL2_KERNEL_ABI_VERSION));
  }
}

Artifact::~Artifact() {
  if (lib_) dlclose(lib_);
}

std::string Artifact::can_implement(const cudal2_gemm_args& a) const {
  char err[512] = {};
  return can_(&a, err, sizeof err) == 0 ? "" : (err[0] ? err : "refused");
}

void Artifact::run(const cudal2_gemm_args& a, cudaStream_t s) const {
  char err[512] = {};
  if (run_(&a, s, err, sizeof err) != 0) throw MethodUnsupported(fmt::format("kernel: {}", err));
}

namespace {

class ArtifactRunner final : public Method {
 public:
  ArtifactRunner(std::shared_ptr<Artifact> a, KernelSpec spec, std::string name)
      : art_(std::move(a)), spec_(std::move(spec)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Layout layout() const override { return spec_.layout; }
  Accum accum() const override { return spec_.accum; }
  void prepare(const Shape& shape, const Operands& ops, cudaStream_t s) override {
    args_ = {};
    args_.m = shape.m, args_.n = shape.n, args_.k = shape.k;
    args_.A = ops.A, args_.B = ops.B, args_.C = ops.C;
    args_.workspace = ops.workspace;
    args_.workspace_bytes = ops.workspace_bytes;
    args_.raster = static_cast<int>(spec_.raster);
    args_.swizzle = spec_.swizzle;
    args_.decomposition = static_cast<int>(spec_.decomposition);
    args_.splits = spec_.splits;
    if (auto why = art_->can_implement(args_); !why.empty()) throw MethodUnsupported(why);
    // The kernel ABI gives every artifact a workspace of its own, zero-filled before the first
    // call and touched by nobody else (split-K counters live there and reset themselves); the
    // bench's shared library workspace would be scribbled on by the other methods in between.
    const size_t need = art_->workspace_size(args_);
    if (need > kMaxWorkspace)
      throw MethodUnsupported(
          fmt::format("needs {} MiB of workspace, more than the {} MiB allowed", need >> 20, kMaxWorkspace >> 20));
    workspace_ = GuardedBuffer();
    args_.workspace = nullptr;
    args_.workspace_bytes = 0;
    if (need > 0) {
      try {
        workspace_ = GuardedBuffer(need);
      } catch (const std::exception& e) {
        cudaGetLastError();
        throw MethodUnsupported(fmt::format("cannot allocate {} bytes of workspace: {}", need, e.what()));
      }
      CUDAL2_CUDA(cudaMemsetAsync(workspace_.data(), 0, need, s));
      CUDAL2_CUDA(cudaStreamSynchronize(s));
      args_.workspace = workspace_.data();
      args_.workspace_bytes = need;
    }
  }
  void run(cudaStream_t s) override { art_->run(args_, s); }
  nlohmann::json details() const override {
    return {{"spec", spec_.text()}, {"hash", spec_.hash()}, {"workspace_bytes", args_.workspace_bytes}};
  }
  std::vector<std::pair<std::string, GuardedBuffer*>> private_buffers() override {
    if (!workspace_.data()) return {};
    return {{"kernel workspace", &workspace_}};
  }

 private:
  std::shared_ptr<Artifact> art_;
  KernelSpec spec_;
  std::string name_;
  cudal2_gemm_args args_{};
  GuardedBuffer workspace_;
  static constexpr size_t kMaxWorkspace = size_t{2} << 30;
};

}  // namespace

MethodPtr make_artifact_runner(std::shared_ptr<Artifact> artifact, const KernelSpec& spec, std::string name) {
  return std::make_unique<ArtifactRunner>(std::move(artifact), spec, std::move(name));
}

}  // namespace cudal2
