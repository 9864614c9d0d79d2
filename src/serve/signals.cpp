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

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopOnSignal::StopOnSignal(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  const sigset_t set = stop_signals();
  block_stop_signals();
  waiter_ = std::thread([this, set] {
    // Polls done_ every 100 ms: the destructor needs no signal of its own to end the wait.
    const timespec tick{0, 100'000'000};
    while (!done_.load()) {
      siginfo_t info{};
      if (const int sig = sigtimedwait(&set, &info, &tick); sig > 0) {
        last_signal_ = sig;
        on_signal_();
      }
    }
  });
}

StopOnSignal::~StopOnSignal() {
  done_ = true;
  if (waiter_.joinable()) waiter_.join();
}

}  // namespace cudal2::serve
