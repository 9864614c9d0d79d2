#pragma once
// Tuning off the caller's thread (cudal2_options.tune_unseen = CUDAL2_TUNE_BACKGROUND): a queue
// of jobs and one worker thread per handle, started by the first job. The caller's call enqueues
// and returns (a mutex and a notify: microseconds); the worker runs each job on the handle's
// device with its own stream, in relaxed capture mode so that a graph being captured on another
// thread neither blocks it nor is broken by it. A job checks `stop` between its steps: the
// destructor (cudal2_destroy, or the process's exit for the default handle) drops the queued jobs,
// asks the running one to stop and joins.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace cudal2::rt {

// CUDAL2_TUNE_UNSEEN: unset or empty the default (2, background); 0|off, 1|blocking,
// 2|background; anything else nothing (the caller reports it).
inline std::optional<int> parse_tune_env(const char* s) {
  if (s == nullptr || *s == '\0') return 2;
  const std::string_view v(s);
  if (v == "0" || v == "off") return 0;
  if (v == "1" || v == "blocking") return 1;
  if (v == "2" || v == "background") return 2;
  return std::nullopt;
}

class BackgroundTuner {
 public:
  using Job = std::function<void(const std::atomic<bool>& stop)>;

  explicit BackgroundTuner(int device) : device_(device) {}
  BackgroundTuner(const BackgroundTuner&) = delete;
  BackgroundTuner& operator=(const BackgroundTuner&) = delete;
  ~BackgroundTuner() { stop(); }

  // Starts the worker thread now (so that the first job's caller does not pay for it).
  void start();
  void enqueue(Job job);
  // Returns once every job enqueued before the call has finished (or the tuner has stopped).
  void wait();
  // Drops the queued jobs, asks the running one to stop, joins the worker. Idempotent.
  void stop();
  // Jobs finished since the tuner was made (for tests and the bench's report).
  long finished() const { return finished_.load(); }

 private:
  void loop();

  int device_;
  std::mutex mu_;
  std::condition_variable work_, idle_;
  std::deque<Job> jobs_;
  bool busy_ = false;  // a job is running
  bool stopping_ = false;
  std::atomic<bool> stop_flag_{false};
  std::atomic<long> finished_{0};
  std::thread worker_;
};

}  // namespace cudal2::rt
