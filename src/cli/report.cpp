#include "cli/report.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/paths.hpp"

namespace fs = std::filesystem;

namespace cudal2 {

namespace {

// The generator script: $CUDAL2_REPORT_SCRIPT, else share/cudal2/report.py of an installed tree
// (core/paths.hpp), else python/cudal2/report.py in the source tree holding the executable
// (build/cudal2 -> ../python/...), looked for up to three levels up.
fs::path find_script() {
  if (const char* env = std::getenv("CUDAL2_REPORT_SCRIPT"); env && *env) return env;
  std::error_code ec;
  if (const fs::path data = paths::data_dir(); !data.empty() && fs::is_regular_file(data / "report.py", ec))
    return data / "report.py";
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return {};
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::error_code ec2;  // a missing file is not an error here
    fs::path p = dir / "python" / "cudal2" / "report.py";
    if (fs::is_regular_file(p, ec2)) return p;
    if (dir == dir.parent_path()) break;
  }
  return {};
}

// $CUDAL2_PYTHON, else the project's venv next to python/ (where bootstrap installs matplotlib),
// else python3 from PATH.
std::string find_python(const fs::path& script) {
  if (const char* env = std::getenv("CUDAL2_PYTHON"); env && *env) return env;
  std::error_code ec;
  const fs::path venv = script.parent_path().parent_path().parent_path() / ".venv" / "bin" / "python";
  if (fs::exists(venv, ec)) return venv.string();
  return "python3";
}

}  // namespace

int report_main(int argc, char** argv) {
  const fs::path script = find_script();
  if (script.empty()) {
    std::fprintf(stderr,
                 "cudal2: error: report generator python/cudal2/report.py not found next to this executable "
                 "(set CUDAL2_REPORT_SCRIPT=/path/to/report.py)\n");
    return 2;
  }
  const std::string python = find_python(script);
  std::vector<std::string> args{python, script.string()};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::fflush(nullptr);
  execvp(cargs[0], cargs.data());
  std::fprintf(stderr, "cudal2: error: cannot run %s %s: %s (set CUDAL2_PYTHON to a Python with matplotlib)\n",
               python.c_str(), script.c_str(), std::strerror(errno));
  return 2;
}

}  // namespace cudal2
