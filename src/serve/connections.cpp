#include "serve/connections.hpp"

#include <system_error>
#include <thread>
#include <utility>

namespace cudal2::serve {

ConnectionThreads::ConnectionThreads(size_t max_threads, std::chrono::milliseconds grace)
    : max_threads_(max_threads < 1 ? 1 : max_threads), grace_(grace) {}

ConnectionThreads::~ConnectionThreads() = default;

void ConnectionThreads::serve(const std::shared_ptr<State>& state, std::function<void()> fn) {
  for (;;) {
    fn();
    std::lock_guard<std::mutex> l(state->mu);
    if (state->waiting.empty()) {
      --state->active;
      state->idle.notify_all();
      return;
    }
    fn = std::move(state->waiting.front());
    state->waiting.pop_front();
  }
}

void ConnectionThreads::enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(state_->mu);
    if (state_->active >= max_threads_) {
      state_->waiting.push_back(std::move(fn));
      return;
    }
    ++state_->active;
  }
  try {
    std::thread([state = state_, f = std::move(fn)]() mutable { serve(state, std::move(f)); }).detach();
  } catch (const std::system_error&) {
    // No thread to be had (a process limit): serve it on the accepting thread, rather than drop it.
    serve(state_, std::move(fn));
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> l(state_->mu);
  state_->idle.wait_for(l, grace_, [&] { return state_->active == 0; });
}

size_t ConnectionThreads::active() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->active;
}

}  // namespace cudal2::serve
