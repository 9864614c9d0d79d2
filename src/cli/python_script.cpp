// Where the CLI finds a Python program it runs (src/cli/python_script.hpp).
#include "cli/python_script.hpp"

#include <cstdlib>

#include "core/paths.hpp"

namespace fs = std::filesystem;

namespace cudal2::cli {

fs::path find_python_script(const char* file, const char* env_var) {
  if (const char* env = std::getenv(env_var); env && *env) return env;
  std::error_code ec;
  if (const fs::path data = paths::data_dir(); !data.empty() && fs::is_regular_file(data / file, ec))
    return data / file;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return {};
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::error_code ec2;  // a missing file is not an error here
    fs::path p = dir / "python" / "cudal2" / file;
    if (fs::is_regular_file(p, ec2)) return p;
    if (dir == dir.parent_path()) break;
  }
  return {};
}

}  // namespace cudal2::cli
