// The tuner survives candidates that fault, hang, write out of bounds or compute the wrong
// answer: each is recorded with its own kind, and the run goes on to the next candidate.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/device.hpp"
#include "store/store.hpp"
#include "test_paths.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/record.hpp"

namespace cudal2 {
namespace {

std::string read_file(const std::string& name) {
  std::ifstream in(cudal2::test::candidates_dir() + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Candidates, FailuresAreRecordedAndTheRunGoesOn) {
  const auto dir = std::filesystem::temp_directory_path() / ("cudal2_cand_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string naive = read_file("naive.cu");
  ASSERT_FALSE(naive.empty()) << "test candidates not found in " << cudal2::test::candidates_dir();
  EvalRequest req;
  req.local_gpu = query_gpu(0).name;  // where the failure rows the tuner writes itself go
  // Broken ones first: the good one last shows the run carried on past every failure.
  req.free_sources = {read_file("fault.cu"), read_file("hang.cu"), "#define CANDIDATE_OOB\n" + naive,
                      "#define CANDIDATE_WRONG\n" + naive, naive};
  req.shapes = {{96, 80, 64}, {33, 17, 40}};
  req.reps = 3;
  req.baselines = {"cublas-nn"};
  const std::string db_path = (dir / "t.db").string();
  req.judge_exe = cudal2::test::cli();
  req.timeout_s = 10;
  req.job_overhead_s = 30;
  req.batch = 5;  // all in one job: the fault kills it, and the retry one by one finds who did it
  const auto out = tuner::evaluate_and_record(req, db_path);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].status, FailureKind::IllegalAddress) << out[0].detail;
  // A fault is recorded only once a fresh runner reproduced it.
  EXPECT_NE(out[0].detail.find("reproduced in a fresh runner"), std::string::npos) << out[0].detail;
  EXPECT_EQ(out[1].status, FailureKind::Hang) << out[1].detail;
  EXPECT_EQ(out[2].status, FailureKind::OutOfBounds) << out[2].detail;
  EXPECT_EQ(out[3].status, FailureKind::WrongResult) << out[3].detail;
  EXPECT_EQ(out[4].status, Status::Ok) << out[4].detail;
  EXPECT_EQ(out[4].graph_us.size(), 2u);
  print_outcomes(out);

  // Every outcome is in the store under its kind, so a rerun would skip them all.
  auto db = store::Store::open(db_path);
  const std::string gpu = query_gpu(0).name;
  for (const auto& o : out)
    for (const auto& s : req.shapes)
      EXPECT_TRUE(db.has_measurement(o.spec_hash, {gpu, "f32", "nn", s.m, s.n, s.k, "offline"}))
          << o.status << " " << s.str();
  const auto top = db.top_specs({gpu, "f32", "nn", 96, 80, 64, "offline"}, "graph", 5);
  ASSERT_EQ(top.size(), 1u);  // only the good candidate has ok timings
  EXPECT_EQ(top[0].first, out[4].spec_hash);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cudal2
