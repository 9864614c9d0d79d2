// `cudal2 judge`: the judge process's request loop (docs/judge-protocol.md).
#include <nlohmann/json.hpp>
#include <variant>

#include "judge/canary.hpp"
#include "judge/jobs.hpp"
#include "protocol/protocol.hpp"
#include "sandbox/sandbox.hpp"

namespace cudal2 {

int judge_main() {
  // A request that is not the protocol throws ProtocolError, which serve() answers as
  // {"ok": false, "error": ...}.
  return sandbox::serve([](const nlohmann::json& req) {
    const protocol::JudgeRequest job = protocol::parse_judge_request(req);
    if (const auto* eval = std::get_if<protocol::EvalJob>(&job)) return to_json(run_eval_job(*eval));
    if (const auto* canary = std::get_if<protocol::CanaryJob>(&job)) return to_json(run_canary(*canary));
    return run_lt_space_job(std::get<protocol::LtSpaceJob>(job));
  });
}

}  // namespace cudal2
