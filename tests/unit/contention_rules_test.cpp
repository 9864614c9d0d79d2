// The contention monitor's rules (judge/contention_rules.hpp) on scripted probe times and NVML
// views: what is clean, what is another process, what is the runner's own work.
#include "judge/contention_rules.hpp"

#include "protocol/contention.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>

namespace cudal2::contention {
namespace {

const ProbeTimes kIdle{70, 120};
const std::set<unsigned> kOurs{100, 101, 200};  // judge, tuner, runner

TEST(ContentionRules, AProbeAsFastAsOnAnIdleGpuIsClean) {
  EXPECT_EQ(probe_finding(kIdle, {70, 120}), "");
  EXPECT_EQ(probe_finding(kIdle, {2 * 70 + 49, 120 + 999}), "");
}

TEST(ContentionRules, ATimeSliceInsideTheProbeOrWaitedForBeforeItIsSeen) {
  EXPECT_NE(probe_finding(kIdle, {2 * 70 + 51, 120}).find("took 191 us"), std::string::npos);
  EXPECT_NE(probe_finding(kIdle, {70, 120 + 2100}).find("waited 2220 us"), std::string::npos);
}

NvmlView view(std::vector<GpuProcess> procs, std::optional<std::vector<GpuUtilSample>> util) {
  NvmlView v;
  v.have_processes = true;
  v.processes = std::move(procs);
  v.have_util = util.has_value();
  if (util) v.util = *util;
  return v;
}

TEST(ContentionRules, UtilizationNamesTheOtherProcessThatUsedTheSms) {
  const auto v = view({{100, 1 << 20}, {200, 1 << 20}, {999, 1 << 30}},
                      std::vector<GpuUtilSample>{{200, 5, 90}, {999, 6, 0}, {999, 7, 35}});
  EXPECT_EQ(foreign_use(v, kOurs), "another process used the GPU: pid 999 (35% of the SMs)");
  // An idle context of another process is no use of the GPU when utilization is known.
  const auto idle = view({{100, 1}, {999, 1}}, std::vector<GpuUtilSample>{{999, 6, 0}, {200, 6, 80}});
  EXPECT_EQ(foreign_use(idle, kOurs), "");
}

TEST(ContentionRules, WithoutUtilizationAContextOfAnotherProcessCounts) {
  const auto v = view({{100, 1 << 20}, {999, 512 << 20}}, std::nullopt);
  EXPECT_EQ(foreign_use(v, kOurs), "another process holds a context on the GPU: pid 999 (512 MiB)");
  EXPECT_EQ(foreign_use(view({{100, 1}, {200, 1}}, std::nullopt), kOurs), "");
}

TEST(ContentionRules, NvmlPidsFromAnotherNamespaceAreNotComparable) {
  EXPECT_TRUE(pids_comparable(view({{100, 1}, {999, 1}}, std::nullopt), 100));
  EXPECT_FALSE(pids_comparable(view({{4100, 1}, {4200, 1}}, std::nullopt), 100));
  EXPECT_FALSE(pids_comparable(NvmlView{}, 100));
}

TEST(ContentionRules, AHeldUpProbeIsTheRunnersOwnOnlyWhenNvmlListsNobodyElse) {
  const auto alone = view({{100, 1}, {200, 1}}, std::vector<GpuUtilSample>{});
  EXPECT_EQ(classify("held up", "", true, alone, kOurs), Finding::Own);
  EXPECT_EQ(classify("", "", true, alone, kOurs), Finding::Clean);
  // Someone else has a context (idle by utilization): a held-up probe may be theirs.
  const auto shared = view({{100, 1}, {200, 1}, {999, 1}}, std::vector<GpuUtilSample>{});
  EXPECT_EQ(classify("held up", "", true, shared, kOurs), Finding::Foreign);
  // NVML's pids mean nothing here: the probe alone, never the candidate's.
  EXPECT_EQ(classify("held up", "", false, alone, kOurs), Finding::Foreign);
  // Another process that used the SMs is contention whatever the probe saw.
  EXPECT_EQ(classify("", "another process used the GPU: pid 999", true, shared, kOurs), Finding::Foreign);
}

TEST(ContentionRules, ARunnersChildInItsPidNamespaceIsOurs) {
  // judge 100 -> runner 200 (the sandbox's init) -> 205 (the process with the CUDA context);
  // 999 is a neighbour started by 1.
  const std::map<unsigned, unsigned> parent{{100, 50}, {200, 100}, {205, 200}, {999, 1}, {50, 1}};
  const auto parent_of = [&](unsigned p) { return parent.count(p) ? parent.at(p) : 0u; };
  EXPECT_TRUE(descends_from(205, 100, parent_of));
  EXPECT_TRUE(descends_from(100, 100, parent_of));
  EXPECT_FALSE(descends_from(999, 100, parent_of));
  EXPECT_FALSE(descends_from(50, 100, parent_of));  // the judge's parent is not its descendant
}

// A fake process sampler: the NVML view the judge would see around each request of a shape.
struct FakeSampler {
  std::vector<NvmlView> views;
  size_t next = 0;
  NvmlView operator()() { return views.at(next++); }
};

// Whether the shape's measurement was seen disturbed: any request's check found another process.
bool seen_disturbed(FakeSampler& sample, size_t requests) {
  bool seen = false;
  for (size_t i = 0; i < requests; ++i) {
    const NvmlView v = sample();
    seen = seen || classify("", foreign_use(v, kOurs), pids_comparable(v, 100), v, kOurs) == Finding::Foreign;
  }
  return seen;
}

TEST(ContentionRules, AMeasurementBesideAnotherProcessIsGpuDisturbedNeverTheCandidates) {
  const auto ours_only = view({{100, 1}, {200, 1}}, std::vector<GpuUtilSample>{{200, 5, 90}});
  const auto neighbour = view({{100, 1}, {200, 1}, {999, 1}}, std::vector<GpuUtilSample>{{999, 6, 60}});
  FakeSampler clean{{ours_only, ours_only, ours_only}};
  FakeSampler shared{{ours_only, neighbour, ours_only}};  // present for one request only
  const bool alone = seen_disturbed(clean, 3), beside = seen_disturbed(shared, 3);
  EXPECT_FALSE(alone);
  EXPECT_TRUE(beside);
  // Alone, every verdict stands.
  EXPECT_FALSE(recorded_as_disturbed(alone, Status::Failed, FailureKind::TimingMismatch));
  EXPECT_FALSE(recorded_as_disturbed(alone, Status::Ok, FailureKind::None));
  // Beside a neighbour: an ok is not a clean measurement, and every verdict contention can cause
  // (timing, a lost launch, a fault) is gpu-disturbed: measured again, never charged, never rewarded.
  EXPECT_TRUE(recorded_as_disturbed(beside, Status::Ok, FailureKind::None));
  for (auto k : {FailureKind::TimingMismatch, FailureKind::ImplausibleTime, FailureKind::InconsistentTime,
                 FailureKind::WrongResult, FailureKind::IllegalAddress, FailureKind::CudaFatal})
    EXPECT_TRUE(recorded_as_disturbed(beside, Status::Failed, k)) << to_string(k);
  // What no neighbour causes stands: the candidate's.
  for (auto k : {FailureKind::OutOfBounds, FailureKind::InputModified, FailureKind::HostThread, FailureKind::Hang})
    EXPECT_FALSE(recorded_as_disturbed(beside, Status::Failed, k)) << to_string(k);
  EXPECT_FALSE(recorded_as_disturbed(beside, Status::Unsupported, FailureKind::None));
}

}  // namespace
}  // namespace cudal2::contention
