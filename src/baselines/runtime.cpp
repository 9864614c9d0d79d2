// Methods runtime-nn / runtime-tn: libcudal2_runtime (docs/runtime.md) timed and verified by the
// same evaluator as the cuBLAS/cuBLASLt baselines (same process, inputs, checks and timers).
// The cudal2 executable does not link the runtime: it is dlopen'ed on first use, looked up in
// order:
//   $CUDAL2_RUNTIME_LIB                   (when set, the only place tried: measure that build)
//   <dir of the executable>/../lib/       (installed: bin/cudal2, lib/libcudal2_runtime.so)
//   <dir of the executable>/src/runtime/  (the build tree: <build>/cudal2)
//   <dir of the executable>/
//   libcudal2_runtime.so.0                (the dynamic linker's search path, or a copy already loaded)
// Methods runtime-b-* and runtime-c-* load $CUDAL2_RUNTIME_LIB_B and $CUDAL2_RUNTIME_LIB_C (nothing
// else is tried): other builds of the library, e.g. with another table, compared in the same
// process. Each is its own copy (a different file, RTLD_LOCAL), with its own tables and handles.
// $CUDAL2_RUNTIME_ENV, _B and _C ("NAME=VALUE;NAME=VALUE") set environment variables for the
// slot's cudal2_create only (the runtime reads its rules there: CUDAL2_M_BUCKETS, CUDAL2_TUNE_UNSEEN,
// CUDAL2_TABLE), so one library under two rules is measured in one process: e.g.
// CUDAL2_RUNTIME_LIB_B=<the same file> CUDAL2_RUNTIME_ENV_B="CUDAL2_M_BUCKETS=off".
// prepare() creates one runtime handle per runner (cudal2_create: its own zeroed workspace,
// CUDAL2_DEFAULT_WORKSPACE_BYTES raised to what the table's kernels need; synchronizes) and asks
// cudal2_query where the shape goes (details: path, spec, table shape); run() is one cudal2_gemm
// with workspace NULL, i.e. the handle's own pool, as an application calling the runtime would
// do, so the bench's workspace (and its guard bands) is not used. A missing library, or a handle
// that cannot be created, is a MethodUnsupported: the bench records the method as unsupported.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cudal2/cudal2.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baselines/baselines.hpp"

namespace cudal2 {

namespace {

struct RuntimeLib {
  void* lib = nullptr;
  std::string path, error;
  decltype(&cudal2_create) create = nullptr;
  decltype(&cudal2_tune_wait) tune_wait = nullptr;
  decltype(&cudal2_destroy) destroy = nullptr;
  decltype(&cudal2_gemm) gemm = nullptr;
  decltype(&cudal2_query) query = nullptr;
  decltype(&cudal2_last_error) last_error = nullptr;
  decltype(&cudal2_status_string) status_string = nullptr;
  decltype(&cudal2_get_table_info) table_info = nullptr;

  static const char* env_name(const std::string& slot) {
    if (slot == "b") return "CUDAL2_RUNTIME_LIB_B";
    if (slot == "c") return "CUDAL2_RUNTIME_LIB_C";
    return "CUDAL2_RUNTIME_LIB";
  }

  static RuntimeLib& get(const std::string& slot) {
    // Runners are prepared on one thread; the lock keeps a second one from loading twice.
    static std::mutex mu;
    static std::map<std::string, RuntimeLib> libs;
    const std::lock_guard<std::mutex> lock(mu);
    auto it = libs.find(slot);
    if (it == libs.end()) it = libs.emplace(slot, load(slot)).first;
    return it->second;
  }

  static RuntimeLib load(const std::string& slot) {
    RuntimeLib l;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv(env_name(slot)); env && *env) {
      candidates.emplace_back(env);
    } else if (!slot.empty()) {
      l.error = fmt::format("runtime-{}-*: set {} to the build of libcudal2_runtime to measure", slot, env_name(slot));
      return l;
    } else {
      std::array<char, 4096> exe{};
      const ssize_t len = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
      if (len > 0) {
        const auto dir = std::filesystem::path(std::string(exe.data(), static_cast<size_t>(len))).parent_path();
        for (const auto& d : {dir / ".." / "lib", dir / "src" / "runtime", dir})
          candidates.push_back((d / "libcudal2_runtime.so").string());
      }
      candidates.emplace_back("libcudal2_runtime.so.0");
    }
    std::string tried;
    for (const auto& c : candidates) {
      l.lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (l.lib) {
        l.path = c;
        break;
      }
      const char* e = dlerror();
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", e ? e : c);
    }
    if (!l.lib) {
      l.error = "libcudal2_runtime not found (build the cudal2_runtime target, or set CUDAL2_RUNTIME_LIB): " + tried;
      return l;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(l.lib, name));
    };
    sym(l.create, "cudal2_create");
    sym(l.destroy, "cudal2_destroy");
    sym(l.gemm, "cudal2_gemm");
    sym(l.query, "cudal2_query");
    sym(l.last_error, "cudal2_last_error");
    sym(l.status_string, "cudal2_status_string");
    sym(l.table_info, "cudal2_get_table_info");
    sym(l.tune_wait, "cudal2_tune_wait");  // optional: libraries before background tuning lack it
    if (!l.create || !l.destroy || !l.gemm || !l.query || !l.last_error || !l.status_string || !l.table_info) {
      l.error = fmt::format("{} lacks the cudal2 C API (include/cudal2/cudal2.h); rebuild it", l.path);
      l.lib = nullptr;
    }
    return l;
  }
};

// Sets the slot's CUDAL2_RUNTIME_ENV* variables while alive, and puts the old values back after.
// The bench prepares runners on one thread, so no other thread reads the environment meanwhile.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::string& slot) {
    const std::string var = slot.empty() ? "CUDAL2_RUNTIME_ENV" : "CUDAL2_RUNTIME_ENV_" + upper(slot);
    const char* spec = std::getenv(var.c_str());
    if (!spec) return;
    std::string list(spec);
    size_t at = 0;
    while (at <= list.size()) {
      const size_t end = std::min(list.find(';', at), list.size());
      const std::string item = list.substr(at, end - at);
      at = end + 1;
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      const std::string name = item.substr(0, eq);
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name.c_str(), item.substr(eq + 1).c_str(), 1);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
  }

 private:
  static std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

const char* path_name(cudal2_path_t p) {
  switch (p) {
    case CUDAL2_PATH_TABLE_KERNEL:
      return "table";
    case CUDAL2_PATH_BUCKET_KERNEL:
      return "bucket";
    case CUDAL2_PATH_NEIGHBOUR_KERNEL:
      return "neighbour";
    case CUDAL2_PATH_CUBLASLT:
      return "cublaslt";
    case CUDAL2_PATH_STREAM_KERNEL:
      return "stream";
  }
  return "unknown";
}

class RuntimeRunner final : public Method {
 public:
  RuntimeRunner(Layout layout, Accum accum, std::string slot)
      : layout_(layout), accum_(accum), slot_(std::move(slot)) {}
  ~RuntimeRunner() override {
    if (handle_) RuntimeLib::get(slot_).destroy(handle_);
  }
  std::string name() const override { return runtime_method_name(slot_, layout_); }
  Layout layout() const override { return layout_; }
  Accum accum() const override { return accum_; }

  void prepare(const Shape& shape, const Operands& ops, cudaStream_t s) override {
    auto& l = RuntimeLib::get(slot_);
    if (!l.lib) throw MethodUnsupported(fmt::format("{}: {}", name(), l.error));
    if (!handle_) {
      const ScopedEnv env(slot_);
      if (const auto st = l.create(&handle_, nullptr)) {
        handle_ = nullptr;
        throw MethodUnsupported(fmt::format("{}: cudal2_create: {}: {}", name(), l.status_string(st), l.last_error()));
      }
    }
    shape_ = shape;
    ops_ = ops;
    cudal2_dispatch_info info{};
    if (const auto st = l.query(handle_, lt(), acc(), shape.m, shape.n, shape.k, &info))
      throw MethodUnsupported(fmt::format("{}: cudal2_query: {}: {}", name(), l.status_string(st), l.last_error()));
    const auto t = l.table_info();
    details_ = {{"path", path_name(info.path)},
                {"spec", info.spec ? info.spec : ""},
                {"workspace_bytes", info.workspace_bytes},
                {"table", t.source ? t.source : ""},
                {"table_gpu", t.gpu ? t.gpu : ""},
                {"library", l.path}};
    const std::string env_var =
        slot_.empty()
            ? "CUDAL2_RUNTIME_ENV"
            : "CUDAL2_RUNTIME_ENV_" + std::string(1, char(std::toupper(static_cast<unsigned char>(slot_[0]))));
    if (const char* env = std::getenv(env_var.c_str())) details_["env"] = env;
    if (info.path != CUDAL2_PATH_CUBLASLT)
      details_["table_shape"] = fmt::format("{}x{}x{}", info.table_m, info.table_n, info.table_k);
    if (l.tune_wait) settle(l, s);
  }

  void run(cudaStream_t s) override {
    auto& l = RuntimeLib::get(slot_);
    // workspace NULL: the handle's own (see the top of this file).
    const auto st = l.gemm(handle_, lt(), acc(), shape_.m, shape_.n, shape_.k, ops_.A, ops_.B, ops_.C, nullptr, 0,
                           reinterpret_cast<cudal2_stream_t>(s));
    if (st != CUDAL2_STATUS_SUCCESS)
      throw MethodUnsupported(fmt::format("{}: cudal2_gemm: {}: {}", name(), l.status_string(st), l.last_error()));
  }

  nlohmann::json details() const override { return details_; }

  // The runtime as a program meets it after its first call of the shape: that call (its host
  // time recorded), then the handle's background tuning finished (how long it took recorded), so
  // that what is timed is the plan the program runs from then on, with no tuning beside it.
  void settle(const RuntimeLib& l, cudaStream_t s) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    run(s);
    const auto t1 = Clock::now();
    if (cudaStreamSynchronize(s) != cudaSuccess)
      throw MethodUnsupported(
          fmt::format("{}: the first call failed: {}", name(), cudaGetErrorString(cudaGetLastError())));
    long tuned = 0;
    if (const auto st = l.tune_wait(handle_, &tuned))
      throw MethodUnsupported(fmt::format("{}: cudal2_tune_wait: {}: {}", name(), l.status_string(st), l.last_error()));
    const auto t2 = Clock::now();
    details_["first_call_host_us"] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    details_["tune_wait_ms"] = std::chrono::duration<double, std::milli>(t2 - t1).count();
    details_["tuned_shapes"] = tuned;
    // What the calls run from now on (a cuBLASLt plan: the tuned configuration's text).
    cudal2_dispatch_info after{};
    if (l.query(handle_, lt(), acc(), shape_.m, shape_.n, shape_.k, &after) == CUDAL2_STATUS_SUCCESS && after.spec)
      details_["spec_after_first_call"] = after.spec;
  }

 private:
  cudal2_layout_t lt() const { return layout_ == Layout::NN ? CUDAL2_LAYOUT_NN : CUDAL2_LAYOUT_TN; }
  cudal2_accum_t acc() const { return accum_ == Accum::F32 ? CUDAL2_ACCUM_F32 : CUDAL2_ACCUM_F16; }

  Layout layout_;
  Accum accum_;
  std::string slot_;
  cudal2_handle_t handle_ = nullptr;
  Shape shape_{};
  Operands ops_;
  nlohmann::json details_ = nlohmann::json::object();
};

}  // namespace

MethodPtr make_runtime(Layout layout, Accum accum, const std::string& slot) {
  return std::make_unique<RuntimeRunner>(layout, accum, slot);
}

}  // namespace cudal2
