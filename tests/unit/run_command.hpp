#pragma once
// Runs a shell command line for a test and collects what it printed (stdout; the caller adds
// "2>&1" for stderr) and how it exited.
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cudal2::test_util {

struct CommandOutcome {
  int code = -1;  // exit status, or -1 if it did not exit normally (or could not start)
  std::string output;
};

inline CommandOutcome run_command(const std::string& cmd) {
  CommandOutcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) o.output += buf;
  const int st = pclose(p);
  o.code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

}  // namespace cudal2::test_util
