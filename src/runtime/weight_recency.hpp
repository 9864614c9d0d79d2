#pragma once
// Whether a call's weights are likely still in the L2: which operands B this handle read recently,
// and how many bytes its calls moved since. Weights read again before about half the L2's bytes
// went through count as warm (a repeated call, a small model's layers); those the handle has not
// read since, as in a decode step where every layer's weights come back only after all the others,
// count as cold. Work the handle does not see (the caller's other kernels) only makes weights look
// warmer than they are, which keeps the library's choice for warm weights. Plain C++: the CPU tests
// check it.
#include <array>
#include <cstdint>
#include <mutex>

namespace cudal2::rt {

class WeightRecency {
 public:
  // window: bytes of traffic after which weights read before count as gone from the L2.
  void set_window(int64_t window) { window_ = window; }

  // Notes a call that reads `b` (b_bytes of weights) and moves call_bytes in all (A, B and C);
  // answers whether the same weights were read by an earlier call fewer than `window` bytes ago.
  bool note(const void* b, int64_t b_bytes, int64_t call_bytes) {
    const std::lock_guard<std::mutex> lock(mu_);
    size_t i = 0;
    while (i < seen_.size() && !(seen_[i].b == b && seen_[i].bytes == b_bytes)) ++i;
    bool warm = false;
    if (i < seen_.size()) {
      warm = total_ - seen_[i].at <= window_;  // the bytes of the calls in between
    } else {
      i = next_;
      next_ = (next_ + 1) % seen_.size();
    }
    total_ += call_bytes;
    seen_[i] = Seen{b, b_bytes, total_};
    return warm;
  }

 private:
  struct Seen {
    const void* b = nullptr;
    int64_t bytes = 0;
    int64_t at = 0;  // the running total after its last read
  };
  std::mutex mu_;
  std::array<Seen, 64> seen_{};  // the most recently read distinct weights, oldest overwritten
  size_t next_ = 0;
  int64_t total_ = 0;
  int64_t window_ = 0;
};

}  // namespace cudal2::rt
