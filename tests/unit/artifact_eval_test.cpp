// `cudal2 eval --artifact PATH.so[@SPEC]`: a prebuilt kernel goes to the judge as it is. The
// argument's parsing (path, spec and knobs, refusals), and the request's path through
// evaluate_candidates with a scripted judge (CPU only): nothing is compiled, the job names the
// artifact and the spec text with its runtime knobs, and the candidate is named by the artifact's
// bytes and spec, so two builds of one spec are two candidates.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/artifact_arg.hpp"
#include "tuner/evaluate.hpp"

namespace cudal2 {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = "wgmma nn f32 tile=128x256x64 cluster=2x1 stages=4 | raster=along_m swizzle=8 splits=2";

const char* kOk =
    R"({"ok":true,"gpu":"g","shapes":[{"m":64,"n":64,"k":64,"methods":[{"method":"candidate-0","status":"ok","failure":"","reason":"","rel_err":0.0002,"timing":{"offline":{"graph":{"median":2.5,"p10":2.4,"p90":2.6,"min":2.3,"n":20}}}}]}]})";
const char* kHealthy = R"({"ok":true,"healthy":true,"reason":"","gpu":"g","launches":100,"median_us":5,"max_us":6})";

struct Recorded : EvalSink {
  std::vector<SpecRecord> specs;
  std::vector<BuildRecord> builds;
  std::vector<MeasurementRecord> rows;
  void spec(const SpecRecord& s) override { specs.push_back(s); }
  void build(const BuildRecord& b) override { builds.push_back(b); }
  void measurement(const MeasurementRecord& m) override { rows.push_back(m); }
};

class ArtifactEval : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cudal2_artifact_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name) << bytes;
    return dir_ / name;
  }
  // A judge that keeps every eval job it is sent (one JSON line each) and answers it as ok.
  std::string judge() const {
    const auto p = dir_ / "judge.sh";
    std::ofstream(p) << "#!/bin/sh\nwhile read line; do\n  case \"$line\" in\n"
                     << "  *'\"op\":\"canary\"'*) printf '%s\\n' '" << kHealthy << "' ;;\n"
                     << "  *) printf '%s\\n' \"$line\" >> '" << (dir_ / "jobs.jsonl").string() << "'\n"
                     << "     printf '%s\\n' '" << kOk << "' ;;\n  esac\ndone\n";
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  std::vector<nlohmann::json> jobs() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ / "jobs.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  CandidateOutcome run(const EvalRequest::Prebuilt& a, Layout free_layout = Layout::NN) {
    EvalRequest req;
    req.artifacts = {a};
    req.free_layout = free_layout;
    req.shapes = {{64, 64, 64}};
    req.timers = {true, false, false, false};
    req.baselines = {};
    req.judge_exe = judge();
    req.timeout_s = 5;
    req.job_overhead_s = 5;
    req.progress = false;
    const auto out = evaluate_candidates(req, sink_);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? CandidateOutcome{} : out[0];
  }
  fs::path dir_;
  Recorded sink_;
};

TEST_F(ArtifactEval, TheArgumentNamesTheFileAndTheSpecWithItsKnobs) {
  const auto so = file("k.so", "bytes");
  const auto a = cli::parse_artifact_arg(so.string() + "@" + kSpec);
  EXPECT_EQ(a.path, so.string());
  ASSERT_TRUE(a.spec.has_value());
  EXPECT_EQ(a.spec->text(), parse_spec(kSpec).text());
  EXPECT_NE(a.spec->text().find("splits=2"), std::string::npos) << a.spec->text();
  EXPECT_FALSE(cli::parse_artifact_arg(so.string()).spec.has_value());
}

TEST_F(ArtifactEval, TheArgumentIsRefusedForAMissingFileABadSpecOrASpecWithoutArtifact) {
  const auto so = file("k.so", "bytes");
  EXPECT_THROW(cli::parse_artifact_arg((dir_ / "missing.so").string()), InputError);
  EXPECT_THROW(cli::parse_artifact_arg(dir_.string()), InputError);  // a directory
  EXPECT_THROW(cli::parse_artifact_arg(so.string() + "@wgmma nn f32 tile=nonsense"), InputError);
  EXPECT_NO_THROW(parse_spec("cublaslt nn f32"));  // a valid spec, refused for its family:
  EXPECT_THROW(cli::parse_artifact_arg(so.string() + "@cublaslt nn f32"), InputError);
}

TEST_F(ArtifactEval, ThePrebuiltArtifactIsJudgedWithItsKnobsAndNothingIsCompiled) {
  // An ELF file's bytes, NUL included: an artifact is binary, not text.
  const auto so = file("k.so", std::string("\x7f"
                                           "ELF\2\1\1\0\0\0 not compiled here",
                                           26));
  const auto out = run(cli::parse_artifact_arg(so.string() + "@" + kSpec));
  EXPECT_EQ(out.status, Status::Ok) << out.detail;
  EXPECT_DOUBLE_EQ(out.graph_us.at("64x64x64"), 2.5);
  ASSERT_EQ(sink_.builds.size(), 1u);
  EXPECT_EQ(sink_.builds[0].artifact_path, so.string());
  EXPECT_EQ(sink_.builds[0].source_hash, "prebuilt");
  EXPECT_DOUBLE_EQ(sink_.builds[0].compile_seconds, 0);
  const auto sent = jobs();
  ASSERT_EQ(sent.size(), 1u);
  const auto& c = sent[0].at("candidates").at(0);
  EXPECT_EQ(c.at("artifact").get<std::string>(), so.string());
  EXPECT_EQ(c.at("spec").get<std::string>(), parse_spec(kSpec).text());  // the runner's knobs
  ASSERT_EQ(sink_.specs.size(), 1u);
  EXPECT_EQ(sink_.specs[0].family, "artifact");
  EXPECT_EQ(out.spec_text.rfind("artifact ", 0), 0u) << out.spec_text;
  ASSERT_FALSE(sink_.rows.empty());
  EXPECT_EQ(sink_.rows[0].spec_hash, out.spec_hash);
  EXPECT_EQ(sink_.rows[0].layout, "nn");
}

TEST_F(ArtifactEval, TwoBuildsOfOneSpecAreTwoCandidates) {
  const auto a = run(cli::parse_artifact_arg(file("a.so", "build A").string() + "@" + kSpec));
  const auto b = run(cli::parse_artifact_arg(file("b.so", "build B").string() + "@" + kSpec));
  const auto again = run(cli::parse_artifact_arg(file("c.so", "build A").string() + "@" + kSpec));
  EXPECT_NE(a.spec_hash, b.spec_hash);
  EXPECT_EQ(a.spec_hash, again.spec_hash);  // the bytes and the spec, not the file's name
}

TEST_F(ArtifactEval, WithoutASpecTheArtifactRunsInTheRequestsLayout) {
  run(cli::parse_artifact_arg(file("k.so", "bytes").string()), Layout::TN);
  const auto sent = jobs();
  ASSERT_EQ(sent.size(), 1u);
  const auto& c = sent[0].at("candidates").at(0);
  EXPECT_EQ(c.at("spec").get<std::string>(), "");
  EXPECT_EQ(c.at("layout").get<std::string>(), "tn");
}

}  // namespace
}  // namespace cudal2
