#pragma once
// The judge's side of the judge/runner split (docs/threat-model.md). Candidate code never runs in the process that
// decides verdicts. The judge (the evaluation judge) owns every buffer, the inputs, the
// references and the checks; each candidate runs in a runner process of its own (`cudal2
// runner`), confined by the sandbox, which maps the judge's buffers through CUDA IPC, runs the
// candidate on them and times it with CUDA events. Nothing the runner says is believed without a
// check: outputs are verified by the judge after every run, and every time it reports is bounded
// by the judge's own wall clock around the request (calibrated before candidate code is loaded).
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "codegen/spec.hpp"
#include "measure/method.hpp"
#include "protocol/protocol.hpp"

namespace cudal2 {

struct RemoteConfig {
  std::string runner_exe;            // the cudal2 executable (`cudal2 runner`)
  std::chrono::seconds timeout{60};  // per request to the runner
  bool confine = true;               // sandbox confinement of the runner process
};

// A candidate artifact as a Method whose work happens in its own runner process. prepare()
// throws MethodUnsupported when the artifact refuses the shape and CandidateFault when the runner
// crashes, hangs, poisons its context or breaks the protocol; make_timer() gives the judge's
// RemoteTimer, whose defect() says whether its samples can be believed.
// spec_text: the spec's canonical text, or "" for a free-form source (spec then holds only its
// layout and accumulator).
MethodPtr make_remote_runner(const RemoteConfig& cfg, std::string artifact, KernelSpec spec, std::string spec_text,
                             std::string name);

// What else used the GPU while the runner behind m (a make_remote_runner method) worked since
// the last call ("" nothing, or m is not one): judge/contention.hpp. Each call starts a new window.
std::string take_disturbance(Method& m);

}  // namespace cudal2
