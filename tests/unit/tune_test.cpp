// The tuner's search space and failure vocabulary (CPU only).
#include <gtest/gtest.h>

#include <set>

#include "eval/candidate.hpp"

namespace cudal2 {
namespace {

TEST(SearchSpace, CoreIsAValidSubsetOfFullCoveringBothLayouts) {
  const auto full = search_space({"sm90_cutlass"}, "full", Accum::F32);
  const auto core = search_space({"sm90_cutlass"}, "core", Accum::F32);
  std::set<std::string> full_texts;
  for (const auto& s : full) full_texts.insert(s.text());
  EXPECT_EQ(full_texts.size(), full.size()) << "duplicates in the full space";
  EXPECT_EQ(full.size(), 2u * 368u);  // docs/kernel-space.md: 368 per layout and accumulator
  int nn = 0;
  for (const auto& s : core) {
    EXPECT_TRUE(full_texts.count(s.text())) << s.text();
    EXPECT_EQ(invalid_reason(s), "") << s.text();
    EXPECT_EQ(s.tile_k, 64);
    EXPECT_LE(s.cluster_m * s.cluster_n, 2);
    nn += s.layout == Layout::NN;
  }
  EXPECT_EQ(core.size(), 2u * static_cast<size_t>(nn));  // the same configurations for NN and TN
  EXPECT_EQ(core.size(), 2u * 54u);                        // docs/tuning.md
}

TEST(SearchSpace, OwnFamiliesBringTheirSplitCounts) {
  const auto mma = search_space({"mma"}, "core", Accum::F32);
  ASSERT_FALSE(mma.empty());
  std::set<int> splits;
  for (const auto& s : mma) {
    EXPECT_EQ(s.family, "mma");
    EXPECT_EQ(invalid_reason(s), "") << s.text();
    splits.insert(s.splits);
  }
  EXPECT_GT(splits.size(), 1u);
  const auto both = search_space({"mma", "sm90_cutlass"}, "core", Accum::F32);
  EXPECT_EQ(both.size(), mma.size() + search_space({"sm90_cutlass"}, "core", Accum::F32).size());
}

TEST(SearchSpace, RejectsUnknownNames) {
  EXPECT_THROW(search_space({"sm90_cutlass"}, "most", Accum::F32), InputError);
  EXPECT_THROW(search_space({"no_such_family"}, "full", Accum::F32), InputError);
}

TEST(FailureKinds, VerificationChecksMapToKinds) {
  EXPECT_EQ(failure_kind_of_check("out-of-bounds write"), "out-of-bounds");
  for (const char* c : {"exact mismatch", "normal error", "unwritten output", "NaN/Inf"})
    EXPECT_EQ(failure_kind_of_check(c), "wrong-result") << c;
  EXPECT_EQ(failure_kind_of_check("error"), "error");
  // The judge reports kinds directly; they pass through, anything unknown is an error.
  for (const char* k : {"input-modified", "implausible-time", "timing-mismatch", "inconsistent-time", "host-thread",
                        "wrong-result", "out-of-bounds", "crash", "hang", "protocol-error"})
    EXPECT_EQ(failure_kind_of_check(k), k);
  EXPECT_EQ(failure_kind_of_check("ok"), "error");
}

}  // namespace
}  // namespace cudal2
