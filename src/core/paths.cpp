#include "core/paths.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace cudal2::paths {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool present(const fs::path& p) {
  std::error_code ec;  // a missing file is not an error here
  return fs::exists(p, ec);
}

}  // namespace

fs::path self_dir() {
  // The mapping holding this function names its file by absolute path (dladdr gives the
  // executable only as argv[0] said it).
  const auto here = reinterpret_cast<std::uintptr_t>(&self_dir);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2 || here < lo || here >= hi) continue;
    const auto slash = line.find('/');
    if (slash != std::string::npos) return fs::path(line.substr(slash)).parent_path();
    break;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

fs::path find_data_dir(const fs::path& bin_dir) {
  if (bin_dir.empty()) return {};
  for (const fs::path& d : {bin_dir / "share" / "cudal2", bin_dir.parent_path() / "share" / "cudal2"})
    if (present(d / "kernels")) return d.lexically_normal();
  return {};
}

fs::path data_dir() {
  if (const char* d = env("CUDAL2_DATA_DIR")) return d;
  return find_data_dir(self_dir());
}

std::string kernels_dir() {
  if (const char* d = env("CUDAL2_KERNELS_DIR")) return d;
  const fs::path data = data_dir();
  return data.empty() ? std::string() : (data / "kernels").string();
}

std::string cutlass_root() {
  if (const char* d = env("CUTLASS_DIR")) return d;
  const fs::path data = data_dir();
  if (!data.empty() && present(data / "cutlass" / "include" / "cutlass" / "cutlass.h"))
    return (data / "cutlass").string();
  return {};
}

std::vector<std::string> cutlass_include_dirs(const std::string& root) {
  if (root.empty()) return {};
  return {root + "/include", root + "/tools/util/include"};
}

}  // namespace cudal2::paths
