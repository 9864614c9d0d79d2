// The process sandbox against a worker that fails in every way a generated kernel can
// (src/sandbox/test_worker.cpp, built beside this binary).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string worker_path() {
  const auto path = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "cudal2_sandbox_test_worker";
  EXPECT_TRUE(std::filesystem::exists(path)) << path << " is missing; build target cudal2_sandbox_test_worker";
  return path.string();
}

Worker make_worker(Options options = {.timeout = 5s}) { return Worker({worker_path()}, options); }

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

void expect_echo_works(Worker& w, int restarts) {
  Result r = w.call({{"do", "echo"}, {"payload", "again"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message << "\n" << r.stderr_tail;
  EXPECT_EQ(r.response["echo"], "again");
  EXPECT_EQ(w.restarts(), restarts);
}

TEST(SandboxWorker, EchoRoundTrip) {
  Worker w = make_worker();
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
  EXPECT_EQ(w.pid(), r.pid);  // the same worker serves every call until something fails
}

TEST(SandboxWorker, LargeMessagesArriveWhole) {
  Worker w = make_worker();
  const std::string big(3 << 20, 'x');  // far beyond a pipe's buffer: partial writes and reads
  Result r = w.call({{"do", "echo"}, {"payload", big}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["echo"], big);
}

TEST(SandboxWorker, AbortIsCrashedWithSigabrtAndKeepsStderr) {
  Worker w = make_worker();
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

TEST(SandboxWorker, SegfaultIsCrashedWithSigsegv) {
  Worker w = make_worker();
  expect_echo_works(w, 0);
  Result r = w.call({{"do", "segfault"}});
  EXPECT_EQ(r.kind, Outcome::Crashed) << r.message;
  EXPECT_EQ(r.signal_name, "SIGSEGV");
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxWorker, HangIsKilledAtTheTimeoutWithItsChildren) {
  Worker w = make_worker();
  expect_echo_works(w, 0);  // started, so the timeout below measures only the hang
  Result r = w.call({{"do", "hang"}, {"spawn_child", true}}, 300ms);
  EXPECT_EQ(r.kind, Outcome::Hung) << r.message;
  EXPECT_GE(r.elapsed, 300ms);
  EXPECT_LT(r.elapsed, 1300ms);
  EXPECT_TRUE(reaped(r.pid));
  // The grandchild shared the worker's process group, so the group kill took it too.
  const auto at = r.stderr_tail.find("grandchild ");
  ASSERT_NE(at, std::string::npos) << r.stderr_tail;
  const pid_t grandchild = std::stoi(r.stderr_tail.substr(at + 11));
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (!process_gone(grandchild) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(process_gone(grandchild));
  expect_echo_works(w, 1);
}

TEST(SandboxWorker, ExitBeforeAnsweringReportsTheCode) {
  Worker w = make_worker();
  Result r = w.call({{"do", "exit"}, {"code", 3}});
  EXPECT_EQ(r.kind, Outcome::Exited) << r.message;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxWorker, GarbageLineIsProtocolError) {
  Worker w = make_worker();
  Result r = w.call({{"do", "garbage"}});
  EXPECT_EQ(r.kind, Outcome::ProtocolError) << r.message;
  EXPECT_NE(r.message.find("this is not json"), std::string::npos) << r.message;
  EXPECT_TRUE(reaped(r.pid));
  expect_echo_works(w, 1);
}

TEST(SandboxWorker, StdoutNoiseGoesToStderr) {
  Worker w = make_worker();
  Result r = w.call({{"do", "print_stdout"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], true);
  for (const char* noise : {"printf noise", "cout noise", "write(1) noise"})
    EXPECT_NE(r.stderr_tail.find(noise), std::string::npos) << noise << " not in: " << r.stderr_tail;
  expect_echo_works(w, 0);
}

TEST(SandboxWorker, HandlerErrorsAreAnswersNotFailures) {
  Worker w = make_worker();
  Result r = w.call({{"do", "throw"}, {"what", "kernel did not compile"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], false);
  EXPECT_EQ(r.response["error"], "kernel did not compile");
  r = w.call({{"do", "not_object"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["ok"], false);
  expect_echo_works(w, 0);  // the same worker goes on
}

TEST(SandboxWorker, EveryFailureRestartsOnTheNextCall) {
  Worker w = make_worker();
  const json failures[] = {{{"do", "abort"}}, {{"do", "exit"}, {"code", 0}}, {{"do", "garbage"}}, {{"do", "segfault"}}};
  int restarts = 0;
  for (const json& req : failures) {
    EXPECT_FALSE(w.call(req).ok()) << req;
    expect_echo_works(w, ++restarts);
  }
  EXPECT_EQ(w.restarts(), 4);
}

TEST(SandboxWorker, ExtraAnswerLinesReplaceTheWorker) {
  // Several lines for one request: the first is the answer, and a worker that no longer agrees
  // with us about which answer belongs to which request is replaced before the next one.
  Worker w = make_worker();
  Result r = w.call({{"do", "extra_line"}});
  ASSERT_EQ(r.kind, Outcome::Ok) << r.message;
  EXPECT_EQ(r.response["first"], true);
  expect_echo_works(w, 1);
}

TEST(SandboxWorker, WorkerKilledWhileIdleIsReplaced) {
  Worker w = make_worker();
  expect_echo_works(w, 0);
  const pid_t pid = w.pid();
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);  // dead, not reaped
  EXPECT_FALSE(w.running());
  expect_echo_works(w, 1);
  EXPECT_TRUE(reaped(pid));
}

TEST(SandboxWorker, WorkerThatStopsReadingHangsWithoutSigpipe) {
  // Our write meets a pipe with no reader: EPIPE, and SIGPIPE would kill this test process.
  Worker w({worker_path(), "--no-read"}, {.timeout = 5s});
  w.start();
  std::this_thread::sleep_for(100ms);
  Result r = w.call({{"do", "echo"}}, 300ms);
  EXPECT_EQ(r.kind, Outcome::Hung) << r.message;
  EXPECT_TRUE(reaped(r.pid));
}

TEST(SandboxWorker, MissingExecutableThrows) {
  Worker w({"/nonexistent/cudal2-worker"});
  EXPECT_THROW(w.call({{"do", "echo"}}), std::system_error);
  EXPECT_FALSE(w.running());
}

TEST(SandboxWorker, DestructorLetsAWorkerExitAndKillsOneThatLingers) {
  pid_t clean = -1, lingering = -1;
  {
    Worker w = make_worker();
    expect_echo_works(w, 0);
    clean = w.pid();
  }
  EXPECT_TRUE(reaped(clean));
  const auto t0 = std::chrono::steady_clock::now();
  {
    Worker w = make_worker({.timeout = 5s, .shutdown_grace = 100ms});
    ASSERT_TRUE(w.call({{"do", "linger"}}).ok());
    lingering = w.pid();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(reaped(lingering));
}

TEST(SandboxWorker, MovedWorkerKeepsItsProcess) {
  Worker a = make_worker();
  expect_echo_works(a, 0);
  const pid_t pid = a.pid();
  Worker b = std::move(a);
  EXPECT_EQ(b.pid(), pid);
  expect_echo_works(b, 0);
}

TEST(SandboxResult, ToJsonForFailureRecords) {
  Worker w = make_worker();
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

TEST(SandboxNames, SignalsAndOutcomes) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGBUS), "SIGBUS");
  EXPECT_EQ(signal_name(SIGRTMIN + 2), "SIGRTMIN+2");
  EXPECT_EQ(outcome_name(Outcome::ProtocolError), "protocol_error");
  EXPECT_EQ(outcome_name(Outcome::Hung), "hung");
}

}  // namespace
}  // namespace cudal2::sandbox
