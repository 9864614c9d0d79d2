#include "eval/job_answer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace cudal2 {

namespace {

using nlohmann::json;

struct Malformed {
  std::string what;
};

const json& field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) throw Malformed{path + " is not an object"};
  const auto it = obj.find(key);
  if (it == obj.end()) throw Malformed{fmt::format("{}.{} is missing", path, key)};
  return *it;
}

std::string str(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_string()) throw Malformed{fmt::format("{}.{} is a {}, not a string", path, key, v.type_name())};
  return v.get<std::string>();
}

double finite(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_number()) throw Malformed{fmt::format("{}.{} is a {}, not a number", path, key, v.type_name())};
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw Malformed{fmt::format("{}.{} = {} is not a finite time", path, key, d)};
  return d;
}

int64_t positive_int(const json& v, const std::string& path) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw Malformed{fmt::format("{} is not a positive integer ({})", path, v.dump().substr(0, 40))};
  return v.get<int64_t>();
}

MethodAnswer method_of(const json& m, const std::string& path) {
  static const std::set<std::string> statuses{"ok", "unsupported", "failed", "error"};
  static const std::set<std::string> modes{"offline", "server"}, timers{"graph", "eager", "host"};
  MethodAnswer a;
  a.method = str(m, "method", path);
  a.status = str(m, "status", path);
  if (!statuses.count(a.status)) throw Malformed{fmt::format("{}.status '{}' is unknown", path, a.status)};
  a.failure = m.contains("failure") ? str(m, "failure", path) : "";
  a.reason = m.contains("reason") ? str(m, "reason", path) : "";
  if (m.contains("rel_err") && m.at("rel_err").is_number() && std::isfinite(m.at("rel_err").get<double>()) &&
      m.at("rel_err").get<double>() >= 0)
    a.rel_err = m.at("rel_err").get<double>();
  if (!m.contains("timing")) return a;
  const json& t = m.at("timing");
  if (!t.is_object()) throw Malformed{path + ".timing is not an object"};
  for (const auto& [mode, by_timer] : t.items()) {
    const std::string mp = path + ".timing." + mode;
    if (!modes.count(mode)) throw Malformed{mp + " is not a mode"};
    if (!by_timer.is_object()) throw Malformed{mp + " is not an object"};
    for (const auto& [timer, sj] : by_timer.items()) {
      const std::string tp = mp + "." + timer;
      if (!timers.count(timer)) throw Malformed{tp + " is not a timer"};
      Summary s;
      s.median = finite(sj, "median", tp);
      s.p10 = finite(sj, "p10", tp);
      s.p90 = finite(sj, "p90", tp);
      s.min = finite(sj, "min", tp);
      s.n = static_cast<size_t>(positive_int(field(sj, "n", tp), tp + ".n"));
      if (!(s.median > 0)) throw Malformed{tp + ".median is not positive"};
      a.timing[mode][timer] = s;
    }
  }
  return a;
}

JobAnswer job_of(const json& j) {
  if (!j.is_object()) throw Malformed{"the answer is not an object"};
  JobAnswer a;
  const json& ok = field(j, "ok", "answer");
  if (!ok.is_boolean()) throw Malformed{"answer.ok is not a boolean"};
  a.ok = ok.get<bool>();
  if (!a.ok) {
    a.error = j.contains("error") && j.at("error").is_string() ? j.at("error").get<std::string>() : "job failed";
    a.fatal = j.contains("fatal") && j.at("fatal").is_boolean() && j.at("fatal").get<bool>();
    if (a.fatal) {
      static const std::set<std::string> kinds{"illegal-address", "device-assert", "illegal-instruction", "cuda-fatal"};
      a.kind = j.contains("kind") && j.at("kind").is_string() ? j.at("kind").get<std::string>() : "";
      if (!kinds.count(a.kind)) a.kind = "cuda-fatal";
    }
    return a;
  }
  a.gpu = str(j, "gpu", "answer");
  const json& shapes = field(j, "shapes", "answer");
  if (!shapes.is_array()) throw Malformed{"answer.shapes is not an array"};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string sp = fmt::format("answer.shapes[{}]", i);
    ShapeAnswer s;
    s.shape = {positive_int(field(shapes[i], "m", sp), sp + ".m"), positive_int(field(shapes[i], "n", sp), sp + ".n"),
               positive_int(field(shapes[i], "k", sp), sp + ".k")};
    const json& methods = field(shapes[i], "methods", sp);
    if (!methods.is_array()) throw Malformed{sp + ".methods is not an array"};
    for (size_t k = 0; k < methods.size(); ++k)
      s.methods.push_back(method_of(methods[k], fmt::format("{}.methods[{}]", sp, k)));
    a.shapes.push_back(std::move(s));
  }
  return a;
}

}  // namespace

std::optional<JobAnswer> parse_job_answer(const nlohmann::json& j, std::string* why) {
  try {
    return job_of(j);
  } catch (const Malformed& m) {
    if (why) *why = "malformed worker answer: " + m.what;
  } catch (const std::exception& e) {
    if (why) *why = std::string("malformed worker answer: ") + e.what();
  }
  return std::nullopt;
}

nlohmann::json summary_json(const Summary& s) {
  return {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"min", s.min}, {"n", s.n}};
}

}  // namespace cudal2
