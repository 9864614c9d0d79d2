// The cudal2 binary (CUDAL2_CLI): bad input gives exit code 2 and exactly one
// "cudal2: error:" line; no GPU gives exit code 1 and one line naming the reason.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <fstream>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "measure/device.hpp"

#ifndef CUDAL2_CLI
#error "CUDAL2_CLI (path to the cudal2 binary) must be defined by the build"
#endif

namespace {

struct Outcome {
  int code = -1;  // exit status, or -1 if it did not exit normally
  std::string output;
};

Outcome run_cli(const std::string& args) {
  const std::string cmd = "'" + std::string(CUDAL2_CLI) + "' " + args + " 2>&1 </dev/null";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.output.append(buf.data(), n);
  const int status = pclose(p);
  if (status != -1 && WIFEXITED(status)) o.code = WEXITSTATUS(status);
  return o;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

bool is_one_line(const std::string& s) { return !s.empty() && s.back() == '\n' && count_lines(s) == 1; }

TEST(CliBinary, Exists) {
  FILE* f = std::fopen(CUDAL2_CLI, "rb");
  ASSERT_NE(f, nullptr) << CUDAL2_CLI;
  std::fclose(f);
}

struct BadCase {
  const char* args;
  const char* mentions;  // something the one line must name
};

class CliBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliBadInput, ExitsTwoWithOneErrorLine) {
  const auto& c = GetParam();
  const auto o = run_cli(c.args);
  EXPECT_EQ(o.code, 2) << c.args << "\n" << o.output;
  EXPECT_TRUE(is_one_line(o.output)) << c.args << ": " << count_lines(o.output) << " lines:\n" << o.output;
  EXPECT_EQ(o.output.rfind("cudal2: error:", 0), 0u) << c.args << "\n" << o.output;
  EXPECT_NE(o.output.find(c.mentions), std::string::npos) << c.args << "\n" << o.output;
}

INSTANTIATE_TEST_SUITE_P(Required, CliBadInput,
                         ::testing::Values(BadCase{"bench --shape 0,1,1", "M=0"},                             //
                                           BadCase{"bench --shape 1,2", "1,2"},                               //
                                           BadCase{"bench --grid nope", "nope"},                              //
                                           BadCase{"bench --shapes /nonexistent/file", "/nonexistent/file"},  //
                                           BadCase{"bench --methods nope", "nope"},                           //
                                           BadCase{"bench --reps 0", "--reps"},                               //
                                           BadCase{"bench --shard 5/2", "5/2"},                               //
                                           BadCase{"bench --resume", "--csv"},                                //
                                           BadCase{"bench --bogus-flag", "--bogus-flag"}));

INSTANTIATE_TEST_SUITE_P(More, CliBadInput,
                         ::testing::Values(BadCase{"bench --shape 4,abc,4", "N='abc'"},                   //
                                           BadCase{"bench --shape 64,64,64 --shape 1,1,-1", "K=-1"},      //
                                           BadCase{"bench --shape 2147483648,1,1", "too large"},          //
                                           BadCase{"bench --reps -3", "--reps"},                          //
                                           BadCase{"bench --reps abc", "--reps"},                         //
                                           BadCase{"bench --qps 0", "--qps"},                             //
                                           BadCase{"bench --mode sometimes", "sometimes"},                //
                                           BadCase{"bench --methods cublas-nn,nope", "nope"},             //
                                           BadCase{"bench --methods ,", "--methods"},                     //
                                           BadCase{"bench --shard 1/0", "1/0"},                           //
                                           BadCase{"bench --shard x", "'x'"},                             //
                                           BadCase{"bench --shape", "--shape"},                           //
                                           BadCase{"bench --timers graph,fast", "unknown timer 'fast'"},  //
                                           BadCase{"bench --timers ,", "--timers names no timer"},        //
                                           BadCase{"bench --methods cublas-nn --reference cublas-tn",
                                                   "--reference 'cublas-tn' is not among the methods run"},    //
                                           BadCase{"eval --spec x --timers wall", "unknown timer 'wall'"},     //
                                           BadCase{"eval --spec x --canary-seconds 0", "--canary-seconds 0"},  //
                                           BadCase{"tune --shape 64,64,64 --attempts 0", "--attempts 0"},      //
                                           BadCase{"frobnicate", "frobnicate"},                                //
                                           BadCase{"", "subcommand"}));

// The judge's old name and the tune option that named a stand-in for it are gone: a script or
// stand-in still using them must fail loudly rather than reach a hidden alias.
INSTANTIATE_TEST_SUITE_P(RetiredNames, CliBadInput,
                         ::testing::Values(BadCase{"worker", "worker"},  //
                                           BadCase{"tune --shape 64,64,64 --worker /bin/true", "--worker"}));

TEST(CliBadInputFile, ErrorInShapesFileNamesFileAndLine) {
  char tmpl[] = "/tmp/cudal2_test_cli_XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const std::string content = "# shapes\n64,64,64\n64,0,64\n";
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  close(fd);
  const auto o = run_cli(std::string("bench --shapes ") + tmpl);
  std::remove(tmpl);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_TRUE(is_one_line(o.output)) << o.output;
  EXPECT_EQ(o.output.rfind("cudal2: error:", 0), 0u) << o.output;
  EXPECT_NE(o.output.find(std::string(tmpl) + ":3"), std::string::npos) << o.output;
}

// eval --spec-list: "M,N,K SPEC" lines; a bad one is named by file and line, before any GPU work,
// and a good list gets as far as the GPU check.
TEST(CliBadInputFile, ErrorInSpecListNamesFileAndLine) {
  char tmpl[] = "/tmp/cudal2_test_cli_XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const std::string good = "# confirmation\n64,64,64 tiny nn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1\n";
  const std::string content =
      good + "64,64,64 tiny nn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1\n128,64 tiny nn f32\n";
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  close(fd);
  auto o = run_cli(std::string("eval --spec-list ") + tmpl);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_TRUE(is_one_line(o.output)) << o.output;
  EXPECT_NE(o.output.find(std::string(tmpl) + ":4"), std::string::npos) << o.output;
  o = run_cli(std::string("eval --spec-list ") + tmpl + " --spec 'tiny nn f32'");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("--spec-list names its own shapes and specs"), std::string::npos) << o.output;
  std::ofstream(tmpl) << good;
  o = run_cli(std::string("eval --spec-list ") + tmpl + " --db " + tmpl + ".db");
  std::remove(tmpl);
  std::remove((std::string(tmpl) + ".db").c_str());
  if (!cudal2::gpu_available()) {
    EXPECT_EQ(o.code, 1) << o.output;
    EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
  }
  o = run_cli("eval --spec-list /nonexistent/list");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("cannot read spec list '/nonexistent/list'"), std::string::npos) << o.output;
}

TEST(CliNoGpu, BenchExitsOneWithOneLine) {
  if (cudal2::gpu_available()) GTEST_SKIP() << "a CUDA GPU is present; this checks the no-GPU path";
  const auto o = run_cli("bench --shape 64,64,64");
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_TRUE(is_one_line(o.output)) << count_lines(o.output) << " lines:\n" << o.output;
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("cudal2: error:"), std::string::npos) << "no GPU is not an input error: " << o.output;
}

TEST(CliNoGpu, TuneSearchRlGetsAsFarAsTheGpuCheck) {
  // `tune --search rl` used to stop at once: the CLI handed every policy the llm proposer's store
  // option, which rl refuses ("unknown rl policy option 'db'").
  if (cudal2::gpu_available()) GTEST_SKIP() << "a CUDA GPU is present; this checks the no-GPU path";
  const std::string db = "/tmp/cudal2_cli_rl_" + std::to_string(getpid()) + ".db";
  const auto o = run_cli("tune --search rl --shape 64,64,64 --families tiny --budget 1 --db " + db);
  std::remove(db.c_str());
  EXPECT_EQ(o.output.find("unknown rl policy option"), std::string::npos) << o.output;
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
}

TEST(CliNoGpu, InputErrorsComeBeforeTheGpuCheck) {
  // Bad input is reported as such (exit 2) whether or not a GPU is present.
  const auto o = run_cli("bench --shape 64,64,64 --reps 0");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_EQ(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
}

TEST(CliHelp, ExitsZeroAndListsOptions) {
  const auto o = run_cli("bench --help");
  EXPECT_EQ(o.code, 0) << o.output;
  for (const char* opt : {"--shape", "--shapes", "--grid", "--methods", "--reps", "--csv", "--resume", "--shard"})
    EXPECT_NE(o.output.find(opt), std::string::npos) << opt;
}

}  // namespace

// Merged from cli_test.cpp (one unit-test file per area); its own namespace keeps its helpers
// apart from this file's.
namespace cli_test_cases {

struct Outcome {
  int code = -1;
  std::string output;
};

Outcome run_cli(const std::string& args) {
  const std::string cmd = std::string(CUDAL2_CLI) + " " + args + " 2>&1";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) o.output += buf.data();
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class BadInput : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(BadInput, OneErrorLineAndExitCode2) {
  const auto [args, expect] = GetParam();
  const auto o = run_cli(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
  EXPECT_EQ(lines(o.output), 1) << o.output;
  EXPECT_EQ(o.output.rfind("cudal2: error:", 0), 0u) << o.output;
  EXPECT_NE(o.output.find(expect), std::string::npos) << o.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInput,
    ::testing::Values(std::make_pair("bench --shape 0,1,1", "M=0"), std::make_pair("bench --shape 1,2", "three sizes"),
                      std::make_pair("bench --shape 5,x,5", "N='x'"),
                      std::make_pair("bench --grid nope", "unknown grid"),
                      std::make_pair("bench --shapes /nonexistent/file", "cannot read"),
                      std::make_pair("bench --methods nope", "unknown method 'nope'"),
                      std::make_pair("bench --reps 0", "--reps"), std::make_pair("bench --shard 5/2", "bad shard"),
                      std::make_pair("bench --resume", "--resume needs --csv"),
                      std::make_pair("bench --mode sometimes", "unknown mode"),
                      std::make_pair("bench --bogus-flag", "bogus-flag"), std::make_pair("frobnicate", "frobnicate")));

TEST(Cli, NoGpuIsOneLineAndExitCode1) {
  if (cudal2::gpu_available()) GTEST_SKIP() << "a GPU is present";
  const auto o = run_cli("bench --shape 64,64,64");
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_EQ(lines(o.output), 1) << o.output;
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
}

TEST(Cli, HelpListsTheBaselines) {
  const auto o = run_cli("bench --help");
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.output.find("cublaslt-autotune-tn"), std::string::npos);
  EXPECT_NE(o.output.find("--fp16-accum"), std::string::npos);
}

}  // namespace cli_test_cases

namespace cli_test_cases {

TEST(Cli, EvalAndShowInputErrors) {
  auto o = run_cli("eval");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.output.find("--spec"), std::string::npos);
  o = run_cli("eval --spec 'sm90_cutlass nn f32 tile=64x64x64'");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.output.find("cooperative mainloop needs tile M >= 128"), std::string::npos) << o.output;
  const std::string junk = ::testing::TempDir() + "cudal2_cli_not_a_db";
  std::FILE* f = std::fopen(junk.c_str(), "w");
  std::fputs("this is not a database, it is a text file of some length\n", f);
  std::fclose(f);
  o = run_cli("show --db " + junk);
  std::remove(junk.c_str());
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("not a cudal2 database"), std::string::npos) << o.output;
  o = run_cli("tune --search annealing");  // random is a policy now (src/search/random.cpp)
  EXPECT_EQ(o.code, 2) << o.output;
}

// The judge speaks one JSON object per line; without a GPU it answers with the reason rather
// than dying, so the tuner records it and goes on.
TEST(Cli, JudgeAnswersJobsWithoutAGpu) {
  if (cudal2::gpu_available()) GTEST_SKIP() << "a GPU is present";
  const auto o = run_cli(
      "judge "
      "<<'EOF'\n{\"op\":\"eval\",\"shapes\":[[64,64,64]],\"modes\":[\"offline\"],"
      "\"candidates\":[{\"name\":\"k-1\",\"spec\":\"\",\"artifact\":\"y\"}],\"baselines\":[]}\n"
      "{\"op\":\"nope\"}\n{\"op\":\"eval\",\"spec\":\"x\"}\nEOF");
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("\"ok\":false"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("unknown op"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("malformed eval request: candidates is missing"), std::string::npos) << o.output;
}

}  // namespace cli_test_cases
