#pragma once
// What a tune (or one evaluation) may still spend: candidates and minutes, the minutes counted
// from one start. Made once and passed down, so the time left is computed here and nowhere else
// (each layer used to subtract its own elapsed time from the deadline it was given).
#include <algorithm>
#include <chrono>

namespace cudal2::tuner {

class Budget {
 public:
  using Clock = std::chrono::steady_clock;

  // candidates, minutes: 0 for no limit.
  Budget(int candidates, double minutes, Clock::time_point start = Clock::now())
      : candidates_(candidates), minutes_(minutes), start_(start) {}

  double elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double elapsed_minutes() const { return elapsed_seconds() / 60.0; }

  bool out_of_time() const { return minutes_ > 0 && elapsed_minutes() >= minutes_; }
  // EvalRequest::deadline_minutes for an evaluation starting now: the minutes left, 0 without a
  // time limit. Once they are spent it is a moment rather than 0 (which would mean no limit), so
  // an evaluation started anyway starts nothing.
  double deadline_minutes() const { return minutes_ > 0 ? std::max(minutes_ - elapsed_minutes(), kMoment) : 0; }

  // At most n candidates (0: as many as there are), fewer when fewer are left; 0 when neither
  // limits them.
  int cap(int n) const {
    if (candidates_ <= 0) return n;
    const int left = candidates_ - spent_;
    return n > 0 ? std::min(n, left) : left;
  }
  void spend(int candidates) { spent_ += candidates; }
  bool out_of_candidates() const { return candidates_ > 0 && spent_ >= candidates_; }

 private:
  static constexpr double kMoment = 1e-9;  // minutes
  int candidates_ = 0;
  double minutes_ = 0;
  Clock::time_point start_;
  int spent_ = 0;
};

}  // namespace cudal2::tuner
