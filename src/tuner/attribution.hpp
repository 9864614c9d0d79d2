#pragma once
// Fault attribution: whose a non-ok verdict is, the candidate's or a disturbed GPU's. A candidate
// evaluated while a neighbour on the same GPU is torn down (a killed process's hung kernel, a
// reset) can fault (illegal address, launch failure), lose a launch without an error (NaN or
// unwritten output: wrong-result) or time a launch that never ran (implausible-time) through no
// fault of its own. This file holds the decision and nothing else: which verdicts are suspect,
// when the trusted canary is asked, when the candidate runs again, how long to wait, and what is
// recorded. The caller supplies the runs (tuner/evaluator.cpp: a fresh runner each time) and the
// canary (judge/canary.hpp: a fresh trusted process, no candidate code).
//
// The rules (docs/threat-model.md, "Faults are attributed, not assumed"):
//   - an ok verdict, and a failure a disturbed GPU cannot cause (out-of-bounds, a hang, ...),
//     stands as it is: nothing is re-run;
//   - after a suspect verdict the canary is run at once. Disturbed: wait (backoff doubling from
//     first_backoff_s up to max_backoff_s) and run the candidate again, at most max_attempts runs
//     in all; when they run out the verdict is gpu-disturbed, which is nobody's fault;
//   - healthy after a wrong result or an implausible time: the candidate's (no second chance for
//     a racy kernel without evidence that the GPU was disturbed);
//   - healthy after a fault: run it again; a fault in a run with a healthy canary right before
//     it and right after it is the candidate's;
//   - a run the judge saw disturbed while it ran (its outcome is gpu-disturbed): wait and run it
//     again, with no canary; when the runs are used up the verdict is gpu-disturbed;
//   - whatever a later run gives stands in the same way (ok: its verified measurement, marked
//     transient; a suspect verdict: these rules again). No verdict becomes ok except as the
//     verified measurement of a run that was ok.
#include <functional>
#include <string>

#include "protocol/outcome.hpp"

namespace cudal2::attribution {

inline constexpr double kMinCanarySeconds = 0.1, kMaxCanarySeconds = 30;

struct Options {
  int max_attempts = 5;          // runs of the candidate in all, the first included (>= 1)
  double first_backoff_s = 0.5;  // wait after the first disturbed canary; doubled after each
  double max_backoff_s = 4;      // no wait longer than this
  // How long the canary keeps the GPU busy with checked GEMMs (the caller's canary reads it): a
  // neighbour that disturbs the GPU now and then is caught when it acts within the window.
  double canary_seconds = 2;  // kMinCanarySeconds..kMaxCanarySeconds
};

// What one run of the candidate came to, as far as attribution is concerned.
struct Trial {
  Outcome outcome;
  std::string detail;  // one line for humans (kind and reason)
};

// The canary's answer: healthy, or disturbed and why.
struct Health {
  bool healthy = true;
  std::string reason;  // disturbed: what the canary saw
};

// What a suspect verdict can be a symptom of: a fault that poisons a context (is_fatal_fault:
// illegal address, device assert, illegal instruction, cuda-fatal: a launch failure, a lost
// context), or a result a lost launch gives (wrong-result, implausible-time, inconsistent-time,
// timing-mismatch). Seen: the run's own outcome is gpu-disturbed, because the judge saw another
// process use the GPU while it measured the run (judge/contention.hpp): backoff and run again, no
// canary, never the candidate's. Every other outcome stands as it is.
enum class Suspect { No, Fault, Result, Seen };
Suspect suspect(const Outcome& o);

enum class Cause {
  Candidate,  // the verdict of trial `trial` stands as the candidate's (ok or a failure)
  Transient,  // an earlier run was suspect, a later one (trial) was ok: its measurement stands
  Disturbed,  // attempts ran out while the canary said disturbed: gpu-disturbed, nobody's fault
};

struct Attribution {
  Cause cause = Cause::Candidate;
  int trial = 0;    // the run whose verdict stands (0: the first); none when Disturbed
  Outcome outcome;  // that run's outcome, or Status::GpuDisturbed
  // "" when the first verdict stands as it came (with or without a healthy canary after it); else
  // what happened, for the record ("transient ...", "reproduced ...", "on run N ...", "gpu disturbed ...").
  std::string note;
  int runs = 1;         // runs of the candidate, the first included
  int canaries = 0;     // canary runs
  double waited_s = 0;  // backoff slept in all
  std::string first;    // the first suspect verdict's detail ("" when there was none)
};

// Decides whose `first` (the candidate's first run) is. rerun(): runs the candidate again in a
// fresh runner and returns what it came to; canary(): the GPU's health now; wait(s): sleeps s
// seconds. Calls them in the order the rules above say, and never more than Options allow.
Attribution attribute(const Trial& first, const std::function<Trial()>& rerun, const std::function<Health()>& canary,
                      const std::function<void(double)>& wait, const Options& options = {});

}  // namespace cudal2::attribution
