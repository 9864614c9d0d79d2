#pragma once
// The judge process (`cudal2 judge`; docs/judge-protocol.md): serves the
// ops of protocol/protocol.hpp on stdin/stdout until end of input. It owns every GPU buffer, the
// inputs, references, checks and verdicts, runs the baselines, and never loads candidate code:
// each candidate runs in a confined runner (judge/runner_proxy.hpp; docs/threat-model.md).
#include <nlohmann/json.hpp>

#include "protocol/protocol.hpp"

namespace cudal2 {

// "eval": the candidates verified and timed against the baselines in one bench; an answer that is
// not ok when the job could not run, or a fatal one when a kernel left the CUDA context unusable
// (the judge then exits).
protocol::JobAnswer run_eval_job(const protocol::EvalJob& job);
// "lt-space": the cublaslt family's specs for each problem on this GPU (cublaslt_neighbourhood,
// which needs a CUDA context). An LtSpaceAnswer or an ErrorAnswer.
nlohmann::json run_lt_space_job(const protocol::LtSpaceJob& job);
// The request loop (judge/judge_main.cpp): eval, lt-space and canary (judge/canary.hpp).
int judge_main();

}  // namespace cudal2
