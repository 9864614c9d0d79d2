// The process sandbox against a child that fails in every way a generated kernel can
// (src/sandbox/test_child.cpp, built beside this binary).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string child_path() {
  const auto path = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "cudal2_sandbox_test_child";
  EXPECT_TRUE(std::filesystem::exists(path)) << path << " is missing; build target cudal2_sandbox_test_child";
  return path.string();
}

Child make_child(Options options = {.timeout = 5s}) { return Child({child_path()}, options); }

// Gone means no process at all, or a zombie: either way it runs nothing any more.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool reaped(pid_t pid) { return kill(pid, 0) == -1 && errno == ESRCH && waitpid(pid, nullptr, WNOHANG) == -1; }

void expect_echo_works(Child& w, int restarts) {
  Result r = w.call({{"do", "echo"}, {"payload", "again"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message << "\n" << r.stderr_tail;
  EXPECT_EQ(r.response["echo"], "again");
  EXPECT_EQ(w.restarts(), restarts);
}

TEST(SandboxChild, EchoRoundTrip) {
  Child w = make_child();
  EXPECT_FALSE(w.running());  // started lazily
  const json payload = {{"a", 1}, {"s", "h\u00e9llo\nline"}, {"v", {1.5, nullptr, true}}};
  Result r = w.call({{"do", "echo"}, {"payload", payload}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.response["ok"], true);
  EXPECT_EQ(r.response["echo"], payload);
  EXPECT_EQ(r.response["pid"], r.pid);
  EXPECT_EQ(w.pid(), r.pid);
  EXPECT_TRUE(w.running());
  EXPECT_TRUE(r.message.empty());
  expect_echo_works(w, 0);
  EXPECT_EQ(w.pid(), r.pid);  // the same child serves every call until something fails
}

// Options::env over the inherited environment: one child per GPU gets its own
// CUDA_VISIBLE_DEVICES; the rest of the parent's environment still comes along.
TEST(SandboxChild, OptionsEnvOverridesTheInheritedEnvironment) {
  ASSERT_EQ(setenv("CUDAL2_TEST_KEPT", "kept", 1), 0);
  ASSERT_EQ(setenv("CUDAL2_TEST_DROPPED", "x", 1), 0);
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "0,1", 1), 0);
  Options o{.timeout = 5s};
  o.env = {"CUDA_VISIBLE_DEVICES=1", "CUDAL2_TEST_NEW=new", "CUDAL2_TEST_DROPPED"};
  Child w = make_child(o);
  Result r = w.call({{"do", "env"}});
  unsetenv("CUDAL2_TEST_KEPT");
  unsetenv("CUDAL2_TEST_DROPPED");
  unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(r.ok()) << r.message;
  std::set<std::string> seen;
  int cvd = 0;
  for (const auto& e : r.response["env"]) {
    const std::string s = e.get<std::string>();
    seen.insert(s);
    cvd += s.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0;
  }
  EXPECT_TRUE(seen.count("CUDA_VISIBLE_DEVICES=1"));
  EXPECT_EQ(cvd, 1);
  EXPECT_TRUE(seen.count("CUDAL2_TEST_NEW=new"));
  EXPECT_TRUE(seen.count("CUDAL2_TEST_KEPT=kept"));
  EXPECT_FALSE(seen.count("CUDAL2_TEST_DROPPED=x"));
  // Without Options::env the child inherits the parent's environment as before.
  Child plain = make_child();
  r = plain.call({{"do", "getenv"}, {"name", "CUDAL2_TEST_NEW"}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.response["value"].is_null());
}

TEST(SandboxChild, LargeMessagesArriveWhole) {
  Child w = make_child();
  const std::string big(3 << 20, 'x');  // far beyond a pipe's buffer: partial writes and reads
  Result r = w.call({{"do", "echo"}, {"payload", big}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["echo"], big);
}

TEST(SandboxChild, AbortIsCrashedWithSigabrtAndKeepsStderr) {
  Child w = make_child();
  Result r = w.call({{"do", "abort"}, {"stderr", "about to abort: marker-8127\n"}});
  EXPECT_EQ(r.kind, Outcome::Crashed) << r.message;
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_EQ(r.signal_name, "SIGABRT");
  EXPECT_NE(r.message.find("SIGABRT"), std::string::npos) << r.message;
  EXPECT_NE(r.stderr_tail.find("about to abort: marker-8127"), std::string::npos) << r.stderr_tail;
  EXPECT_TRUE(r.response.is_null());
  EXPECT_TRUE(reaped(r.pid));
  EXPECT_FALSE(w.running());
  expect_echo_works(w, 1);
}

TEST(SandboxChild, SegfaultIsCrashedWithSigsegv) {
  Child w = make_child();
  expect_echo_works(w, 0);
  Result r = w.call({{"do", "segfault"}});
  EXPECT_EQ(r.kind, Outcome::Crashed) << r.message;
  EXPECT_EQ(r.signal_name, "SIGSEGV");
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxChild, HangIsKilledAtTheTimeoutWithItsChildren) {
  Child w = make_child();
  expect_echo_works(w, 0);  // started, so the timeout below measures only the hang
  Result r = w.call({{"do", "hang"}, {"spawn_child", true}}, 300ms);
  EXPECT_EQ(r.kind, Outcome::Hung) << r.message;
  EXPECT_GE(r.elapsed, 300ms);
  EXPECT_LT(r.elapsed, 1300ms);
  EXPECT_TRUE(reaped(r.pid));
  // The grandchild shared the child's process group, so the group kill took it too.
  const auto at = r.stderr_tail.find("grandchild ");
  ASSERT_NE(at, std::string::npos) << r.stderr_tail;
  const pid_t grandchild = std::stoi(r.stderr_tail.substr(at + 11));
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (!process_gone(grandchild) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(process_gone(grandchild));
  expect_echo_works(w, 1);
}

TEST(SandboxChild, ExitBeforeAnsweringReportsTheCode) {
  Child w = make_child();
  Result r = w.call({{"do", "exit"}, {"code", 3}});
  EXPECT_EQ(r.kind, Outcome::Exited) << r.message;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxChild, GarbageLineIsProtocolError) {
  Child w = make_child();
  Result r = w.call({{"do", "garbage"}});
  EXPECT_EQ(r.kind, Outcome::ProtocolError) << r.message;
  EXPECT_NE(r.message.find("this is not json"), std::string::npos) << r.message;
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxChild, StdoutNoiseGoesToStderr) {
  Child w = make_child();
  Result r = w.call({{"do", "print_stdout"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], true);
  for (const char* noise : {"printf noise", "cout noise", "write(1) noise"})
    EXPECT_NE(r.stderr_tail.find(noise), std::string::npos) << noise << " not in: " << r.stderr_tail;
  expect_echo_works(w, 0);
}

TEST(SandboxChild, HandlerErrorsAreAnswersNotFailures) {
  Child w = make_child();
  Result r = w.call({{"do", "throw"}, {"what", "kernel did not compile"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], false);
  EXPECT_EQ(r.response["error"], "kernel did not compile");
  r = w.call({{"do", "not_object"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], false);
  expect_echo_works(w, 0);  // the same child goes on
}

TEST(SandboxChild, EveryFailureRestartsOnTheNextCall) {
  Child w = make_child();
  const json failures[] = {{{"do", "abort"}}, {{"do", "exit"}, {"code", 0}}, {{"do", "garbage"}}, {{"do", "segfault"}}};
  int restarts = 0;
  for (const json& req : failures) {
    EXPECT_FALSE(w.call(req).ok()) << req;
    expect_echo_works(w, ++restarts);
  }
  EXPECT_EQ(w.restarts(), 4);
}

TEST(SandboxChild, ExtraAnswerLinesReplaceTheChild) {
  // Several lines for one request: the first is the answer, and a child that no longer agrees
  // with us about which answer belongs to which request is replaced before the next one.
  Child w = make_child();
  Result r = w.call({{"do", "extra_line"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["first"], true);
  expect_echo_works(w, 1);
}

TEST(SandboxChild, ChildKilledWhileIdleIsReplaced) {
  Child w = make_child();
  expect_echo_works(w, 0);
  const pid_t pid = w.pid();
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);  // dead, not reaped
  EXPECT_FALSE(w.running());
  expect_echo_works(w, 1);
  EXPECT_TRUE(reaped(pid));
}

TEST(SandboxChild, ChildThatStopsReadingHangsWithoutSigpipe) {
  // Our write meets a pipe with no reader: EPIPE, and SIGPIPE would kill this test process.
  Child w({child_path(), "--no-read"}, {.timeout = 5s});
  w.start();
  std::this_thread::sleep_for(100ms);
  Result r = w.call({{"do", "echo"}}, 300ms);
  EXPECT_EQ(r.kind, Outcome::Hung) << r.message;
  EXPECT_TRUE(reaped(r.pid));
}

TEST(SandboxChild, MissingExecutableThrows) {
  Child w({"/nonexistent/cudal2-child"});
  EXPECT_THROW(w.call({{"do", "echo"}}), std::system_error);
  EXPECT_FALSE(w.running());
}

TEST(SandboxChild, DestructorLetsAChildExitAndKillsOneThatLingers) {
  pid_t clean = -1, lingering = -1;
  {
    Child w = make_child();
    expect_echo_works(w, 0);
    clean = w.pid();
  }
  EXPECT_TRUE(reaped(clean));
  const auto t0 = std::chrono::steady_clock::now();
  {
    Child w = make_child({.timeout = 5s, .shutdown_grace = 100ms});
    ASSERT_TRUE(w.call({{"do", "linger"}}).ok());
    lingering = w.pid();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(reaped(lingering));
}

TEST(SandboxChild, MovedChildKeepsItsProcess) {
  Child a = make_child();
  expect_echo_works(a, 0);
  const pid_t pid = a.pid();
  Child b = std::move(a);
  EXPECT_EQ(b.pid(), pid);
  expect_echo_works(b, 0);
}

TEST(SandboxResult, ToJsonForFailureRecords) {
  Child w = make_child();
  Result r = w.call({{"do", "abort"}, {"stderr", "bad bytes "}, {"stderr_bytes", {0xff, 0xfe}}});
  ASSERT_EQ(r.kind, Outcome::Crashed);
  const json j = r.to_json();
  EXPECT_EQ(j["kind"], "crashed");
  EXPECT_EQ(j["signal_name"], "SIGABRT");
  EXPECT_EQ(j["pid"], r.pid);
  EXPECT_FALSE(j.contains("exit_code"));
  EXPECT_NO_THROW((void)j.dump());  // invalid UTF-8 in stderr was replaced
  EXPECT_NE(j["stderr_tail"].get<std::string>().find("bad bytes \xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
}

// ---- Options::confinement ----------------------------------------------------------------------

Options confined(std::chrono::milliseconds timeout = 5s) {
  Options o;
  o.timeout = timeout;
  o.confinement.enabled = true;
  return o;
}

// A mechanism the report lists as missing, under its own name ("landlock: ...").
bool reported_missing(const ConfinementReport& r, std::string_view mechanism) {
  const std::string key(mechanism.substr(0, mechanism.find(':')));
  for (const auto& m : r.missing) {
    if (m.compare(0, key.size(), key) == 0) return true;
  }
  return false;
}

// Where the kernel or our privileges lack a mechanism, the report must say so; then skip.
#define REQUIRE_MECHANISM(child, name)                                                                        \
  do {                                                                                                        \
    if (!(child).confinement().has(name)) {                                                                   \
      EXPECT_TRUE(reported_missing((child).confinement(), name)) << (child).confinement().summary();          \
      GTEST_SKIP() << name << " is not available here; the report says: " << (child).confinement().summary(); \
    }                                                                                                         \
  } while (0)

bool wait_gone(pid_t pid, std::chrono::milliseconds limit = 2s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!process_gone(pid) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  return process_gone(pid);
}

std::string make_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "cudal2-confine-test-XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

TEST(SandboxConfinement, OffByDefault) {
  Child w = make_child();
  Result r = w.call({{"do", "echo"}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.confinement, "none");
  EXPECT_EQ(w.confinement().summary(), "none");
  EXPECT_FALSE(r.to_json().contains("confinement"));
}

TEST(SandboxConfinement, ReportSaysWhatApplied) {
  Child w = make_child(confined());
  Result r = w.call({{"do", "echo"}});
  ASSERT_TRUE(r.ok()) << r.message << "\n" << r.stderr_tail;
  const ConfinementReport& rep = w.confinement();
  EXPECT_EQ(r.confinement, rep.summary());
  EXPECT_EQ(r.to_json()["confinement"], rep.summary());
  for (const char* m : {"scratch", "env", "no-new-privs", "rlimits"})
    EXPECT_TRUE(rep.has(m)) << m << ": " << rep.summary();
  // Every other mechanism is either applied or listed as missing with a reason.
  for (const char* m : {"netns", "landlock", "caps", "cgroup-mem", "cgroup-pids", "private-shm"}) {
    EXPECT_TRUE(rep.has(m) || reported_missing(rep, m)) << m << ": " << rep.summary();
  }
  EXPECT_TRUE(rep.has("tree-kill:cgroup") || reported_missing(rep, "tree-kill")) << rep.summary();
  std::cout << "confinement here: " << rep.summary() << std::endl;
}

TEST(SandboxConfinement, WritesOnlyInsideScratch) {
  Child w = make_child(confined());
  ASSERT_TRUE(w.call({{"do", "echo"}}).ok());
  REQUIRE_MECHANISM(w, "landlock");
  const std::string scratch = w.confinement().scratch;
  const std::string outside = make_temp_dir();
  const char* home = std::getenv("HOME");
  std::vector<std::string> forbidden = {outside + "/escaped.txt", "/tmp/cudal2-confine-escaped.txt"};
  if (home && *home) forbidden.push_back(std::string(home) + "/cudal2-confine-escaped.txt");
  for (const std::string& path : forbidden) {
    Result r = w.call({{"do", "write_file"}, {"path", path}});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_FALSE(r.response["success"].get<bool>()) << path << " was writable";
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
    std::filesystem::remove(path);
  }
  for (const std::string& path : {std::string("inside.txt"), scratch + "/abs.txt", std::string("/dev/null")}) {
    Result r = w.call({{"do", "write_file"}, {"path", path}, {"data", "hello"}});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_TRUE(r.response["success"].get<bool>()) << path << ": " << r.response.dump();
  }
  EXPECT_TRUE(std::filesystem::exists(scratch + "/inside.txt"));
  std::filesystem::remove_all(outside);
}

TEST(SandboxConfinement, NoNetwork) {
  // A listener on loopback; an unconfined child reaches it, a confined one must not.
  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(lfd, 8), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  auto accepted = [&] {
    const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) close(c);
    return c >= 0;
  };
  {
    Child open = make_child();
    Result r = open.call({{"do", "connect"}, {"port", port}});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_TRUE(r.response["connected"].get<bool>()) << r.response.dump();
    EXPECT_TRUE(accepted());
  }
  Child w = make_child(confined());
  Result r = w.call({{"do", "connect"}, {"port", port}});
  ASSERT_TRUE(r.ok()) << r.message;
  if (!w.confinement().has("netns")) {
    close(lfd);
    REQUIRE_MECHANISM(w, "netns");
  }
  EXPECT_FALSE(r.response["connected"].get<bool>()) << r.response.dump();
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(accepted()) << "the listener saw a connection from the confined child";
  close(lfd);
}

TEST(SandboxConfinement, SeccompTakesAwayUnixSocketsBoundToPaths) {
  // A network namespace does not cover a Unix socket bound to a path (found on the GPU: the
  // connect_unix candidate reached one under every other mechanism). The runner's seccomp filter
  // must: before it, the child connects; after it, socket(2) fails and nothing arrives.
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cudal2_seccomp_test_" + std::to_string(getpid()) + ".sock")).string();
  ::unlink(path.c_str());
  const int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(lfd, 8), 0);
  auto accepted = [&] {
    const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) close(c);
    return c >= 0;
  };
  Child w = make_child();
  Result r = w.call({{"do", "connect_unix"}, {"path", path}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.response["connected"].get<bool>()) << r.response.dump();
  EXPECT_TRUE(accepted());
  r = w.call({{"do", "deny_sockets"}});
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.response["why"].get<std::string>(), "");
  r = w.call({{"do", "connect_unix"}, {"path", path}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_FALSE(r.response["connected"].get<bool>()) << r.response.dump();
  EXPECT_EQ(r.response["errno"].get<int>(), EACCES) << r.response.dump();
  r = w.call({{"do", "connect"}, {"port", 9}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_FALSE(r.response["connected"].get<bool>());
  r = w.call({{"do", "socketpair"}});  // in-process pairs reach nobody and stay allowed
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.response["success"].get<bool>());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(accepted()) << "the listener saw a connection after the filter";
  close(lfd);
  ::unlink(path.c_str());
}

TEST(SandboxConfinement, MinimalEnvironmentAndScratchDirectories) {
  ASSERT_EQ(setenv("CUDAL2_TEST_SECRET", "hunter2", 1), 0);
  ASSERT_EQ(setenv("CUDAL2_TEST_COPIED", "copied", 1), 0);
  Options o = confined();
  o.confinement.env = {"CUDAL2_SET=yes", "CUDAL2_TEST_COPIED", "CUDAL2_TEST_UNSET_NAME"};
  Child w = make_child(o);
  Result r = w.call({{"do", "getenv"}, {"name", "CUDAL2_TEST_SECRET"}});
  unsetenv("CUDAL2_TEST_SECRET");
  unsetenv("CUDAL2_TEST_COPIED");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.response["value"].is_null()) << r.response.dump();
  r = w.call({{"do", "env"}});
  ASSERT_TRUE(r.ok()) << r.message;
  const std::set<std::string> allowed = {"HOME",
                                         "TMPDIR",
                                         "CUDA_CACHE_PATH",
                                         "PATH",
                                         "LD_LIBRARY_PATH",
                                         "CUDA_VISIBLE_DEVICES",
                                         "CUDA_DEVICE_ORDER",
                                         "NVIDIA_VISIBLE_DEVICES",
                                         "NVIDIA_DRIVER_CAPABILITIES",
                                         "CUDAL2_SET",
                                         "CUDAL2_TEST_COPIED"};
  std::set<std::string> seen;
  for (const auto& e : r.response["env"]) {
    const std::string s = e.get<std::string>();
    const std::string name = s.substr(0, s.find('='));
    EXPECT_TRUE(allowed.count(name)) << "inherited " << s;
    seen.insert(s);
  }
  EXPECT_TRUE(seen.count("CUDAL2_SET=yes"));
  EXPECT_TRUE(seen.count("CUDAL2_TEST_COPIED=copied"));
  r = w.call({{"do", "where"}});
  ASSERT_TRUE(r.ok()) << r.message;
  const std::string scratch = w.confinement().scratch;
  ASSERT_FALSE(scratch.empty());
  EXPECT_EQ(std::filesystem::canonical(r.response["cwd"].get<std::string>()), std::filesystem::canonical(scratch));
  EXPECT_EQ(r.response["home"], scratch);
  EXPECT_EQ(r.response["tmpdir"], scratch);
  EXPECT_EQ(r.response["cuda_cache"], scratch);
}

TEST(SandboxConfinement, ScratchIsFreshForEveryChild) {
  Child w = make_child(confined());
  ASSERT_TRUE(w.call({{"do", "write_file"}, {"path", "state.txt"}, {"data", "left behind"}}).ok());
  const std::string first = w.confinement().scratch;
  EXPECT_TRUE(std::filesystem::exists(first + "/state.txt"));
  ASSERT_FALSE(w.call({{"do", "exit"}, {"code", 0}}).ok());  // the child ends; next call starts anew
  EXPECT_FALSE(std::filesystem::exists(first)) << "old scratch not removed";
  Result r = w.call({{"do", "where"}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_NE(w.confinement().scratch, first);
  EXPECT_TRUE(r.response["entries"].empty()) << r.response.dump();
  const std::string second = w.confinement().scratch;
  w.stop();
  EXPECT_FALSE(std::filesystem::exists(second));
}

// Processes whose parent is `pid`, from /proc/<p>/stat.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// The setsid'd grandchild as this process sees it. In a PID namespace the child's /proc is the
// namespace's, so its answer holds namespace pids; there the orphaned grandchild was reparented
// to the child (the namespace's init) and is found as its child.
pid_t grandchild_of(const Result& r, bool pidns) {
  if (!pidns) return r.response.value("host_pid", -1);
  const auto kids = children_of(r.pid);
  return kids.size() == 1 ? kids[0] : -1;
}

// The grandchild left the process group (setsid) and its parent exited: only a cgroup or PID
// namespace still knows it belongs to the child.
void expect_setsid_grandchild_dies(Options options, const char* mechanism) {
  const bool pidns = options.confinement.pid_namespace;
  // Control: without confinement the grandchild survives the child (the documented caveat).
  {
    Child w = make_child();
    Result r = w.call({{"do", "spawn_setsid"}});
    ASSERT_TRUE(r.ok() && r.response["ok"].get<bool>()) << r.message << r.response.dump();
    const pid_t escaped = r.response["host_pid"].get<pid_t>();
    w.stop();
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(process_gone(escaped)) << "control: an unconfined setsid grandchild is expected to survive";
    kill(escaped, SIGKILL);
  }
  Child w = make_child(options);
  Result first = w.call({{"do", "echo"}});
  ASSERT_TRUE(first.ok()) << first.to_json().dump();
  if (!w.confinement().has(mechanism)) {
    REQUIRE_MECHANISM(w, mechanism);
  }
  // 1. stop() after an answer.
  Result r = w.call({{"do", "spawn_setsid"}});
  ASSERT_TRUE(r.ok() && r.response["ok"].get<bool>()) << r.message << r.response.dump();
  pid_t g = grandchild_of(r, pidns);
  ASSERT_GT(g, 0);
  EXPECT_FALSE(process_gone(g));
  w.stop();
  EXPECT_TRUE(wait_gone(g)) << "setsid grandchild " << g << " outlived stop()";
  // 2. The child answers and exits by itself; the next call replaces it and takes the tree down.
  r = w.call({{"do", "spawn_setsid"}, {"exit_after", true}});
  ASSERT_TRUE(r.ok()) << r.message;
  g = grandchild_of(r, pidns);  // -1 in a PID namespace if the dying init already took it down
  // Let it finish exiting (as PID namespace init it first kills the namespace), so the next call
  // starts a new child instead of racing the dying one.
  for (int i = 0; i < 400 && w.running(); ++i) std::this_thread::sleep_for(5ms);
  r = w.call({{"do", "echo"}});
  ASSERT_TRUE(r.ok()) << r.to_json().dump();
  if (g > 0) {
    EXPECT_TRUE(wait_gone(g)) << "setsid grandchild " << g << " outlived its exited child";
  }
  // 3. The child hangs and is killed at the timeout.
  r = w.call({{"do", "spawn_setsid"}});
  ASSERT_TRUE(r.ok()) << r.message;
  g = grandchild_of(r, pidns);
  ASSERT_GT(g, 0);
  r = w.call({{"do", "hang"}}, 300ms);
  EXPECT_EQ(r.kind, Outcome::Hung);
  EXPECT_TRUE(wait_gone(g)) << "setsid grandchild " << g << " outlived its hung child";
}

TEST(SandboxConfinement, SetsidGrandchildDiesWithTheChildCgroup) {
  expect_setsid_grandchild_dies(confined(), "tree-kill:cgroup");
}

TEST(SandboxConfinement, SetsidGrandchildDiesWithTheChildPidNamespace) {
  Options o = confined();
  o.confinement.pid_namespace = true;
  expect_setsid_grandchild_dies(o, "pidns");
}

TEST(SandboxConfinement, CpuLimitKillsABurningChild) {
  Options o = confined(20s);
  o.confinement.cpu_seconds = 1;
  Child w = make_child(o);
  ASSERT_TRUE(w.call({{"do", "echo"}}).ok());
  REQUIRE_MECHANISM(w, "rlimits");
  Result r = w.call({{"do", "burn"}});
  EXPECT_EQ(r.kind, Outcome::Crashed) << r.message;
  EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << r.signal_name;
  EXPECT_LT(r.elapsed, 10s);
  EXPECT_TRUE(w.call({{"do", "echo"}}).ok());
}

TEST(SandboxConfinement, MemoryCgroupKillsAnOversizedChild) {
  Options o = confined(20s);
  o.confinement.memory_bytes = 64 << 20;
  Child w = make_child(o);
  ASSERT_TRUE(w.call({{"do", "echo"}}).ok());
  REQUIRE_MECHANISM(w, "cgroup-mem");
  Result r = w.call({{"do", "alloc"}, {"mb", 16}});
  ASSERT_TRUE(r.ok()) << r.message;  // small allocations work
  r = w.call({{"do", "alloc"}, {"mb", 512}});
  EXPECT_EQ(r.kind, Outcome::Crashed) << r.message;
  EXPECT_EQ(r.signal, SIGKILL) << r.signal_name;
}

TEST(SandboxConfinement, RlimitDataRefusesLargeAllocations) {
  // The stand-in for a memory cgroup where there is none (checked to leave CUDA working).
  Options o = confined(20s);
  o.confinement.data_bytes = 256 << 20;
  Child w = make_child(o);
  ASSERT_TRUE(w.call({{"do", "echo"}}).ok());
  REQUIRE_MECHANISM(w, "rlimit-data");
  Result r = w.call({{"do", "alloc"}, {"mb", 16}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.response["touched"], 1);
  r = w.call({{"do", "alloc"}, {"mb", 512}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_FALSE(r.response["success"].get<bool>()) << r.response.dump();
}

TEST(SandboxConfinement, NoCapabilitiesNoNewPrivsNoSignalsOut) {
  Child w = make_child(confined());
  Result r = w.call({{"do", "status"}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.response["NoNewPrivs"], "1");
  if (w.confinement().has("caps")) {
    EXPECT_EQ(r.response["CapEff"], "0000000000000000");
    EXPECT_EQ(r.response["CapBnd"], "0000000000000000");
  }
  REQUIRE_MECHANISM(w, "landlock-scope");
  r = w.call({{"do", "signal"}, {"pid", getpid()}, {"sig", 0}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_FALSE(r.response["success"].get<bool>()) << "the child could signal its parent";
  // Landlock denies ptrace-mode access to processes outside the sandbox: the parent's environment
  // and memory stay unreadable even to a child of the same uid.
  const std::string me = "/proc/" + std::to_string(getpid());
  for (const std::string& path : {me + "/environ", me + "/mem"}) {
    r = w.call({{"do", "read_file"}, {"path", path}});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_FALSE(r.response["success"].get<bool>()) << path << ": " << r.response.dump();
  }
  r = w.call({{"do", "read_file"}, {"path", "/proc/self/environ"}});
  EXPECT_TRUE(r.response["success"].get<bool>()) << r.response.dump();
}

// cuInit names its threads through /proc/self/task/<tid>/comm and fails (error 304) if it cannot.
void expect_thread_naming_works(Options o) {
  Child w = make_child(o);
  Result r = w.call({{"do", "name_thread"}});
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_tail;
  EXPECT_TRUE(r.response["success"].get<bool>()) << r.response.dump() << " " << w.confinement().summary();
  EXPECT_EQ(r.response["name"], "cudal2-named");
  r = w.call({{"do", "write_file"}, {"path", "/proc/self/comm"}, {"data", "renamed"}});
  EXPECT_TRUE(r.response["success"].get<bool>()) << r.response.dump();
  if (w.confinement().has("landlock")) {  // and nothing else in /proc is writable
    r = w.call({{"do", "write_file"}, {"path", "/proc/" + std::to_string(getpid()) + "/comm"}, {"data", "x"}});
    EXPECT_FALSE(r.response["success"].get<bool>()) << r.response.dump();
  }
}

TEST(SandboxConfinement, ThreadsCanBeNamedAsCudaDoes) { expect_thread_naming_works(confined()); }

TEST(SandboxConfinement, ThreadsCanBeNamedInAPidNamespace) {
  Options o = confined();
  o.confinement.pid_namespace = true;
  expect_thread_naming_works(o);
}

TEST(SandboxConfinement, BadScratchRootThrows) {
  Options o = confined();
  o.confinement.scratch_root = "/nonexistent/cudal2-scratch-root";
  Child w = make_child(o);
  EXPECT_THROW(w.call({{"do", "echo"}}), std::system_error);
  EXPECT_FALSE(w.running());
}

TEST(SandboxNames, SignalsAndOutcomes) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGBUS), "SIGBUS");
  EXPECT_EQ(signal_name(SIGRTMIN + 2), "SIGRTMIN+2");
  EXPECT_EQ(outcome_name(Outcome::ProtocolError), "protocol_error");
  EXPECT_EQ(outcome_name(Outcome::Hung), "hung");
}

}  // namespace
}  // namespace cudal2::sandbox
