// The runner synchronises every context the driver reported, not only those on its stack
// (runner/context_registry.hpp): a candidate's context created and popped again is waited for.
#include "runner/context_registry.hpp"

#include "runner/contexts.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace cudal2 {
namespace {

// A fake driver: which contexts were synchronised, which no longer exist, which fail.
struct FakeDriver {
  std::set<void*> alive, failing;
  std::vector<void*> synced;
  void* current = nullptr;
  ContextRegistry::Driver api() {
    return {[this](void* c) {
              if (!alive.count(c)) return false;
              current = c;
              return true;
            },
            [this] {
              synced.push_back(current);
              return !failing.count(current);
            },
            [this] { current = nullptr; }};
  }
};

int primary = 0, hidden = 0, gone = 0;

TEST(ContextRegistry, AContextCreatedAndPoppedIsSynchronised) {
  ContextRegistry r;
  r.seen(&primary);    // on the answering thread's stack
  r.created(&hidden);  // reported by the driver, never on a stack
  FakeDriver d;
  d.alive = {&primary, &hidden};
  EXPECT_EQ(r.sync_all(d.api()), "");
  EXPECT_EQ(std::set<void*>(d.synced.begin(), d.synced.end()), (std::set<void*>{&primary, &hidden}));
}

TEST(ContextRegistry, DestroyedContextsAreForgotten) {
  ContextRegistry r;
  r.created(&hidden);
  r.created(&gone);
  r.destroyed(&hidden);  // the driver's report
  FakeDriver d;
  d.alive = {};  // &gone was destroyed without a report: it can no longer be made current
  EXPECT_EQ(r.sync_all(d.api()), "");
  EXPECT_TRUE(d.synced.empty());
  EXPECT_TRUE(r.known().empty());
}

TEST(ContextRegistry, AFailedSynchronisationIsReportedAndTheOthersStillWaitedFor) {
  ContextRegistry r;
  r.created(&primary);
  r.created(&hidden);
  FakeDriver d;
  d.alive = {&primary, &hidden};
  d.failing = {&hidden};
  EXPECT_NE(r.sync_all(d.api()), "");
  EXPECT_EQ(d.synced.size(), 2u);
}

TEST(ContextRegistry, NullAndRepeatedReportsKeepOneEntry) {
  ContextRegistry r;
  r.created(nullptr);
  r.created(&hidden);
  r.seen(&hidden);
  EXPECT_EQ(r.known(), std::vector<void*>{&hidden});
}

TEST(ContextRegistry, ContextsAfterTheRunnersSetUpAreTheCandidates) {
  // The process's registry, as the driver's callbacks fill it (no GPU here: the driver calls that
  // add the current context are unavailable, so what the registry holds is all there is).
  static int runners = 0, candidates = 0;
  auto& r = ContextRegistry::process();
  r.created(&runners);
  mark_own_contexts();  // the end of the runner's trusted set-up
  EXPECT_EQ(foreign_contexts(), 0);
  r.created(&candidates);  // made by candidate code, then popped: on no stack
  EXPECT_EQ(foreign_contexts(), 1);
  r.destroyed(&candidates);  // gone, its work finished with it
  EXPECT_EQ(foreign_contexts(), 0);
  r.destroyed(&runners);
}

}  // namespace
}  // namespace cudal2
