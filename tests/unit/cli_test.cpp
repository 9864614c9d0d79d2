// The cudal2 binary: bad input is one error line and exit code 2; no GPU is one line and exit 1.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "eval/device.hpp"

namespace {

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

}  // namespace

namespace {

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
  o = run_cli("tune --search random");
  EXPECT_EQ(o.code, 2) << o.output;
}

// The worker speaks one JSON object per line; without a GPU it answers with the reason rather
// than dying, so the tuner records it and goes on.
TEST(Cli, WorkerAnswersJobsWithoutAGpu) {
  if (cudal2::gpu_available()) GTEST_SKIP() << "a GPU is present";
  const auto o = run_cli(
      "worker "
      "<<'EOF'\n{\"op\":\"eval\",\"shapes\":[[64,64,64]],\"modes\":[\"offline\"],\"spec\":\"x\",\"artifact\":\"y\","
      "\"baselines\":[]}\n{\"op\":\"nope\"}\nEOF");
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("\"ok\":false"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("unknown op"), std::string::npos) << o.output;
}

}  // namespace
