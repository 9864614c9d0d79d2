#include "jit/compiler.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "codegen/spec.hpp"
#include "core/paths.hpp"

namespace fs = std::filesystem;

namespace cudal2 {

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", p.string()));
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  return out;
}

// Runs argv with stdout+stderr to log_path; kills the whole process group after timeout.
// Returns the exit status, or -1 on timeout.
int run_with_timeout(const std::vector<std::string>& argv, const fs::path& log_path, std::chrono::seconds timeout) {
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}", log_path.string()));
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  ::close(fd);
  if (pid < 0) throw std::runtime_error("fork failed");
  setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Compiler::Compiler(CompileOptions opt) : opt_(std::move(opt)) {
  if (opt_.cache_dir.empty()) {
    if (const char* c = std::getenv("CUDAL2_CACHE"))
      opt_.cache_dir = c;
    else
      opt_.cache_dir = fmt::format("{}/.cache/cudal2/jit", std::getenv("HOME") ? std::getenv("HOME") : "/tmp");
  }
  if (opt_.nvcc.empty()) opt_.nvcc = run_capture("command -v nvcc").empty() ? "/usr/local/cuda/bin/nvcc" : "nvcc";
  // Headers are found relative to the binary (core/paths.hpp): no build-machine path is compiled in.
  if (opt_.kernels_dir.empty()) opt_.kernels_dir = paths::kernels_dir();
  if (opt_.cutlass_dir.empty()) opt_.cutlass_dir = paths::cutlass_root();
  if (opt_.include_dirs.empty()) {
    if (!opt_.kernels_dir.empty()) opt_.include_dirs.push_back(opt_.kernels_dir);
    for (auto& d : paths::cutlass_include_dirs(opt_.cutlass_dir)) opt_.include_dirs.push_back(std::move(d));
  }
  if (opt_.jobs <= 0) opt_.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  version_ = run_capture(opt_.nvcc + " --version 2>&1");
}

std::vector<std::string> Compiler::flags() const {
  std::vector<std::string> f{
      "-std=c++17", "-O3",   "-DNDEBUG", "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr",
      "-Xcompiler", "-fPIC", "-shared"};
  for (const auto& d : opt_.include_dirs) f.push_back("-I" + d);
  f.insert(f.end(), opt_.extra_flags.begin(), opt_.extra_flags.end());
  return f;
}

std::string Compiler::key(const std::string& source) const {
  std::string all = source + "\n--\n" + version_;
  // Where the headers are is not part of the key (a moved or installed tree shares the cache);
  // what they hold is: our headers below, CUTLASS's by its version.h.
  for (const auto& f : flags())
    if (f.rfind("-I", 0) != 0) all += "\n" + f;
  if (!opt_.cutlass_dir.empty())
    all += "\ncutlass\n" + read_file(fs::path(opt_.cutlass_dir) / "include/cutlass/version.h");
  // Headers we own are part of what the artifact is built from: every file of the kernels
  // directory (each family's header and what they share), in name order.
  std::vector<fs::path> headers;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(opt_.kernels_dir, ec))
    if (e.is_regular_file()) headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers) all += "\n" + h.filename().string() + "\n" + read_file(h);
  return fmt::format("{:016x}", fnv1a64(all));
}

CompileResult Compiler::compile(const std::string& source) const {
  CompileResult r;
  r.key = key(source);
  const fs::path dir = fs::path(opt_.cache_dir) / r.key;
  const fs::path so = dir / "kernel.so", log = dir / "build.log", status = dir / "status";
  std::error_code ec;
  if (fs::exists(status, ec)) {
    r.status = read_file(status);
    if (r.status == "ok" && fs::exists(so)) {
      r.cached = true;
      r.artifact = so.string();
      r.log = read_file(log);
      return r;
    }
    if (r.status == "compile-error") {  // deterministic: no point compiling again
      r.cached = true;
      r.log = read_file(log);
      return r;
    }
  }
  // Missing headers are this installation's fault, not the source's: reported, never cached.
  if (opt_.kernels_dir.empty() || !fs::is_directory(opt_.kernels_dir, ec)) {
    r.status = "compile-error";
    r.log = fmt::format(
        "cudal2: kernel headers not found ('{}'; looked for share/cudal2/kernels beside this program): "
        "set CUDAL2_KERNELS_DIR to the checkout's src/kernels\n",
        opt_.kernels_dir);
    return r;
  }
  if (opt_.cutlass_dir.empty() && source.find("cutlass") != std::string::npos) {
    r.status = "compile-error";
    r.log =
        "cudal2: CUTLASS headers not found (looked for share/cudal2/cutlass beside this program): set CUTLASS_DIR "
        "to a CUTLASS checkout (or the nvidia-cutlass wheel's cutlass_library/source)\n";
    return r;
  }
  fs::create_directories(dir);
  // Every file of this build gets a name of its own (process and call), so concurrent compiles
  // of one key, from other processes or other threads of this one, never share a file: seen on
  // the H200, two threads building one source in one directory broke each other's build.
  static std::atomic<unsigned> serial{0};
  const std::string tag = fmt::format("{}.{}", getpid(), serial++);
  const fs::path cu = dir / fmt::format("kernel.{}.cu", tag);
  write_file(cu, source);
  const fs::path tmp = dir / fmt::format("kernel.so.tmp{}", tag);
  std::vector<std::string> argv{opt_.nvcc};
  for (const auto& f : flags()) argv.push_back(f);
  argv.insert(argv.end(), {cu.string(), "-o", tmp.string()});
  // The cublaslt family's artifacts call cuBLASLt (the source says so; it is in the cache key).
  if (source.find("#define CUDAL2_LINK_CUBLASLT 1") != std::string::npos) argv.push_back("-lcublasLt");
  const fs::path tmp_log = dir / fmt::format("build.log.tmp{}", tag);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = run_with_timeout(argv, tmp_log, opt_.timeout);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.log = read_file(tmp_log);
  if (rc == -1) {
    r.status = "timeout";
    r.log += fmt::format("\ncudal2: compile killed after {} s\n", opt_.timeout.count());
    fs::remove(tmp, ec);
  } else if (rc != 0 || !fs::exists(tmp)) {
    r.status = "compile-error";
  } else {
    r.status = "ok";
    fs::rename(tmp, so);
    r.artifact = so.string();
  }
  fs::rename(tmp_log, log, ec);
  fs::rename(cu, dir / "kernel.cu", ec);
  if (r.status != "timeout") write_file(status, r.status);  // a timeout may pass with more time
  return r;
}

std::vector<CompileResult> Compiler::compile_all(const std::vector<std::string>& sources) const {
  // Specs that differ only in runtime knobs share a source: build each distinct source once.
  std::vector<size_t> first(sources.size());
  std::vector<size_t> unique;
  std::map<std::string_view, size_t> seen;
  for (size_t i = 0; i < sources.size(); ++i) {
    auto [it, fresh] = seen.emplace(sources[i], i);
    first[i] = it->second;
    if (fresh) unique.push_back(i);
  }
  std::vector<CompileResult> out(sources.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  const int n = std::min<int>(opt_.jobs, static_cast<int>(unique.size()));
  for (int t = 0; t < n; ++t)
    pool.emplace_back([&] {
      for (size_t j; (j = next++) < unique.size();) out[unique[j]] = compile(sources[unique[j]]);
    });
  for (auto& th : pool) th.join();
  for (size_t i = 0; i < sources.size(); ++i)
    if (first[i] != i) {
      out[i] = out[first[i]];
      out[i].seconds = 0;  // built once, for the first of them
      out[i].cached = true;
    }
  return out;
}

}  // namespace cudal2
