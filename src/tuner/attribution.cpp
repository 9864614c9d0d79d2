#include "tuner/attribution.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "protocol/contention.hpp"

namespace cudal2::attribution {

Suspect suspect(const Outcome& o) {
  if (o == Status::GpuDisturbed) return Suspect::Seen;
  if (!o.failed() || !disturbance_can_cause(o.kind)) return Suspect::No;
  return is_fatal_fault(o.kind) ? Suspect::Fault : Suspect::Result;
}

namespace {

std::string clip(const std::string& s, size_t n = 600) { return s.size() > n ? s.substr(0, n) + "..." : s; }

}  // namespace

Attribution attribute(const Trial& first, const std::function<Trial()>& rerun, const std::function<Health()>& canary,
                      const std::function<void(double)>& wait, const Options& options) {
  Attribution a;
  a.outcome = first.outcome;
  if (suspect(first.outcome) == Suspect::No) return a;
  a.first = first.detail;
  const int max_runs = std::max(1, options.max_attempts);
  double backoff = std::max(0.0, options.first_backoff_s);
  Trial cur = first;
  bool healthy_before = false;  // the canary right before the current run said healthy
  std::string disturbance;      // the last disturbed canary's reason ("" when none so far)
  const std::string first_run = fmt::format("first run: {}", clip(first.detail));
  auto stands = [&](Cause cause, std::string note) {
    a.cause = cause;
    a.trial = a.runs - 1;
    a.outcome = cur.outcome;
    a.note = std::move(note);
    return a;
  };
  // A disturbance seen: wait (doubling up to the cap) before the next run, which then has no
  // healthy canary before it.
  auto back_off = [&] {
    wait(backoff);
    a.waited_s += backoff;
    backoff = std::min(std::max(backoff, 0.0) * 2, std::max(options.max_backoff_s, 0.0));
    healthy_before = false;
  };
  for (;;) {
    const Suspect s = suspect(cur.outcome);
    if (s == Suspect::Seen) {
      // The judge saw another process on the GPU while it measured this run: direct evidence, no
      // canary needed. Measured again after the backoff; never the candidate's.
      disturbance = cur.detail;
      if (a.runs >= max_runs) break;
      back_off();
      cur = rerun();
      ++a.runs;
      continue;
    }
    if (s == Suspect::No) {  // a later run that is ok, or failed in a way a disturbance cannot cause
      if (cur.outcome.ok())
        return stands(Cause::Transient,
                      fmt::format("transient, not reproduced in a fresh runner on run {} ({})", a.runs, first_run));
      return stands(Cause::Candidate, fmt::format("on run {} in a fresh runner ({})", a.runs, first_run));
    }
    const Health h = canary();
    ++a.canaries;
    if (h.healthy) {
      // The first verdict standing as it came needs no note: its rows read as they always did.
      if (s == Suspect::Result)
        return stands(Cause::Candidate,
                      a.runs == 1
                          ? std::string()
                          : fmt::format("on run {}, the trusted canary found the GPU healthy right after it ({})",
                                        a.runs, first_run));
      if (healthy_before)
        return stands(Cause::Candidate,
                      fmt::format("reproduced in a fresh runner on run {}, the trusted canary healthy before and after "
                                  "it ({})",
                                  a.runs, first_run));
      if (a.runs >= max_runs) {
        // Only with max_attempts 1 has no canary been disturbed here: then nothing is re-run.
        if (disturbance.empty()) return stands(Cause::Candidate, "");
        break;
      }
      healthy_before = true;
    } else {
      disturbance = h.reason;
      if (a.runs >= max_runs) break;
      back_off();
    }
    cur = rerun();
    ++a.runs;
  }
  a.cause = Cause::Disturbed;
  a.trial = -1;
  a.outcome = Outcome(Status::GpuDisturbed);
  a.note =
      suspect(cur.outcome) == Suspect::Seen
          ? fmt::format(
                "gpu disturbed: the judge saw the GPU in use by another process in each of {} run(s), "
                "the last: {} ({})",
                a.runs, clip(cur.detail), first_run)
          : fmt::format("gpu disturbed: the trusted canary said '{}'; {} run(s) of the candidate, the last: {} ({})",
                        clip(disturbance), a.runs, clip(cur.detail), first_run);
  return a;
}

}  // namespace cudal2::attribution
