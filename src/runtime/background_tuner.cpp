#include "runtime/background_tuner.hpp"

#include <cuda_runtime.h>

#include <utility>

namespace cudal2::rt {

void BackgroundTuner::start() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_ && !worker_.joinable()) worker_ = std::thread([this] { loop(); });
}

void BackgroundTuner::enqueue(Job job) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
    if (!worker_.joinable()) worker_ = std::thread([this] { loop(); });
  }
  work_.notify_one();
}

void BackgroundTuner::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return stopping_ || (jobs_.empty() && !busy_); });
}

void BackgroundTuner::stop() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  stop_flag_ = true;
  work_.notify_all();
  idle_.notify_all();
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

void BackgroundTuner::loop() {
  // The handle's device, and no part in anyone's stream capture (see the header).
  if (cudaSetDevice(device_) != cudaSuccess) cudaGetLastError();
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
    }
    job(stop_flag_);
    ++finished_;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    idle_.notify_all();
  }
  idle_.notify_all();
}

}  // namespace cudal2::rt
