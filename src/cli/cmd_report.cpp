// `cudal2 report --csv FILE... [--db STORE...] --out DIR`: the HTML report with the paper's figures.
// The generator is Python (python/cudal2/report.py, matplotlib); this finds it and the project's
// interpreter and runs it with the same arguments, with three guards around it: each --db must be
// an intact store (checked here, so a damaged one is refused naming the file), the report is
// written to a temporary directory beside --out and moved into place only when complete (a full
// disk leaves the old report as it was), and what the user sees of a failure is one error line,
// never a Python traceback.
//
// The arguments are the generator's (its own --help included), so this command takes them unparsed:
// its registry entry (src/cli/commands.cpp) has raw_main instead of CLI11 options.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.hpp"
#include "cli/exit_with.hpp"
#include "cli/python_script.hpp"
#include "core/atomic_file.hpp"
#include "store/reader.hpp"

namespace fs = std::filesystem;

namespace cudal2::cli {

namespace {

// $CUDAL2_PYTHON, else the project's venv next to python/ (where bootstrap installs matplotlib),
// else python3 from PATH.
std::string find_python(const fs::path& script) {
  if (const char* env = std::getenv("CUDAL2_PYTHON"); env && *env) return env;
  std::error_code ec;
  const fs::path venv = script.parent_path().parent_path().parent_path() / ".venv" / "bin" / "python";
  if (fs::exists(venv, ec)) return venv.string();
  return "python3";
}

// The values of --NAME VALUE and --NAME=VALUE in args (argv without argv[0]), with their indices.
std::vector<std::pair<size_t, std::string>> values_of(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) out.emplace_back(i + 1, args[i + 1]);
    if (args[i].starts_with(name + "=")) out.emplace_back(i, args[i].substr(name.size() + 1));
  }
  return out;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

struct Finished {
  int status = 0;  // waitpid's
  std::string out, err;
};

// Runs argv with its stdout and stderr captured (both read at once, so neither pipe fills up).
Finished run_captured(std::vector<std::string> argv) {
  std::array<int, 2> out_pipe{}, err_pipe{};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0 || pipe2(err_pipe.data(), O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot start the report generator: {}", std::strerror(errno)));
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start the report generator: {}", std::strerror(errno)));
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvp(cargs[0], cargs.data());
    const std::string msg = fmt::format(
        "cudal2 report: error: cannot run {}: {} (set CUDAL2_PYTHON to a Python with "
        "matplotlib)\n",
        argv[0], std::strerror(errno));
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(2);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Finished f;
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&f.out, &f.err};
  int open_fds = 2;
  std::array<char, 65536> buf{};
  while (open_fds > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  while (waitpid(pid, &f.status, 0) < 0 && errno == EINTR) {
  }
  return f;
}

// The one line a user sees of a failed generator: Python's own "error:" line, or the last line of
// a traceback (the exception), never the traceback itself.
std::string error_line(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  const bool traceback = err.find("Traceback (most recent call last)") != std::string::npos;
  std::string line;
  if (!traceback)
    for (const auto& l : lines)
      if (l.find("error:") != std::string::npos) line = l;
  if (line.empty()) {
    line = lines.empty() ? std::string("the report generator failed without a message") : lines.back();
    line = "cudal2 report: error: " + line;
  }
  if (line.size() > 400) line = line.substr(0, 400) + "...";
  return line;
}

int run_report(const std::vector<std::string>& args) {
  const fs::path script = find_python_script("report.py", "CUDAL2_REPORT_SCRIPT");
  if (script.empty())
    throw InputError(
        "report generator python/cudal2/report.py not found next to this executable (set "
        "CUDAL2_REPORT_SCRIPT=/path/to/report.py)");
  // Inputs first: a store that is missing or damaged is refused here, naming it.
  for (const auto& [at, db] : values_of(args, "--db")) {
    store::check_store(db, store::Verify::Full);  // never written to (store/reader.hpp)
  }
  std::vector<std::string> argv{find_python(script), script.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto outs = values_of(args, "--out");
  fs::path target, temp;
  if (!outs.empty()) {
    // A link to the report's directory stays a link; the directory it names gets the new report.
    target = resolve_output(outs.back().second, "--out");
    std::error_code ec;
    if (fs::exists(target, ec) && !fs::is_directory(target, ec))
      throw InputError(fmt::format("--out '{}' exists and is not a directory", target.string()));
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
      throw InputError(fmt::format("--out '{}': directory '{}' does not exist", target.string(), parent.string()));
    temp = make_temp_sibling(target, true);
    const size_t at = outs.back().first;
    argv[2 + at] = args[at].starts_with("--out=") ? "--out=" + temp.string() : temp.string();
  }
  Finished f;
  try {
    f = run_captured(argv);
  } catch (...) {
    if (!temp.empty()) fs::remove_all(temp);
    throw;
  }
  if (!temp.empty()) {
    replace_all(f.out, temp.string(), target.string());
    replace_all(f.err, temp.string(), target.string());
  }
  const bool ok = WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0;
  if (ok && !temp.empty()) {
    try {
      replace_atomically(temp, target);
    } catch (...) {
      std::error_code ec;
      fs::remove_all(temp, ec);
      throw;
    }
  } else if (!temp.empty()) {
    std::error_code ec;
    fs::remove_all(temp, ec);
  }
  std::fputs(f.out.c_str(), stdout);
  if (ok) {
    std::fputs(f.err.c_str(), stderr);  // warnings
    return 0;
  }
  if (WIFSIGNALED(f.status))
    throw std::runtime_error(fmt::format("the report generator was killed by signal {}", WTERMSIG(f.status)));
  std::fprintf(stderr, "%s\n", error_line(f.err).c_str());
  return 2;
}

}  // namespace

// argv[0] is "report". Returns the exit code: the generator's, 2 for bad input or when the
// generator failed with an uncaught exception, 1 when it could not be run to the end.
int report_main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return exit_code_of([&] { return run_report(args); });
}

}  // namespace cudal2::cli
