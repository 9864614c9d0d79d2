#pragma once
// The evaluation worker's answer to one job, as the tuner reads it. The worker is trusted code,
// but the tuner must survive anything on the pipe (a bug, a crash mid-line, a forged line): the
// answer is checked field by field into typed structs, and a malformed one becomes a recorded
// protocol-error, never an exception that ends the tuner.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/stats.hpp"

namespace cudal2 {

struct MethodAnswer {
  std::string method;
  std::string status;   // ok | unsupported | failed | error
  std::string failure;  // the failed check or failure kind, "" when ok
  std::string reason;
  std::optional<double> rel_err;
  // mode ("offline", "server") -> timer ("graph", "eager", "host") -> summary
  std::map<std::string, std::map<std::string, Summary>> timing;
};

struct ShapeAnswer {
  Shape shape;
  std::vector<MethodAnswer> methods;
};

struct JobAnswer {
  bool ok = false;
  // ok: the measurements.
  std::string gpu;
  std::vector<ShapeAnswer> shapes;
  // !ok: why the job did not run; fatal: the worker's CUDA context was poisoned (kind says how).
  std::string error;
  bool fatal = false;
  std::string kind;
};

// Never throws. Returns the typed answer, or sets *why to what is malformed (path and problem).
std::optional<JobAnswer> parse_job_answer(const nlohmann::json& j, std::string* why);

// The summary's JSON form in an answer: {"median","p10","p90","min","n"}.
nlohmann::json summary_json(const Summary& s);

}  // namespace cudal2
