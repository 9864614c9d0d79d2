// Methods runtime-nn / runtime-tn (src/baselines/runtime.cpp) without a GPU: known to the CLI,
// in bench's default methods but not among the baselines; a missing libcudal2_runtime, or one that finds no GPU, is a
// MethodUnsupported with a message saying which (the bench records the method as unsupported and goes on).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "baselines/baselines.hpp"
#include "measure/device.hpp"
#include "run_command.hpp"

#ifndef CUDAL2_CLI
#error "CUDAL2_CLI (path to the cudal2 binary) must be defined by the build"
#endif
#ifndef CUDAL2_RUNTIME_SO
#error "CUDAL2_RUNTIME_SO (path to libcudal2_runtime.so) must be defined by the build"
#endif

namespace cudal2 {
namespace {

using Outcome = test_util::CommandOutcome;

Outcome cli(const std::string& args) {
  return test_util::run_command(std::string("'") + CUDAL2_CLI + "' " + args + " 2>&1 </dev/null");
}

TEST(RuntimeMethod, KnownInTheDefaultsNotABaseline) {
  for (const std::string n :
       {"runtime-nn", "runtime-tn", "runtime-b-nn", "runtime-b-tn", "runtime-c-nn", "runtime-c-tn"}) {
    EXPECT_TRUE(is_baseline(n)) << n;
    const auto& baselines = baseline_names();
    EXPECT_EQ(std::find(baselines.begin(), baselines.end(), n), baselines.end()) << n;
    // The library under test is in bench's defaults; the other builds only when named.
    const auto& defaults = default_method_names();
    EXPECT_EQ(std::find(defaults.begin(), defaults.end(), n) != defaults.end(),
              n.find("-b-") == std::string::npos && n.find("-c-") == std::string::npos)
        << n;
    const auto r = make_baseline(n, Accum::F16);
    EXPECT_EQ(r->name(), n);
    EXPECT_EQ(r->layout(), n.ends_with("-nn") ? Layout::NN : Layout::TN);
    EXPECT_EQ(r->accum(), Accum::F16);
  }
  EXPECT_FALSE(is_baseline("runtime-d-nn"));
  try {
    make_baseline("runtime-xx", Accum::F32);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("runtime-nn, runtime-tn"), std::string::npos) << e.what();
  }
}

TEST(RuntimeMethod, CliAcceptsTheNameThenNeedsAGpu) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA GPU is present; this checks the no-GPU path";
  auto o = cli("bench --shape 64,64,64 --methods runtime-nn,cublaslt-autotune-nn");
  EXPECT_EQ(o.code, 1) << o.output;  // not an input error (2): the name is known
  EXPECT_NE(o.output.find("no CUDA GPU"), std::string::npos) << o.output;
  o = cli("bench --shape 64,64,64 --methods runtime-xx");
  EXPECT_EQ(o.code, 2) << o.output;
}

// prepare() in a child process (the library is looked up once per process). method runtime-nn
// reads CUDAL2_RUNTIME_LIB, runtime-b-nn CUDAL2_RUNTIME_LIB_B (unset where lib is null).
void prepare_and_report(const char* lib, const std::string& method = "runtime-nn") {
  const char* var = method == "runtime-nn" ? "CUDAL2_RUNTIME_LIB" : "CUDAL2_RUNTIME_LIB_B";
  if (lib)
    setenv(var, lib, 1);
  else
    unsetenv(var);
  auto r = make_baseline(method, Accum::F32);
  try {
    r->prepare({64, 64, 64}, Operands{}, nullptr);
  } catch (const MethodUnsupported& e) {
    std::fprintf(stderr, "MethodUnsupported: %s\n", e.what());
    std::exit(3);
  }
  std::exit(0);
}

TEST(RuntimeMethodDeathTest, MissingLibraryIsARunnerError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(prepare_and_report("/nonexistent/libcudal2_runtime.so"), ::testing::ExitedWithCode(3),
              "MethodUnsupported: runtime-nn: libcudal2_runtime not found .*CUDAL2_RUNTIME_LIB.*/nonexistent/");
}

TEST(RuntimeMethodDeathTest, SecondBuildNeedsItsVariableAndLoadsItsOwnFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // No fallback search for the comparison slots: an unset variable is named.
  EXPECT_EXIT(prepare_and_report(nullptr, "runtime-b-nn"), ::testing::ExitedWithCode(3),
              "MethodUnsupported: runtime-b-nn: runtime-b-\\*: set CUDAL2_RUNTIME_LIB_B");
  EXPECT_EXIT(prepare_and_report("/nonexistent/b/libcudal2_runtime.so", "runtime-b-nn"), ::testing::ExitedWithCode(3),
              "MethodUnsupported: runtime-b-nn: libcudal2_runtime not found .*/nonexistent/b/");
}

TEST(RuntimeMethodDeathTest, NoGpuIsARunnerError) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA GPU is present; this checks the no-GPU path";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(prepare_and_report(CUDAL2_RUNTIME_SO), ::testing::ExitedWithCode(3),
              "MethodUnsupported: runtime-nn: cudal2_create: CUDA error: no usable CUDA device");
}

}  // namespace
}  // namespace cudal2
