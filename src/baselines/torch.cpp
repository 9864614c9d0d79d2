// torch.matmul, through the optional plugin. Looked up in order: $CUDAL2_TORCH_PLUGIN, next to
// the running executable, then the loader's own search path.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <filesystem>

#include "../../plugins/torch/cudal2_torch_abi.h"
#include "baselines/baselines.hpp"

namespace cudal2 {

namespace {

struct TorchPlugin {
  void* lib = nullptr;
  std::string error;
  decltype(&cudal2_torch_bind) bind = nullptr;
  decltype(&cudal2_torch_run) run = nullptr;
  decltype(&cudal2_torch_unbind) unbind = nullptr;
  decltype(&cudal2_torch_version) version = nullptr;

  static TorchPlugin& get() {
    static TorchPlugin p = load();
    return p;
  }

  static TorchPlugin load() {
    TorchPlugin p;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("CUDAL2_TORCH_PLUGIN")) candidates.emplace_back(env);
    std::array<char, 4096> exe{};
    const ssize_t len = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
    if (len > 0)
      candidates.push_back(
          (std::filesystem::path(std::string(exe.data(), len)).parent_path() / "libcudal2_torch.so").string());
    candidates.emplace_back("libcudal2_torch.so");
    std::string tried;
    for (const auto& c : candidates) {
      p.lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (p.lib) break;
      const char* e = dlerror();
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", e ? e : c);
    }
    if (!p.lib) {
      p.error = "torch-matmul plugin not available (PyTorch was not found at build time): " + tried;
      return p;
    }
    auto abi = reinterpret_cast<decltype(&cudal2_torch_abi_version)>(dlsym(p.lib, "cudal2_torch_abi_version"));
    p.bind = reinterpret_cast<decltype(p.bind)>(dlsym(p.lib, "cudal2_torch_bind"));
    p.run = reinterpret_cast<decltype(p.run)>(dlsym(p.lib, "cudal2_torch_run"));
    p.unbind = reinterpret_cast<decltype(p.unbind)>(dlsym(p.lib, "cudal2_torch_unbind"));
    p.version = reinterpret_cast<decltype(p.version)>(dlsym(p.lib, "cudal2_torch_version"));
    if (!abi || !p.bind || !p.run || !p.unbind || !p.version || abi() != CUDAL2_TORCH_ABI_VERSION) {
      p.error = "torch-matmul plugin has the wrong ABI; rebuild it";
      p.lib = nullptr;
    }
    return p;
  }
};

class TorchRunner final : public Method {
 public:
  explicit TorchRunner(Accum accum) : accum_(accum) {}
  ~TorchRunner() override {
    if (handle_) TorchPlugin::get().unbind(handle_);
  }
  std::string name() const override { return "torch-matmul"; }
  Layout layout() const override { return Layout::NN; }
  Accum accum() const override { return accum_; }

  void prepare(const Shape& shape, const Operands& ops, cudaStream_t) override {
    auto& p = TorchPlugin::get();
    if (!p.lib) throw MethodUnsupported(p.error);
    if (accum_ != Accum::F32) throw MethodUnsupported("torch.matmul has no fp16-accumulate mode");
    if (handle_) p.unbind(handle_);
    handle_ = nullptr;
    char err[512] = {};
    if (p.bind(ops.A, ops.B, ops.C, shape.m, shape.n, shape.k, 0, &handle_, err, sizeof err) != 0)
      throw MethodUnsupported(fmt::format("torch bind: {}", err));
  }

  void run(cudaStream_t s) override {
    char err[512] = {};
    if (TorchPlugin::get().run(handle_, s, err, sizeof err) != 0)
      throw MethodUnsupported(fmt::format("torch: {}", err));
  }

  nlohmann::json details() const override { return {{"torch_version", TorchPlugin::get().version()}}; }

 private:
  Accum accum_;
  void* handle_ = nullptr;
};

}  // namespace

MethodPtr make_torch(Accum accum) { return std::make_unique<TorchRunner>(accum); }

}  // namespace cudal2
