// The child tests/unit/sandbox_test.cpp talks to: every way a job can go wrong, on request.
//   {"do": "echo", "payload": X}      -> {"ok": true, "echo": X, "pid": ...}
//   {"do": "abort"|"segfault", "stderr": "...", "stderr_bytes": [255]}   writes to stderr, dies
//   {"do": "hang", "spawn_child": true}           forks a sleeping grandchild (its pid on stderr)
//   {"do": "exit", "code": N}, {"do": "throw", "what": "..."}, {"do": "not_object"}
//   {"do": "garbage"}      a non-JSON line on the protocol pipe
//   {"do": "extra_line"}   three answers to one request
//   {"do": "print_stdout"} printf, std::cout and write(1) noise, then an answer
//   {"do": "linger"}       answers, and after end of input keeps running
// For the confinement tests (each answers {"ok": true, ...} with errno/error where a call failed):
//   {"do": "write_file", "path": P, "data": D}   create/truncate P and write D
//   {"do": "read_file", "path": P} -> {"success": bool, "bytes": N}
//   {"do": "connect", "port": N}                 TCP connect to 127.0.0.1:N -> {"connected": bool}
//   {"do": "connect_unix", "path": P}            connect to the Unix socket bound to path P
//   {"do": "deny_sockets"} installs the runner's seccomp filter (sandbox/seccomp.hpp) -> {"why": ""}
//   {"do": "socketpair"}   -> {"success": bool}
//   {"do": "getenv", "name": N} -> {"value": V|null};  {"do": "env"} -> {"env": [...]}
//   {"do": "where"}   -> cwd, HOME, TMPDIR, CUDA_CACHE_PATH and the names in the cwd
//   {"do": "status"}  -> CapEff, NoNewPrivs, Uid lines of /proc/self/status
//   {"do": "spawn_setsid", "exit_after": bool}  double fork + setsid; a sleeping grandchild whose
//                      pid as the parent sees it ("host_pid", from /proc/self) is answered
//   {"do": "signal", "pid": P, "sig": S}        kill(P, S) -> {"errno": ...}
//   {"do": "name_thread"}  starts a thread and names it with pthread_setname_np from this one, which
//                      writes /proc/self/task/<tid>/comm, as cuInit does
//   {"do": "burn"}    spins on the CPU forever;  {"do": "alloc", "mb": N}  mallocs and touches N MiB
// argv[1] == "--no-read": closes stdin and sleeps without ever serving.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/sandbox.hpp"
#include "sandbox/seccomp.hpp"

namespace {

using nlohmann::json;

// The real protocol pipe, kept before serve() hides it, so this child can misbehave on it.
int g_raw_out = -1;
bool g_linger = false;

[[noreturn]] void sleep_forever() {
  for (;;) pause();
}

void raw_write(int fd, const std::string& s) {
  ssize_t n = ::write(fd, s.data(), s.size());
  (void)n;
}

json errno_answer(bool ok, int e) {
  json j = {{"ok", true}, {"success", ok}, {"errno", ok ? 0 : e}};
  if (!ok) j["error"] = std::strerror(e);
  return j;
}

// The pid of this process in the PID namespace of the /proc mount (the parent's view).
long proc_self_pid() {
  char buf[64] = {};
  const ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
  return n > 0 ? std::strtol(buf, nullptr, 10) : -1;
}

json confinement_probe(const std::string& what, const json& req) {
  if (what == "write_file") {
    const std::string path = req.at("path");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno_answer(false, errno);
    const std::string data = req.value("data", "x");
    const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    const int e = errno;
    ::close(fd);
    return errno_answer(ok, e);
  }
  if (what == "read_file") {
    const std::string path = req.at("path");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_answer(false, errno);
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    const int e = errno;
    ::close(fd);
    json j = errno_answer(n >= 0, e);
    j["bytes"] = n;
    return j;
  }
  if (what == "connect") {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      json j = errno_answer(false, errno);
      j["connected"] = false;
      return j;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(req.at("port").get<int>()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    const int e = errno;
    ::close(fd);
    json j = errno_answer(ok, e);
    j["connected"] = ok;
    return j;
  }
  if (what == "connect_unix") {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = req.at("path");
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    const int e = errno;
    if (fd >= 0) ::close(fd);
    json j = errno_answer(ok, e);
    j["connected"] = ok;
    return j;
  }
  if (what == "deny_sockets") return {{"ok", true}, {"why", cudal2::sandbox::deny_sockets()}};
  if (what == "socketpair") {
    int sv[2];
    const bool ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0;
    if (ok) ::close(sv[0]), ::close(sv[1]);
    return {{"ok", true}, {"success", ok}};
  }
  if (what == "getenv") {
    const char* v = std::getenv(req.at("name").get<std::string>().c_str());
    return {{"ok", true}, {"value", v ? json(v) : json()}};
  }
  if (what == "env") {
    json list = json::array();
    for (char** e = environ; *e; ++e) list.push_back(*e);
    return {{"ok", true}, {"env", list}};
  }
  if (what == "where") {
    char cwd[PATH_MAX] = {};
    json names = json::array();
    if (getcwd(cwd, sizeof cwd) && std::strlen(cwd) > 0) {
      if (DIR* d = opendir(cwd)) {
        while (const dirent* e = readdir(d)) {
          if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
        }
        closedir(d);
      }
    }
    auto env = [](const char* n) { return std::getenv(n) ? json(std::getenv(n)) : json(); };
    return {{"ok", true},
            {"cwd", cwd},
            {"home", env("HOME")},
            {"tmpdir", env("TMPDIR")},
            {"cuda_cache", env("CUDA_CACHE_PATH")},
            {"entries", names}};
  }
  if (what == "status") {
    std::ifstream f("/proc/self/status");
    json j = {{"ok", true}};
    std::string line;
    while (std::getline(f, line)) {
      for (const char* key : {"CapEff", "CapBnd", "NoNewPrivs", "Uid", "Seccomp"}) {
        const std::string k = std::string(key) + ":";
        if (line.compare(0, k.size(), k) == 0) j[key] = line.substr(line.find_first_not_of(" \t", k.size()));
      }
    }
    return j;
  }
  if (what == "spawn_setsid") {
    int fds[2];
    if (pipe(fds) != 0) return errno_answer(false, errno);
    const pid_t child = fork();
    if (child == 0) {
      setsid();
      if (fork() == 0) {
        const long pids[2] = {static_cast<long>(getpid()), proc_self_pid()};
        raw_write(fds[1], std::string(reinterpret_cast<const char*>(pids), sizeof pids));
        for (int fd = 0; fd < 1024; ++fd) {
          if (fd != 2) ::close(fd);  // holds none of the protocol pipes: only the tree kill gets it
        }
        sleep_forever();
      }
      _exit(0);
    }
    ::close(fds[1]);
    waitpid(child, nullptr, 0);
    long pids[2] = {-1, -1};
    ssize_t n = ::read(fds[0], pids, sizeof pids);
    ::close(fds[0]);
    json j = {{"ok", n == sizeof pids}, {"pid", pids[0]}, {"host_pid", pids[1]}};
    if (req.value("exit_after", false)) j["exit_after"] = true;
    return j;
  }
  if (what == "signal") {
    const bool ok = kill(static_cast<pid_t>(req.at("pid").get<long>()), req.value("sig", 0)) == 0;
    return errno_answer(ok, errno);
  }
  if (what == "name_thread") {
    std::atomic<bool> stop{false};
    std::thread t([&] {
      while (!stop) usleep(1000);
    });
    const int e = pthread_setname_np(t.native_handle(), "cudal2-named");
    char name[32] = {};
    pthread_getname_np(t.native_handle(), name, sizeof name);
    stop = true;
    t.join();
    json j = errno_answer(e == 0, e);
    j["name"] = name;
    return j;
  }
  if (what == "burn") {
    volatile unsigned long x = 0;
    for (;;) x = x + 1;
  }
  if (what == "alloc") {
    const std::size_t bytes = req.at("mb").get<std::size_t>() << 20;
    char* p = static_cast<char*>(std::malloc(bytes));
    if (!p) return errno_answer(false, ENOMEM);
    std::memset(p, 1, bytes);
    const int sum = static_cast<unsigned char>(p[bytes / 2]);
    std::free(p);
    return {{"ok", true}, {"touched", sum}};
  }
  return nullptr;
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
    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): the crash is the point
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
  if (json j = confinement_probe(what, req); !j.is_null()) return j;
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
