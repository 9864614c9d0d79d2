#include "test_paths.hpp"

#include <cstdlib>
#include <filesystem>

namespace cudal2::test {

namespace {

namespace fs = std::filesystem;

fs::path exe_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

// sub of the test data: the environment's, the build's copy, or the source tree's.
std::string data(const char* sub, const char* configured) {
  if (const char* env = std::getenv("CUDAL2_TEST_DATA"); env && *env) return (fs::path(env) / sub).string();
  const fs::path beside = exe_dir() / "gpu_data" / sub;
  std::error_code ec;
  return fs::is_directory(beside, ec) ? beside.string() : std::string(configured);
}

}  // namespace

std::string candidates_dir() { return data("candidates", CUDAL2_TEST_CANDIDATES); }
std::string adversarial_dir() { return data("adversarial", CUDAL2_TEST_ADVERSARIAL); }

std::string cli() {
  if (const char* env = std::getenv("CUDAL2_CLI"); env && *env) return env;
  const fs::path beside = exe_dir().parent_path() / "cudal2";
  std::error_code ec;
  return fs::exists(beside, ec) ? beside.string() : std::string(CUDAL2_CLI);
}

bool long_run() {
  const char* e = std::getenv("CUDAL2_GPU_LONG");
  return e && std::string(e) == "1";
}

}  // namespace cudal2::test
