#pragma once
// SIGINT and SIGTERM for a long-running command, without a signal handler: the constructor blocks
// both in the calling thread (so in every thread it starts afterwards: construct it first) and a
// thread of its own waits for them and calls `on_signal` there, where anything may be done. A
// handler may do almost nothing safely; `cudal2 serve`'s used to start a thread, which raced with
// the main thread's shutdown (exit 1, aborts, hangs).
#include <atomic>
#include <functional>
#include <thread>

namespace cudal2::serve {

// Blocks SIGINT and SIGTERM in the calling thread: main() does this first for the commands that
// handle them (serve, tune), so a signal arriving while the process starts up waits for
// StopOnSignal instead of killing it (it killed `cudal2 serve` in its first 75-200 ms).
void block_stop_signals();

class StopOnSignal {
 public:
  explicit StopOnSignal(std::function<void()> on_signal);
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  // Stops waiting. The signals stay blocked: one arriving now is pending and harmless, and the
  // process ends through its normal exit instead of being killed by it.
  ~StopOnSignal();
  // The last signal received (0: none yet).
  int last_signal() const { return last_signal_.load(); }

 private:
  std::atomic<int> last_signal_{0};
  std::function<void()> on_signal_;
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace cudal2::serve
