#pragma once
// The task queue `cudal2 serve` gives cpp-httplib: one thread per open connection, up to a cap.
// httplib's own ThreadPool has a fixed number of threads, and a connection holds its thread for
// as long as the client keeps it open: a handful of clients trickling headers or declaring a huge
// body and sending nothing took every thread, and /health waited seconds. Here a new connection
// gets a thread of its own while fewer than `max_threads` are busy (beyond that it waits for one).
// shutdown() waits a bounded time for open connections and then leaves them: a client that never
// finishes its request must not keep the server from exiting.
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace cudal2::serve {

class ConnectionThreads final : public httplib::TaskQueue {
 public:
  ConnectionThreads(size_t max_threads, std::chrono::milliseconds grace);
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;
  ~ConnectionThreads() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // Connections being served now (for /health and tests).
  size_t active() const;

 private:
  // Shared with the threads, which may outlive this object after shutdown()'s grace period.
  struct State {
    std::mutex mu;
    std::condition_variable idle;
    std::deque<std::function<void()>> waiting;
    size_t active = 0;
  };
  static void serve(const std::shared_ptr<State>& state, std::function<void()> fn);

  std::shared_ptr<State> state_ = std::make_shared<State>();
  size_t max_threads_;
  std::chrono::milliseconds grace_;
};

}  // namespace cudal2::serve
