#include "serve/signals.hpp"

#include <pthread.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <utility>

namespace cudal2::serve {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

StopOnSignal::StopOnSignal(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  waiter_ = std::thread([this, set] {
    // Polls done_ every 100 ms: the destructor needs no signal of its own to end the wait.
    const timespec tick{0, 100'000'000};
    while (!done_.load()) {
      siginfo_t info{};
      if (sigtimedwait(&set, &info, &tick) > 0) on_signal_();
    }
  });
}

StopOnSignal::~StopOnSignal() {
  done_ = true;
  if (waiter_.joinable()) waiter_.join();
}

}  // namespace cudal2::serve
