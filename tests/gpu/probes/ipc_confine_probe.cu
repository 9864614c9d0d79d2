// Does CUDA IPC work from a confined sandbox child? (docs/threat-model.md). The parent allocates and fills a
// buffer, exports it with cudaIpcGetMemHandle and starts itself as a sandbox::Child ("child")
// under each confinement variant; the child opens the handle, runs a kernel that writes the
// buffer, synchronizes and answers; the parent checks the data. Prints one row per variant with
// the child's start-up time (exec + confinement + CUDA context) and the IPC job time.
// Not part of the test suite. Build (no CMake target):
//   nvcc -std=c++20 -O2 -gencode=arch=compute_90a,code=sm_90a -Isrc -DFMT_HEADER_ONLY=1 \
//     tests/gpu/probes/ipc_confine_probe.cu build-confine/src/sandbox/libcudal2_sandbox.a \
//     -o build-confine/ipc_confine_probe
// Run: ./ipc_confine_probe [out.jsonl]
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox/sandbox.hpp"

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace sb = cudal2::sandbox;

__global__ void write_pattern(float* p, int n, float base) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 2.0f + base + static_cast<float>(i % 1000);
}

static std::string hex(const void* data, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const unsigned char*>(data)[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

static void unhex(const std::string& s, void* out, std::size_t n) {
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (std::size_t i = 0; i < n && 2 * i + 1 < s.size(); ++i) {
    static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
  }
}

static double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

static json child_handle(const json& req) {
  const std::string what = req.value("do", "");
  if (what == "init") {
    const auto t0 = Clock::now();
    cudaError_t e = cudaFree(nullptr);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    return {{"ok", e == cudaSuccess}, {"error", cudaGetErrorString(e)}, {"gpu", prop.name}, {"init_ms", ms_since(t0)}};
  }
  if (what == "ipc") {
    const auto t0 = Clock::now();
    cudaIpcMemHandle_t h;
    unhex(req.at("handle").get<std::string>(), &h, sizeof h);
    void* p = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      return {{"ok", false}, {"stage", "cudaIpcOpenMemHandle"}, {"error", cudaGetErrorString(e)}};
    }
    const int n = req.at("n");
    write_pattern<<<(n + 255) / 256, 256>>>(static_cast<float*>(p), n, req.at("base").get<float>());
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    cudaError_t ec = cudaIpcCloseMemHandle(p);
    return {{"ok", e == cudaSuccess && ec == cudaSuccess},
            {"stage", "kernel"},
            {"error", cudaGetErrorString(e != cudaSuccess ? e : ec)},
            {"ipc_ms", ms_since(t0)}};
  }
  if (what == "alloc") {  // malloc and touch: does the memory limit hold?
    const std::size_t bytes = req.at("mb").get<std::size_t>() << 20;
    char* p = static_cast<char*>(std::malloc(bytes));
    if (p) {
      for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
      std::free(p);
    }
    return {{"ok", true}, {"allocated", p != nullptr}};
  }
  if (what == "where") {
    char cwd[4096] = {};
    (void)!getcwd(cwd, sizeof cwd);
    std::vector<std::string> shm;
    return {{"ok", true}, {"cwd", cwd}, {"pid", getpid()}};
  }
  return {{"ok", false}, {"error", "unknown request"}};
}

struct Variant {
  std::string name;
  sb::Options opt;
};

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "child") == 0) return sb::serve(child_handle);
  std::ofstream log(argc > 1 ? argv[1] : "ipc_confine_probe.jsonl");
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return 2;

  const int n = 1 << 22;  // 16 MiB of floats
  float* buf = nullptr;
  if (cudaMalloc(&buf, n * sizeof(float)) != cudaSuccess) {
    std::printf("no GPU: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 77;
  }
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 7);
  cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaIpcMemHandle_t handle;
  cudaError_t he = cudaIpcGetMemHandle(&handle, buf);
  if (he != cudaSuccess) {
    std::printf("cudaIpcGetMemHandle: %s\n", cudaGetErrorString(he));
    return 1;
  }

  auto base = [] {
    sb::Options o;
    o.timeout = std::chrono::seconds(60);
    return o;
  };
  auto full = [&] {
    sb::Options o = base();
    o.confinement.enabled = true;
    o.confinement.memory_bytes = std::uint64_t{16} << 30;
    return o;
  };
  std::vector<Variant> variants;
  auto add = [&](const std::string& name, auto edit) {
    sb::Options o = full();
    edit(o.confinement);
    variants.push_back({name, o});
  };
  using C = sb::Confinement;
  variants.push_back({"none", base()});
  add("full", [](C&) {});
  add("full+pidns", [](C& c) { c.pid_namespace = true; });
  add("full+uid-nobody", [](C& c) { c.run_as_uid = c.run_as_gid = 65534; });
  add("full+data-4G", [](C& c) { c.data_bytes = std::uint64_t{4} << 30; });
  add("full+data-16G", [](C& c) { c.data_bytes = std::uint64_t{16} << 30; });
  add("full,shm=deny", [](C& c) { c.dev_shm = C::DevShm::Deny; });
  add("full,no-scope", [](C& c) { c.landlock_scope = false; });
  add("landlock-only",
      [](C& c) { c.network_namespace = false, c.drop_capabilities = false, c.dev_shm = C::DevShm::Shared; });
  add("caps+shm-only", [](C& c) { c.network_namespace = false, c.landlock = false; });
  add("all+pidns+nobody+data-8G",
      [](C& c) { c.pid_namespace = true, c.run_as_uid = c.run_as_gid = 65534, c.data_bytes = std::uint64_t{8} << 30; });

  std::printf("%-24s %-5s %9s %9s %9s  %s\n", "variant", "ipc", "start_ms", "init_ms", "ipc_ms", "detail");
  float base_value = 100.0f;
  for (int rep = 0; rep < 2; ++rep) {
    for (auto& v : variants) {
      json row = {{"variant", v.name}, {"rep", rep}};
      std::string detail;
      bool ipc_ok = false;
      double start_ms = -1, init_ms = -1, ipc_ms = -1;
      try {
        // Child needs argv[0] readable+executable by the child: under uid-nobody, /proc/self/exe
        // of the parent may live in a directory nobody cannot enter; that shows up as an error.
        sb::Child w({self, "child"}, v.opt);
        const auto t0 = Clock::now();
        sb::Result r = w.call({{"do", "init"}});
        start_ms = ms_since(t0);
        row["confinement"] = w.confinement().to_json();
        row["init"] = r.to_json();
        if (!r.ok() || !r.response.value("ok", false)) {
          detail = "init failed: " + r.message + " " + r.response.dump() + " " + r.stderr_tail.substr(0, 300);
        } else {
          init_ms = r.response.value("init_ms", -1.0);
          cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
          base_value += 1.0f;
          r = w.call({{"do", "ipc"}, {"handle", hex(&handle, sizeof handle)}, {"n", n}, {"base", base_value}});
          row["ipc"] = r.to_json();
          if (!r.ok() || !r.response.value("ok", false)) {
            detail = "ipc failed: " + r.message + " " + r.response.dump() + " " + r.stderr_tail.substr(0, 300);
          } else {
            ipc_ms = r.response.value("ipc_ms", -1.0);
            std::vector<float> back(n);
            cudaMemcpy(back.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost);
            long bad = 0;
            for (int i = 0; i < n; ++i) {
              const float want = host[i] * 2.0f + base_value + static_cast<float>(i % 1000);
              if (back[i] != want) ++bad;
            }
            ipc_ok = bad == 0;
            if (v.opt.confinement.data_bytes > 0) {  // is RLIMIT_DATA effective, not just harmless?
              const std::uint64_t mb = (v.opt.confinement.data_bytes >> 20) + 1024;
              sb::Result a = w.call({{"do", "alloc"}, {"mb", mb}});
              row["alloc_over_limit"] = a.to_json();
              detail += std::string(" | malloc(limit+1G) ") +
                        (a.ok() ? (a.response.value("allocated", true) ? "SUCCEEDED" : "refused") : a.message);
            }
            detail = bad == 0 ? w.confinement().summary() : "data mismatch: " + std::to_string(bad) + " elements";
          }
        }
      } catch (const std::exception& e) {
        detail = std::string("exception: ") + e.what();
      }
      row["ipc_ok"] = ipc_ok;
      row["start_ms"] = start_ms;
      row["detail"] = detail;
      log << row.dump() << "\n";
      log.flush();
      std::printf("%-24s %-5s %9.1f %9.1f %9.1f  %s\n", v.name.c_str(), ipc_ok ? "OK" : "FAIL", start_ms, init_ms,
                  ipc_ms, detail.substr(0, 400).c_str());
      std::fflush(stdout);
    }
  }
  cudaFree(buf);
  return 0;
}
