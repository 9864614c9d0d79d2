// print_runtime_against_baselines: the table the README's main command ends with, one runtime
// method against every baseline of the run by shape class, headed by the GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/stats.hpp"
#include "judge/bench.hpp"

namespace cudal2 {
namespace {

MethodResult timed(const std::string& name, bool baseline, double graph_us) {
  MethodResult m;
  m.method = name;
  m.baseline = baseline;
  m.timing[Mode::Offline][0] = summarize({graph_us});
  return m;
}

MethodFactory factory(const std::string& name, bool baseline) {
  MethodFactory f;
  f.name = name;
  f.baseline = baseline;
  return f;
}

// The line of `out` that starts with `label`, or "" when none does.
std::string line_of(const std::string& out, const std::string& label) {
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find('\n', at);
    const std::string line = out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(label + " ", 0) == 0) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

TEST(BenchReport, RuntimeAgainstEveryBaselineByClass) {
  BenchOptions opt;
  opt.methods = {factory("cublas-nn", true), factory("cublaslt-autotune-tn", true), factory("runtime-tn", false)};
  BenchReport r;
  r.gpu = "NVIDIA H200";
  // A small shape and a large one: the runtime 2x faster than cuBLAS on both, as fast as
  // auto-tuning on the small one and half its speed on the large one.
  ShapeResult small;
  small.shape = Shape{64, 64, 64};
  small.methods = {timed("cublas-nn", true, 10), timed("cublaslt-autotune-tn", true, 5), timed("runtime-tn", false, 5)};
  ShapeResult large;
  large.shape = Shape{8192, 8192, 8192};
  large.methods = {timed("cublas-nn", true, 2000), timed("cublaslt-autotune-tn", true, 500),
                   timed("runtime-tn", false, 1000)};
  r.shapes = {small, large};

  testing::internal::CaptureStdout();
  print_runtime_against_baselines(r, opt);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("NVIDIA H200, offline mode: runtime-tn against each baseline"), std::string::npos) << out;
  // small, skinny, medium, large, all, shapes
  EXPECT_EQ(line_of(out, "cublas-nn"), "cublas-nn                 2.000        -        -    2.000    2.000       2")
      << out;
  EXPECT_EQ(line_of(out, "cublaslt-autotune-tn"),
            "cublaslt-autotune-tn      1.000        -        -    0.500    0.707       2")
      << out;
  EXPECT_EQ(line_of(out, "best baseline"),
            "best baseline             1.000        -        -    0.500    0.707       2")
      << out;
  EXPECT_EQ(line_of(out, "runtime-tn"), "") << "the runtime is the subject, not a row";
}

// Under the table: the shapes where the runtime is behind the best baseline by more than the
// rounds' spread (its paired interval wholly below 0.97), and none where the rounds disagree.
TEST(BenchReport, RuntimeBehindBeyondTheRoundsSpread) {
  BenchOptions opt;
  opt.methods = {factory("cublaslt-autotune-tn", true), factory("runtime-tn", false)};
  BenchReport r;
  r.gpu = "NVIDIA H200";
  auto rounds = [](const std::string& name, bool baseline, const std::vector<double>& us) {
    MethodResult m = timed(name, baseline, percentile(us, 50));
    m.samples[Mode::Offline][0] = us;
    return m;
  };
  const std::vector<double> base(10, 100.0);
  ShapeResult behind;  // 5-7% behind in every round
  behind.shape = Shape{2048, 64, 4096};
  behind.methods = {rounds("cublaslt-autotune-tn", true, base),
                    rounds("runtime-tn", false, {105, 106, 107, 105, 106, 105, 107, 106, 105, 106})};
  ShapeResult noisy;  // a median ratio of 0.96, but rounds from 0.91 to 1.05
  noisy.shape = Shape{512, 1024, 8192};
  noisy.methods = {rounds("cublaslt-autotune-tn", true, base),
                   rounds("runtime-tn", false, {110, 95, 104, 108, 96, 103, 106, 98, 104, 105})};
  r.shapes = {behind, noisy};
  testing::internal::CaptureStdout();
  print_runtime_against_baselines(r, opt);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("(paired interval below 0.97): 1 of 2: 2048x64x4096 (0.935-0.952)"), std::string::npos) << out;
  EXPECT_EQ(out.find("512x1024x8192"), std::string::npos) << out;
}

TEST(BenchReport, NoTableWithoutARuntimeMethod) {
  BenchOptions opt;
  opt.methods = {factory("cublas-nn", true), factory("k-0123456789abcdef", false)};
  BenchReport r;
  testing::internal::CaptureStdout();
  print_runtime_against_baselines(r, opt);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace cudal2
