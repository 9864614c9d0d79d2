// The runtime's background tuner (src/runtime/background_tuner.hpp) without a GPU: jobs run in
// order off the caller's thread, wait() sees them all finished, stop() drops what is queued and
// tells the running job; and CUDAL2_TUNE_UNSEEN's values.
#include "runtime/background_tuner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using cudal2::rt::BackgroundTuner;
using cudal2::rt::parse_tune_env;

TEST(TuneEnv, DefaultIsBackgroundAndTyposAreRefused) {
  EXPECT_EQ(parse_tune_env(nullptr), 2);
  EXPECT_EQ(parse_tune_env(""), 2);
  EXPECT_EQ(parse_tune_env("0"), 0);
  EXPECT_EQ(parse_tune_env("off"), 0);
  EXPECT_EQ(parse_tune_env("1"), 1);
  EXPECT_EQ(parse_tune_env("blocking"), 1);
  EXPECT_EQ(parse_tune_env("background"), 2);
  EXPECT_FALSE(parse_tune_env("yes"));
  EXPECT_FALSE(parse_tune_env("3"));
}

TEST(BackgroundTuner, JobsRunInOrderOffTheCallersThread) {
  BackgroundTuner t(0);
  std::mutex mu;
  std::vector<int> order;
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> other_thread{true};
  for (int i = 0; i < 5; ++i)
    t.enqueue([&, i](const std::atomic<bool>&) {
      if (std::this_thread::get_id() == caller) other_thread = false;
      const std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    });
  t.wait();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(other_thread);
  EXPECT_EQ(t.finished(), 5);
}

TEST(BackgroundTuner, EnqueueReturnsWhileAJobRuns) {
  BackgroundTuner t(0);
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<bool> started{false};
  t.enqueue([&](const std::atomic<bool>&) {
    started = true;
    released.wait();
  });
  t.enqueue([](const std::atomic<bool>&) {});  // queued behind the blocked job: returns at once
  while (!started) std::this_thread::yield();
  EXPECT_EQ(t.finished(), 0) << "the caller got here while the first job was still blocked";
  release.set_value();
  t.wait();
  EXPECT_EQ(t.finished(), 2);
}

TEST(BackgroundTuner, StopDropsTheQueueAndTellsTheRunningJob) {
  BackgroundTuner t(0);
  std::atomic<bool> started{false}, saw_stop{false}, second_ran{false};
  t.enqueue([&](const std::atomic<bool>& stop) {
    started = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    saw_stop = stop.load();
  });
  t.enqueue([&](const std::atomic<bool>&) { second_ran = true; });
  while (!started) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  t.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "stop waited for the whole job";
  EXPECT_TRUE(saw_stop);
  EXPECT_FALSE(second_ran) << "a queued job ran after stop";
  t.enqueue([&](const std::atomic<bool>&) { second_ran = true; });
  t.wait();  // returns: the tuner has stopped
  EXPECT_FALSE(second_ran) << "a job enqueued after stop ran";
}

}  // namespace
