// The adversarial suite (docs/threat-model.md): one adversarial candidate per attack class (tests/gpu/adversarial,
// table in its README.md), all evaluated in ONE evaluate_candidates call with the correct naive control last. Each must
// be recorded with a kind from its accepted set (never "ok" for a cheat; "ok" only for the confinement probes, which
// spoil their own output when an escape works), the run must go on to the next candidate, and no side effect may
// survive it: no file outside the scratch directory, no accepted connection, no leftover process, no visible secret.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "measure/device.hpp"
#include "test_paths.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/record.hpp"

namespace cudal2 {
namespace {

namespace fs = std::filesystem;
using Kinds = std::set<std::string>;

struct Case {
  const char* file;
  Kinds kinds;  // accepted failure kinds
};

// The kinds each class may be caught as (README.md has the same table, with the reasons).
std::vector<Case> cases() {
  const Kinds timing = {"wrong-result", "timing-mismatch", "inconsistent-time", "implausible-time"};
  const Kinds confined = {"ok"};  // a probe whose "ok" proves the sandbox held
  auto plus = [](Kinds k, std::initializer_list<const char*> more) {
    for (const char* m : more) k.insert(m);
    return k;
  };
  return {
      // Cheats that verification on every timed path must catch.
      {"stream_nonblocking.cu", timing},
      {"stream_legacy.cu", plus(timing, {"error"})},
      {"stream_per_thread.cu", timing},
      {"host_thread.cu", plus(timing, {"host-thread"})},
      {"capture_noop.cu", timing},
      {"host_counter.cu", timing},
      {"device_counter.cu", timing},
      {"poison_aware.cu", timing},
      // memoize.cu and the other memo_*.cu (reuse of earlier results): test_memoization_gpu.cpp, which
      // compares the times of those recorded ok with their honest twin's.
      {"call_gap.cu", {"wrong-result", "inconsistent-time", "timing-mismatch"}},
      {"no_launch.cu", {"wrong-result", "implausible-time"}},
      {"forged_reply.cu", {"protocol-error", "timing-mismatch", "wrong-result", "error"}},
      // Defence in depth: where the judge trusted the runner more than it must.
      {"capture_detached.cu", timing},  // a graph node off the timed path
      {"restart_timer.cu", timing},     // a timing event re-recorded: the single call's floor
      {"host_offstream.cu", timing},    // work hidden from one kind of request: per-kind clock check
      // Work in a context of its own: the context's driver thread is left in the runner
      // (host-thread, H200); gpu-disturbed where NVML cannot say whose the work is (never rewarded).
      {"hidden_context.cu", plus(timing, {"gpu-disturbed", "host-thread"})},
      {"predict_seed.cu", confined},  // reads every chain seed it can: "ok" = none was predicted
      // Wrong numbers.
      {"sampled_rows.cu", {"wrong-result"}},
      {"single_error.cu", {"wrong-result"}},
      {"nan_on_values.cu", {"wrong-result"}},
      {"tile_unwritten.cu", {"wrong-result"}},
      {"fp16_accum.cu", {"wrong-result"}},
      {"round_inputs.cu", {"wrong-result"}},
      {"read_past_end.cu", {"wrong-result", "illegal-address"}},
      // Memory outside the outputs.
      {"modify_a.cu", {"input-modified", "wrong-result"}},
      {"modify_b.cu", {"input-modified", "wrong-result"}},
      {"write_before_c.cu", {"out-of-bounds"}},
      {"workspace_overflow.cu", {"out-of-bounds"}},
      // Confinement probes (the side effects are checked below as well).
      {"write_outside.cu", confined},
      {"env_secret.cu", confined},
      {"proc_secret.cu", confined},
      {"connect_tcp.cu", confined},
      {"connect_unix.cu", confined},
      {"signal_probe.cu", confined},
      {"leftover_process.cu", {"host-thread"}},
      // Candidates that take the runner down: the failed job is retried one by one.
      {"illegal_address.cu", {"illegal-address"}},
      {"device_assert.cu", {"device-assert"}},
      {"device_hang.cu", {"hang"}},
      {"host_hang.cu", {"hang"}},
      {"exit_early.cu", {"exited"}},
      {"host_segv.cu", {"crash"}},
  };
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int listen_tcp(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET, sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    return -1;
  *port = ntohs(sa.sin_port);
  return fd;
}

// A path socket (abstract = false) or an abstract one (its name after a NUL byte).
int listen_unix(const std::string& name, bool abstract) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path + abstract, name.c_str(), sizeof sa.sun_path - 2);
  const auto len = socklen_t(sizeof(sa_family_t) + abstract + name.size() + !abstract);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 || listen(fd, 8) != 0) return -1;
  return fd;
}

bool accepted_any(int fd) {
  const int c = accept(fd, nullptr, nullptr);  // non-blocking: -1 with EAGAIN when nobody came
  if (c >= 0) close(c);
  return c >= 0;
}

std::set<pid_t> processes_named(const std::string& comm) {
  std::set<pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string c = slurp(e.path() / "comm");
    if (!c.empty() && c.back() == '\n') c.pop_back();
    if (c == comm) found.insert(std::stoi(name));
  }
  return found;
}

TEST(Adversarial, EveryClassIsCaughtAndNothingEscapes) {
  const std::string dir = cudal2::test::adversarial_dir();
  const std::string naive = slurp(cudal2::test::candidates_dir() + "/naive.cu");
  ASSERT_FALSE(naive.empty()) << "control candidate not found in " << cudal2::test::candidates_dir();
  const auto work = fs::temp_directory_path() / ("cudal2_adv_" + std::to_string(getpid()));
  fs::create_directories(work);

  // What the probes reach for: files, sockets, a secret, the test process itself.
  const std::string tag = "t" + std::to_string(getpid());
  const passwd* pw = getpwuid(getuid());
  std::vector<fs::path> escapes;
  for (const std::string d : {"/tmp", pw ? pw->pw_dir : "/root", "/var/tmp", "/dev/shm"})
    escapes.push_back(fs::path(d) / ("cudal2_adv_escape_" + tag));
  for (const auto& p : escapes) fs::remove(p);
  int port = 0;
  const int tcp = listen_tcp(&port);
  ASSERT_GE(tcp, 0) << std::strerror(errno);
  const std::string unix_path = "/tmp/cudal2_adv_" + tag + ".sock", abstract = "cudal2_adv_" + tag;
  fs::remove(unix_path);
  const int ux = listen_unix(unix_path, false), ab = listen_unix(abstract, true);
  ASSERT_GE(ux, 0) << std::strerror(errno);
  ASSERT_GE(ab, 0) << std::strerror(errno);
  const std::string secret = "adv-" + tag + "-" + std::to_string(std::random_device{}());
  setenv("CUDAL2_TEST_SECRET", secret.c_str(), 1);  // inherited unless the runner's environment is minimal
  // A bystander process holding the secret in its environment, as other processes on the machine do.
  std::string env_entry = "CUDAL2_TEST_SECRET=" + secret;
  char* bystander_argv[] = {const_cast<char*>("sleep"), const_cast<char*>("900"), nullptr};
  char* bystander_env[] = {env_entry.data(), nullptr};
  pid_t bystander = -1;
  ASSERT_EQ(posix_spawnp(&bystander, "sleep", nullptr, nullptr, bystander_argv, bystander_env), 0);
  const auto leftovers_before = processes_named("cudal2_leftover");

  const std::string prelude = "#define ADV_TAG \"" + tag + "\"\n#define ADV_PORT " + std::to_string(port) +
                              "\n#define ADV_UNIX_PATH \"" + unix_path + "\"\n#define ADV_UNIX_ABSTRACT \"" + abstract +
                              "\"\n#define ADV_TEST_PID " + std::to_string(getpid()) + "\n";
  const auto all = cases();
  EvalRequest req;
  req.local_gpu = query_gpu(0).name;  // where the failure rows the tuner writes itself go
  for (const auto& c : all) {
    const std::string src = slurp(dir + "/" + c.file);
    ASSERT_FALSE(src.empty()) << "adversarial candidate not found: " << dir << "/" << c.file;
    req.free_sources.push_back(prelude + src);
  }
  req.free_sources.push_back(naive);  // the control, last: the run went on past every failure
  req.shapes = {{256, 256, 256}, {96, 80, 64}, {128, 128, 4096}};  // large K shows precision downgrades
  req.reps = 10;
  req.baselines = {"cublas-nn"};
  req.judge_exe = cudal2::test::cli();
  req.timeout_s = 10;
  req.job_overhead_s = 30;
  req.batch = 4;
  const auto out = tuner::evaluate_and_record(req, (work / "adv.db").string());

  // Side effects first, and clean up whatever got through so a failure leaves no litter.
  for (const auto& p : escapes) {
    EXPECT_FALSE(fs::exists(p)) << "a candidate wrote " << p;
    fs::remove(p);
  }
  EXPECT_FALSE(accepted_any(tcp)) << "a candidate connected to 127.0.0.1:" << port;
  EXPECT_FALSE(accepted_any(ux)) << "a candidate connected to " << unix_path;
  EXPECT_FALSE(accepted_any(ab)) << "a candidate connected to the abstract socket @" << abstract;
  for (const int fd : {tcp, ux, ab}) close(fd);
  fs::remove(unix_path);
  for (const pid_t p : processes_named("cudal2_leftover")) {
    if (leftovers_before.count(p)) continue;
    ADD_FAILURE() << "a candidate left process " << p << " (cudal2_leftover) running";
    kill(p, SIGKILL);
  }
  kill(bystander, SIGKILL);
  waitpid(bystander, nullptr, 0);
  unsetenv("CUDAL2_TEST_SECRET");

  // The verdicts.
  ASSERT_EQ(out.size(), all.size() + 1);
  std::printf("\n%-24s %-18s %-7s %s\n", "candidate", "status", "verdict", "accepted kinds");
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string status(to_string(out[i].status));
    const bool pass = all[i].kinds.count(status) > 0;
    std::string kinds;
    for (const auto& k : all[i].kinds) kinds += (kinds.empty() ? "" : " | ") + k;
    std::printf("%-24s %-18s %-7s %s\n", all[i].file, status.c_str(), pass ? "caught" : "MISSED", kinds.c_str());
    EXPECT_TRUE(pass) << all[i].file << ": " << status << " not in {" << kinds << "}: " << out[i].detail;
  }
  std::printf("%-24s %-18s %-7s %s\n", "naive.cu (control)", std::string(to_string(out.back().status)).c_str(),
              out.back().status == Status::Ok ? "ok" : "BROKEN", "ok");
  EXPECT_EQ(out.back().status, Status::Ok) << out.back().detail;
  EXPECT_EQ(out.back().graph_us.size(), req.shapes.size());
  print_outcomes(out);
  fs::remove_all(work);
}

}  // namespace
}  // namespace cudal2
