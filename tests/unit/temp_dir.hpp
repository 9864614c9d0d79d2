#pragma once
// A fresh directory under the system's temporary directory for one test, removed with everything
// in it when the test ends. Distinct per process, per object and per run (pid, counter, random).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

namespace cudal2::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "cudal2_test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             std::to_string(std::random_device{}()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  // The path of `name` inside the directory (converts to std::string where one is wanted).
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `content` to `name` inside the directory; returns its path.
  std::string file(const std::string& name, const std::string& content) const {
    const auto p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace cudal2::testing
