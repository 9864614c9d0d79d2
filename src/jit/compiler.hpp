#pragma once
// nvcc driver with a content-addressed cache. Key = hash(source, flags, compiler version): an
// artifact is compiled once and reused across runs and processes. Compile logs are kept beside
// the artifact; a compile that outlives its timeout is killed and recorded as such.
#include <chrono>
#include <string>
#include <vector>

namespace cudal2 {

struct CompileOptions {
  std::string cache_dir;  // default: $CUDAL2_CACHE or ~/.cache/cudal2/jit
  std::string nvcc;       // default: nvcc on PATH, else /usr/local/cuda/bin/nvcc
  // Default: paths::kernels_dir() ($CUDAL2_KERNELS_DIR, else share/cudal2/kernels beside the binary).
  std::string kernels_dir;
  // Default: paths::cutlass_root() ($CUTLASS_DIR, else share/cudal2/cutlass beside the binary); a
  // CUTLASS family's compile fails with a message naming CUTLASS_DIR when there is none.
  std::string cutlass_dir;
  std::vector<std::string> include_dirs;  // default: kernels_dir and cutlass_dir's include directories
  std::vector<std::string> extra_flags;
  int jobs = 0;  // parallel compiles; 0 = number of cores
  std::chrono::seconds timeout{900};
};

struct CompileResult {
  std::string status;    // "ok", "compile-error", "timeout"
  std::string key;       // cache key (16 hex digits)
  std::string artifact;  // path of the .so when ok
  std::string log;       // compiler output
  double seconds = 0;    // compile wall time (0 when cached)
  bool cached = false;
  bool ok() const { return status == "ok"; }
};

class Compiler {
 public:
  explicit Compiler(CompileOptions opt = {});
  const CompileOptions& options() const { return opt_; }
  std::string key(const std::string& source) const;
  // The flags every artifact is built with (sm_90a, -DNDEBUG: without it nvcc 13.0 serializes WGMMA).
  std::vector<std::string> flags() const;
  CompileResult compile(const std::string& source) const;
  // Compiles in parallel (options().jobs at a time); results in input order.
  std::vector<CompileResult> compile_all(const std::vector<std::string>& sources) const;

 private:
  CompileOptions opt_;
  std::string version_;
};

}  // namespace cudal2
