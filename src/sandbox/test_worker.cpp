// The worker tests/unit/sandbox_test.cpp talks to: every way a job can go wrong, on request.
//   {"do": "echo", "payload": X}      -> {"ok": true, "echo": X, "pid": ...}
//   {"do": "abort"|"segfault", "stderr": "...", "stderr_bytes": [255]}   writes to stderr, dies
//   {"do": "hang", "spawn_child": true}           forks a sleeping grandchild (its pid on stderr)
//   {"do": "exit", "code": N}, {"do": "throw", "what": "..."}, {"do": "not_object"}
//   {"do": "garbage"}      a non-JSON line on the protocol pipe
//   {"do": "extra_line"}   three answers to one request
//   {"do": "print_stdout"} printf, std::cout and write(1) noise, then an answer
//   {"do": "linger"}       answers, and after end of input keeps running
// argv[1] == "--no-read": closes stdin and sleeps without ever serving.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sandbox/sandbox.hpp"

namespace {

using nlohmann::json;

// The real protocol pipe, kept before serve() hides it, so this worker can misbehave on it.
int g_raw_out = -1;
bool g_linger = false;

[[noreturn]] void sleep_forever() {
  for (;;) pause();
}

void raw_write(int fd, const std::string& s) {
  ssize_t n = ::write(fd, s.data(), s.size());
  (void)n;
}

json handle(const json& req) {
  const std::string what = req.value("do", "");
  const std::string err = req.value("stderr", "");
  if (!err.empty()) raw_write(2, err);
  std::string bytes;  // bytes JSON strings cannot carry, such as invalid UTF-8
  for (int b : req.value("stderr_bytes", std::vector<int>{})) bytes += static_cast<char>(b);
  if (!bytes.empty()) raw_write(2, bytes);
  if (what == "echo") return {{"ok", true}, {"echo", req.value("payload", json())}, {"pid", getpid()}};
  if (what == "abort") std::abort();
  if (what == "segfault") {
    int* volatile p = nullptr;  // volatile: the compiler may not turn the store into a trap
    *p = 42;
    return {{"ok", false}};
  }
  if (what == "hang") {
    if (req.value("spawn_child", false)) {
      pid_t child = fork();
      if (child == 0) sleep_forever();
      raw_write(2, "grandchild " + std::to_string(child) + "\n");
    }
    sleep_forever();
  }
  if (what == "exit") std::exit(req.value("code", 0));
  if (what == "throw") throw std::runtime_error(req.value("what", "boom"));
  if (what == "not_object") return 42;
  if (what == "garbage") {
    raw_write(g_raw_out, "this is not json\n");
    return {{"ok", true}};
  }
  if (what == "extra_line") {
    // One write, so the parent reads both lines together and knows it got more than it asked for.
    raw_write(g_raw_out, "{\"ok\":true,\"first\":true}\n{\"ok\":true,\"second\":true}\n");
    return {{"ok", true}, {"third", true}};
  }
  if (what == "print_stdout") {
    std::printf("printf noise {not json\n");
    std::cout << "cout noise" << std::endl;
    raw_write(1, "write(1) noise\n");
    std::fflush(stdout);
    return {{"ok", true}};
  }
  if (what == "linger") {
    g_linger = true;
    return {{"ok", true}};
  }
  throw std::invalid_argument("unknown request: " + req.dump());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--no-read") == 0) {
    ::close(0);
    sleep_forever();
  }
  g_raw_out = dup(1);
  const int rc = cudal2::sandbox::serve(handle);
  if (g_linger) sleep_forever();
  return rc;
}
