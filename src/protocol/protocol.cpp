#include "protocol/protocol.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace cudal2::protocol {

namespace {

using nlohmann::json;

// What is wrong, with its path ("eval.shapes[1] is not [m, n, k]"); the callers add the message.
struct Malformed {
  std::string what;
};

std::string sub(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

const json& field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) throw Malformed{path + " is not an object"};
  const auto it = obj.find(key);
  if (it == obj.end()) throw Malformed{sub(path, key) + " is missing"};
  return *it;
}

const json* optional_field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) throw Malformed{path + " is not an object"};
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

[[noreturn]] void mistyped(const json& v, const std::string& path, const char* want) {
  throw Malformed{fmt::format("{} is a {}, not {}", path, v.type_name(), want)};
}

std::string string_of(const json& v, const std::string& path) {
  if (!v.is_string()) mistyped(v, path, "a string");
  return v.get<std::string>();
}
std::string str(const json& obj, const char* key, const std::string& path) {
  return string_of(field(obj, key, path), sub(path, key));
}
std::string str_or(const json& obj, const char* key, const std::string& path, const std::string& def) {
  const json* v = optional_field(obj, key, path);
  return v ? string_of(*v, sub(path, key)) : def;
}

bool boolean_or(const json& obj, const char* key, const std::string& path, bool def) {
  const json* v = optional_field(obj, key, path);
  if (!v) return def;
  if (!v->is_boolean()) mistyped(*v, sub(path, key), "a boolean");
  return v->get<bool>();
}

int64_t integer_of(const json& v, const std::string& path) {
  if (!v.is_number_integer()) mistyped(v, path, "an integer");
  return v.get<int64_t>();
}
int int_of(const json& v, const std::string& path) {
  const int64_t i = integer_of(v, path);
  if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
    throw Malformed{fmt::format("{} = {} is out of range", path, i)};
  return static_cast<int>(i);
}
int int_or(const json& obj, const char* key, const std::string& path, int def) {
  const json* v = optional_field(obj, key, path);
  return v ? int_of(*v, sub(path, key)) : def;
}
uint64_t unsigned_of(const json& v, const std::string& path) {
  if (!v.is_number_unsigned()) mistyped(v, path, "an unsigned integer");
  return v.get<uint64_t>();
}

double number_of(const json& v, const std::string& path) {
  if (!v.is_number()) mistyped(v, path, "a number");
  return v.get<double>();
}
double number_or(const json& obj, const char* key, const std::string& path, double def) {
  const json* v = optional_field(obj, key, path);
  return v ? number_of(*v, sub(path, key)) : def;
}
// A time or a time-like quantity: finite and >= 0.
double finite(const json& obj, const char* key, const std::string& path) {
  const double d = number_of(field(obj, key, path), sub(path, key));
  if (!std::isfinite(d) || d < 0) throw Malformed{fmt::format("{} = {} is not a finite time", sub(path, key), d)};
  return d;
}

int64_t positive_int(const json& v, const std::string& path) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw Malformed{fmt::format("{} is not a positive integer ({})", path, v.dump().substr(0, 40))};
  return v.get<int64_t>();
}

int positive_int32(const json& v, const std::string& path) {
  const int64_t i = positive_int(v, path);
  if (i > std::numeric_limits<int>::max()) throw Malformed{fmt::format("{} = {} is out of range", path, i)};
  return static_cast<int>(i);
}

const json& array(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_array()) throw Malformed{sub(path, key) + " is not an array"};
  return v;
}

// [m, n, k] (requests, lt-space answers).
Shape shape_array(const json& v, const std::string& path) {
  if (!v.is_array() || v.size() != 3)
    throw Malformed{fmt::format("{} is not [m, n, k] ({})", path, v.dump().substr(0, 60))};
  return {positive_int(v[0], at(path, 0)), positive_int(v[1], at(path, 1)), positive_int(v[2], at(path, 2))};
}
json shape_json(const Shape& s) { return json::array({s.m, s.n, s.k}); }
// "m", "n", "k" fields of obj (eval answers, runner requests).
Shape shape_fields(const json& obj, const std::string& path) {
  return {positive_int(field(obj, "m", path), sub(path, "m")), positive_int(field(obj, "n", path), sub(path, "n")),
          positive_int(field(obj, "k", path), sub(path, "k"))};
}
void put_shape(json& obj, const Shape& s) { obj["m"] = s.m, obj["n"] = s.n, obj["k"] = s.k; }

// A word of a core enum (their parsers throw InputError for unknown words).
template <class Parse>
auto word(const json& v, const std::string& path, Parse parse) {
  const std::string w = string_of(v, path);
  try {
    return parse(w);
  } catch (const std::exception& e) {
    throw Malformed{path + ": " + e.what()};
  }
}
Layout layout_of(const json& v, const std::string& path) {
  return word(v, path, [](const std::string& w) { return parse_layout(w); });
}
Accum accum_of(const json& v, const std::string& path) {
  return word(v, path, [](const std::string& w) { return parse_accum(w); });
}
Mode mode_of(const json& v, const std::string& path) {
  return word(v, path, [](const std::string& w) { return parse_mode(w); });
}
std::optional<TimerKind> timer_kind(std::string_view w) {
  for (auto t : kTimers)
    if (to_string(t) == w) return t;
  return std::nullopt;
}

std::string s(std::string_view v) { return std::string(v); }

// Runs a parser body, turning what it finds into a ProtocolError with the message's name.
template <class F>
auto parsing(const std::string& what, F&& body) {
  try {
    return body();
  } catch (const Malformed& m) {
    throw ProtocolError("malformed " + what + ": " + m.what);
  } catch (const ProtocolError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProtocolError("malformed " + what + ": " + e.what());
  }
}

// ------------------------------------------------------------------ judge

EvalJob eval_job_of(const json& j) {
  const std::string p;  // paths from the request's top: "shapes[1]"
  EvalJob job;
  const json& cands = array(j, "candidates", p);
  for (size_t i = 0; i < cands.size(); ++i) {
    const std::string cp = at(sub(p, "candidates"), i);
    EvalCandidate c;
    c.name = str(cands[i], "name", cp);
    c.artifact = str(cands[i], "artifact", cp);
    c.spec = str_or(cands[i], "spec", cp, "");
    if (const json* l = optional_field(cands[i], "layout", cp)) c.layout = layout_of(*l, sub(cp, "layout"));
    job.candidates.push_back(std::move(c));
  }
  const json& shapes = array(j, "shapes", p);
  for (size_t i = 0; i < shapes.size(); ++i) job.shapes.push_back(shape_array(shapes[i], at(sub(p, "shapes"), i)));
  const json& modes = array(j, "modes", p);
  job.modes.clear();  // the request's list, not the default
  for (size_t i = 0; i < modes.size(); ++i) job.modes.push_back(mode_of(modes[i], at(sub(p, "modes"), i)));
  if (const json* t = optional_field(j, "timers", p)) {
    if (!t->is_array()) throw Malformed{sub(p, "timers") + " is not an array"};
    job.timers = {};
    for (size_t i = 0; i < t->size(); ++i) {
      const std::string name = string_of((*t)[i], at(sub(p, "timers"), i));
      const auto k = timer_kind(name);
      if (!k)
        throw Malformed{fmt::format("{}: unknown timer '{}' (expected graph, eager, host or chain)",
                                    at(sub(p, "timers"), i), name)};
      job.timers[static_cast<int>(*k)] = true;
    }
  }
  if (const json* a = optional_field(j, "accum", p)) job.accum = accum_of(*a, sub(p, "accum"));
  job.reps = int_or(j, "reps", p, job.reps);
  job.qps = number_or(j, "qps", p, job.qps);
  job.verify_budget = number_or(j, "verify_budget", p, job.verify_budget);
  const json& baselines = array(j, "baselines", p);
  for (size_t i = 0; i < baselines.size(); ++i)
    job.baselines.push_back(string_of(baselines[i], at(sub(p, "baselines"), i)));
  job.csv = str_or(j, "csv", p, "");
  job.command = str_or(j, "command", p, job.command);
  job.runner = str_or(j, "runner", p, "");
  job.candidate_timeout = int_or(j, "candidate_timeout", p, job.candidate_timeout);
  job.confine = boolean_or(j, "confine", p, job.confine);
  job.interleave = boolean_or(j, "interleave", p, job.interleave);
  return job;
}

LtSpaceJob lt_space_job_of(const json& j) {
  const std::string p;
  LtSpaceJob job;
  const json& shapes = array(j, "shapes", p);
  for (size_t i = 0; i < shapes.size(); ++i) job.shapes.push_back(shape_array(shapes[i], at(sub(p, "shapes"), i)));
  const json& layouts = array(j, "layouts", p);
  for (size_t i = 0; i < layouts.size(); ++i) job.layouts.push_back(layout_of(layouts[i], at(sub(p, "layouts"), i)));
  if (const json* a = optional_field(j, "accum", p)) job.accum = accum_of(*a, sub(p, "accum"));
  job.max = int_or(j, "max", p, job.max);
  return job;
}

MethodAnswer method_of(const json& m, const std::string& path) {
  MethodAnswer a;
  a.method = str(m, "method", path);
  const std::string status = str(m, "status", path);
  const auto st = parse_status(status);
  // gpu-disturbed: the judge saw another process on the GPU while it measured this method.
  if (!st || (*st != Status::Ok && *st != Status::Unsupported && *st != Status::Failed && *st != Status::Error &&
              *st != Status::GpuDisturbed))
    throw Malformed{fmt::format("{}.status '{}' is unknown", path, status)};
  a.status = *st;
  // A failure word this build does not know, or one a bench never reports (the compile kinds), is
  // an error (what the tuner always made of it).
  if (m.contains("failure")) {
    a.failure = parse_failure_kind(str(m, "failure", path)).value_or(FailureKind::Error);
    if (a.failure == FailureKind::CompileError || a.failure == FailureKind::CompileTimeout)
      a.failure = FailureKind::Error;
  }
  a.reason = m.contains("reason") ? str(m, "reason", path) : "";
  if (m.contains("rel_err") && m.at("rel_err").is_number() && std::isfinite(m.at("rel_err").get<double>()) &&
      m.at("rel_err").get<double>() >= 0)
    a.rel_err = m.at("rel_err").get<double>();
  if (!m.contains("timing")) return a;
  const json& t = m.at("timing");
  if (!t.is_object()) throw Malformed{path + ".timing is not an object"};
  for (const auto& [mode_word, by_timer] : t.items()) {
    const std::string mp = path + ".timing." + mode_word;
    Mode mode;
    if (mode_word == "offline")
      mode = Mode::Offline;
    else if (mode_word == "server")
      mode = Mode::Server;
    else
      throw Malformed{mp + " is not a mode"};
    if (!by_timer.is_object()) throw Malformed{mp + " is not an object"};
    for (const auto& [timer_word, sj] : by_timer.items()) {
      const std::string tp = mp + "." + timer_word;
      const auto timer = timer_kind(timer_word);
      if (!timer) throw Malformed{tp + " is not a timer"};
      Summary s;
      s.median = finite(sj, "median", tp);
      s.p10 = finite(sj, "p10", tp);
      s.p90 = finite(sj, "p90", tp);
      s.min = finite(sj, "min", tp);
      s.n = static_cast<size_t>(positive_int(field(sj, "n", tp), sub(tp, "n")));
      if (!(s.median > 0)) throw Malformed{tp + ".median is not positive"};
      a.timing[mode][*timer] = s;
    }
  }
  return a;
}

JobAnswer job_answer_of(const json& j) {
  JobAnswer a;
  if (const auto err = error_of(j)) {
    a.error = err->error.empty() ? "job failed" : err->error;
    a.fatal = err->fatal;
    a.kind = err->kind;
    return a;
  }
  a.ok = true;
  a.gpu = str(j, "gpu", "answer");
  const json& shapes = array(j, "shapes", "answer");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string sp = at("answer.shapes", i);
    ShapeAnswer s;
    s.shape = shape_fields(shapes[i], sp);
    const json& methods = array(shapes[i], "methods", sp);
    for (size_t k = 0; k < methods.size(); ++k) s.methods.push_back(method_of(methods[k], at(sub(sp, "methods"), k)));
    a.shapes.push_back(std::move(s));
  }
  return a;
}

json method_json(const MethodAnswer& m) {
  json timing = json::object();
  for (const auto& [mode, by_timer] : m.timing)
    for (const auto& [timer, sum] : by_timer) timing[s(to_string(mode))][s(to_string(timer))] = summary_json(sum);
  return {{"method", m.method},
          {"status", s(to_string(m.status))},
          {"failure", s(to_string(m.failure))},
          {"reason", m.reason},
          {"rel_err", m.rel_err ? json(*m.rel_err) : json(-1.0)},
          {"timing", timing}};
}

// ------------------------------------------------------------------ runner

IpcBuffer buffer_of(const json& v, const std::string& path) {
  if (!v.is_object()) throw Malformed{path + " is not an object"};
  IpcBuffer b;
  b.handle = str(v, "handle", path);
  b.offset = unsigned_of(field(v, "offset", path), path + ".offset");
  b.bytes = unsigned_of(field(v, "bytes", path), path + ".bytes");
  return b;
}
json buffer_json(const IpcBuffer& b) { return {{"handle", b.handle}, {"offset", b.offset}, {"bytes", b.bytes}}; }

RunnerRequest runner_request_of(const json& j) {
  const std::string op = str(j, "op", "request");
  const std::string& p = op;
  if (op == "init")
    return InitRequest{buffer_of(field(j, "warm", p), sub(p, "warm")), boolean_or(j, "deny_sockets", p, false)};
  if (op == "calibrate")
    return CalibrateRequest{unsigned_of(field(j, "ns", p), sub(p, "ns")),
                            positive_int32(field(j, "calls", p), sub(p, "calls"))};
  if (op == "load") {
    LoadRequest r;
    r.artifact = str(j, "artifact", p);
    r.spec = str_or(j, "spec", p, "");
    if (const json* l = optional_field(j, "layout", p)) r.layout = layout_of(*l, sub(p, "layout"));
    if (const json* a = optional_field(j, "accum", p)) r.accum = accum_of(*a, sub(p, "accum"));
    return r;
  }
  if (op == "query") return QueryRequest{shape_fields(j, p)};
  if (op == "bind") {
    BindRequest r;
    r.shape = shape_fields(j, p);
    r.A = buffer_of(field(j, "A", p), sub(p, "A"));
    r.B = buffer_of(field(j, "B", p), sub(p, "B"));
    r.C = buffer_of(field(j, "C", p), sub(p, "C"));
    if (const json* w = optional_field(j, "W", p); w && !w->is_null()) r.W = buffer_of(*w, sub(p, "W"));
    return r;
  }
  if (op == "unbind") return UnbindRequest{};
  if (op == "run") return RunRequest{};
  if (op == "timer") {
    TimerRequest r;
    r.mode = mode_of(field(j, "mode", p), sub(p, "mode"));
    r.target_us = number_of(field(j, "target_us", p), sub(p, "target_us"));
    r.max_inner = positive_int32(field(j, "max_inner", p), sub(p, "max_inner"));
    if (const json* il = optional_field(j, "interlude", p); il && !il->is_null()) {
      const std::string ip = sub(p, "interlude");
      if (!il->is_object()) throw Malformed{ip + " is not an object"};
      InterludeBuffers b;
      b.seed = buffer_of(field(*il, "seed", ip), sub(ip, "seed"));
      if (const json* sl = optional_field(*il, "slots", ip); sl && !sl->is_null())
        b.slots = buffer_of(*sl, sub(ip, "slots"));
      b.interleave = boolean_or(*il, "interleave", ip, false);
      r.interlude = b;
    }
    return r;
  }
  if (op == "sample") {
    const std::string t = str(j, "timer", p);
    if (t == "single") return SampleRequest{true, TimerKind::Graph};
    const auto k = timer_kind(t);
    if (!k) throw Malformed{fmt::format("{}.timer '{}' is not graph, eager, host, chain or single", p, t)};
    return SampleRequest{false, *k};
  }
  throw Malformed{fmt::format(
      "unknown op '{}' (a runner serves init, calibrate, load, query, bind, unbind, run, timer, sample)", op)};
}

// The answer's object with "ok": true, for the answer parsers below.
const json& ok_object(const json& j) {
  if (!j.is_object()) throw Malformed{"the answer is not an object"};
  if (!j.contains("ok") || !j.at("ok").is_boolean() || !j.at("ok").get<bool>()) throw Malformed{"the answer is not ok"};
  return j;
}

template <class F>
auto parsing_answer(const char* op, const json& j, F&& body) {
  try {
    return body(ok_object(j));
  } catch (const Malformed& m) {
    throw ProtocolError(fmt::format("malformed answer to {}: {} ({})", op, m.what, j.dump().substr(0, 200)));
  } catch (const std::exception& e) {
    throw ProtocolError(fmt::format("malformed answer to {}: {} ({})", op, e.what(), j.dump().substr(0, 200)));
  }
}

}  // namespace

// ------------------------------------------------------------------ common

json to_json(const ErrorAnswer& a) {
  if (!a.fatal) return {{"ok", false}, {"error", a.error}};
  return {{"ok", false}, {"fatal", true}, {"kind", s(to_string(a.kind))}, {"error", a.error}, {"exit_after", true}};
}

std::optional<ErrorAnswer> error_of(const json& j) {
  if (!j.is_object()) throw ProtocolError("the answer is not an object");
  const auto ok = j.find("ok");
  if (ok == j.end()) throw ProtocolError("answer.ok is missing");
  if (!ok->is_boolean()) throw ProtocolError("answer.ok is not a boolean");
  const bool fatal = j.contains("fatal") && j.at("fatal").is_boolean() && j.at("fatal").get<bool>();
  if (ok->get<bool>() && !fatal) return std::nullopt;
  ErrorAnswer e;
  e.error = j.contains("error") && j.at("error").is_string() ? j.at("error").get<std::string>() : "";
  e.fatal = fatal;
  if (fatal) {
    const auto k = j.contains("kind") && j.at("kind").is_string() ? parse_failure_kind(j.at("kind").get<std::string>())
                                                                  : std::optional<FailureKind>();
    e.kind = k && is_fatal_fault(*k) ? *k : FailureKind::CudaFatal;
  }
  return e;
}

json ok_answer() { return {{"ok", true}}; }

json summary_json(const Summary& sm) {
  return {{"median", sm.median}, {"p10", sm.p10}, {"p90", sm.p90}, {"min", sm.min}, {"n", sm.n}};
}

// ------------------------------------------------------------------ judge

json to_json(const EvalJob& job) {
  json timers = json::array();
  for (auto t : kTimers)
    if (job.timers[static_cast<int>(t)]) timers.push_back(s(to_string(t)));
  json j{{"op", kEvalOp},
         {"accum", s(to_string(job.accum))},
         {"reps", job.reps},
         {"qps", job.qps},
         {"verify_budget", job.verify_budget},
         {"baselines", job.baselines},
         {"timers", timers},
         {"command", job.command},
         {"confine", job.confine},
         {"interleave", job.interleave},
         {"candidate_timeout", job.candidate_timeout}};
  if (!job.csv.empty()) j["csv"] = job.csv;
  if (!job.runner.empty()) j["runner"] = job.runner;
  j["candidates"] = json::array();
  for (const auto& c : job.candidates)
    j["candidates"].push_back(
        {{"artifact", c.artifact}, {"spec", c.spec}, {"layout", s(to_string(c.layout))}, {"name", c.name}});
  j["shapes"] = json::array();
  for (const auto& sh : job.shapes) j["shapes"].push_back(shape_json(sh));
  j["modes"] = json::array();
  for (auto m : job.modes) j["modes"].push_back(s(to_string(m)));
  return j;
}

json to_json(const LtSpaceJob& job) {
  json j{{"op", kLtSpaceOp}, {"accum", s(to_string(job.accum))}, {"max", job.max}};
  j["shapes"] = json::array();
  for (const auto& sh : job.shapes) j["shapes"].push_back(shape_json(sh));
  j["layouts"] = json::array();
  for (auto l : job.layouts) j["layouts"].push_back(s(to_string(l)));
  return j;
}

json to_json(const JobAnswer& a) {
  if (!a.ok) return to_json(ErrorAnswer{a.error, a.fatal, a.kind});
  json shapes = json::array();
  for (const auto& sh : a.shapes) {
    json methods = json::array();
    for (const auto& m : sh.methods) methods.push_back(method_json(m));
    json o{{"methods", methods}};
    put_shape(o, sh.shape);
    shapes.push_back(std::move(o));
  }
  return {{"ok", true}, {"gpu", a.gpu}, {"shapes", shapes}};
}

json to_json(const LtSpaceAnswer& a) {
  json spaces = json::array();
  for (const auto& sp : a.spaces)
    spaces.push_back({{"shape", shape_json(sp.shape)}, {"layout", s(to_string(sp.layout))}, {"specs", sp.specs}});
  return {{"ok", true}, {"gpu", a.gpu}, {"spaces", spaces}};
}

json to_json(const CanaryJob& job) { return {{"op", kCanaryOp}, {"seconds", job.seconds}, {"n", job.n}}; }

json to_json(const CanaryAnswer& a) {
  return {{"ok", true},        {"healthy", a.healthy},   {"reason", a.reason},
          {"gpu", a.gpu},      {"launches", a.launches}, {"median_us", a.median_us},
          {"max_us", a.max_us}};
}

CanaryAnswer parse_canary_answer(const json& j) {
  if (const auto e = error_of(j)) throw ProtocolError("the canary could not run: " + e->error);
  return parsing("canary answer", [&] {
    CanaryAnswer a;
    a.healthy = boolean_or(j, "healthy", "answer", false);
    a.reason = str_or(j, "reason", "answer", "");
    a.gpu = str_or(j, "gpu", "answer", "");
    a.launches = int_or(j, "launches", "answer", 0);
    if (j.contains("median_us") && j.at("median_us").is_number()) a.median_us = j.at("median_us").get<double>();
    if (j.contains("max_us") && j.at("max_us").is_number()) a.max_us = j.at("max_us").get<double>();
    return a;
  });
}

JudgeRequest parse_judge_request(const json& j) {
  if (!j.is_object()) throw ProtocolError("malformed judge request: not an object");
  const auto op = j.find("op");
  if (op == j.end() || !op->is_string())
    throw ProtocolError("malformed judge request: no \"op\" (the judge serves eval, lt-space and canary)");
  const std::string name = op->get<std::string>();
  if (name == kEvalOp) return parsing("eval request", [&] { return JudgeRequest(eval_job_of(j)); });
  if (name == kLtSpaceOp) return parsing("lt-space request", [&] { return JudgeRequest(lt_space_job_of(j)); });
  if (name == kCanaryOp)
    return parsing("canary request", [&] {
      CanaryJob c;
      if (const json* v = optional_field(j, "seconds", ""); v && v->is_number()) c.seconds = v->get<double>();
      c.n = int_or(j, "n", "", c.n);
      if (!(c.seconds > 0 && c.seconds <= 60) || c.n < 64 || c.n > 2048 || c.n % 64 != 0)
        throw ProtocolError("canary request: seconds must be in (0, 60], n a multiple of 64 in [64, 2048]");
      return JudgeRequest(c);
    });
  throw ProtocolError(fmt::format("unknown op '{}' (the judge serves eval, lt-space and canary)", name));
}

std::optional<JobAnswer> parse_job_answer(const json& j, std::string* why) {
  try {
    return job_answer_of(j);
  } catch (const Malformed& m) {
    if (why) *why = "malformed judge answer: " + m.what;
  } catch (const ProtocolError& e) {  // error_of's: the message names the problem already
    if (why) *why = std::string("malformed judge answer: ") + e.what();
  } catch (const std::exception& e) {
    if (why) *why = std::string("malformed judge answer: ") + e.what();
  }
  return std::nullopt;
}

LtSpaceAnswer parse_lt_space_answer(const json& j) {
  return parsing("lt-space answer", [&] {
    LtSpaceAnswer a;
    a.gpu = str_or(j, "gpu", "answer", "");
    const json& spaces = array(j, "spaces", "answer");
    for (size_t i = 0; i < spaces.size(); ++i) {
      const std::string sp = at("answer.spaces", i);
      LtSpace space;
      space.shape = shape_array(field(spaces[i], "shape", sp), sub(sp, "shape"));
      space.layout = layout_of(field(spaces[i], "layout", sp), sub(sp, "layout"));
      const json& specs = array(spaces[i], "specs", sp);
      for (size_t k = 0; k < specs.size(); ++k) space.specs.push_back(string_of(specs[k], at(sub(sp, "specs"), k)));
      a.spaces.push_back(std::move(space));
    }
    return a;
  });
}

// ------------------------------------------------------------------ runner

std::string_view op_of(const RunnerRequest& r) {
  static constexpr std::string_view kOps[] = {"init",   "calibrate", "load",  "query", "bind",
                                              "unbind", "run",       "timer", "sample"};
  static_assert(std::size(kOps) == std::variant_size_v<RunnerRequest>, "one op per request type");
  return kOps[r.index()];
}

json to_json(const RunnerRequest& r) {
  json j{{"op", s(op_of(r))}};
  if (const auto* x = std::get_if<InitRequest>(&r)) {
    j["warm"] = buffer_json(x->warm), j["deny_sockets"] = x->deny_sockets;
  } else if (const auto* x = std::get_if<CalibrateRequest>(&r)) {
    j["ns"] = x->ns, j["calls"] = x->calls;
  } else if (const auto* x = std::get_if<LoadRequest>(&r)) {
    j["artifact"] = x->artifact, j["spec"] = x->spec;
    j["layout"] = s(to_string(x->layout)), j["accum"] = s(to_string(x->accum));
  } else if (const auto* x = std::get_if<QueryRequest>(&r)) {
    put_shape(j, x->shape);
  } else if (const auto* x = std::get_if<BindRequest>(&r)) {
    put_shape(j, x->shape);
    j["A"] = buffer_json(x->A), j["B"] = buffer_json(x->B), j["C"] = buffer_json(x->C);
    j["W"] = x->W ? buffer_json(*x->W) : json(nullptr);
  } else if (const auto* x = std::get_if<TimerRequest>(&r)) {
    j["mode"] = s(to_string(x->mode)), j["target_us"] = x->target_us, j["max_inner"] = x->max_inner;
    if (x->interlude)
      j["interlude"] = {{"seed", buffer_json(x->interlude->seed)},
                        {"slots", x->interlude->slots ? buffer_json(*x->interlude->slots) : json(nullptr)},
                        {"interleave", x->interlude->interleave}};
  } else if (const auto* x = std::get_if<SampleRequest>(&r)) {
    j["timer"] = x->single ? std::string("single") : s(to_string(x->timer));
  }
  return j;
}

RunnerRequest parse_runner_request(const json& j) {
  return parsing("runner request", [&] { return runner_request_of(j); });
}

json to_json(const InitAnswer& a) { return {{"ok", true}, {"pid", a.pid}}; }
json to_json(const TimeAnswer& a) { return {{"ok", true}, {"us", a.us}, {"calls", a.calls}}; }
json to_json(const QueryAnswer& a) { return {{"ok", true}, {"refusal", a.refusal}, {"workspace", a.workspace}}; }
json to_json(const TimerAnswer& a) { return {{"ok", true}, {"inner", a.inner}, {"graph_error", a.graph_error}}; }

InitAnswer parse_init_answer(const json& j) {
  return parsing_answer("init", j, [](const json& o) { return InitAnswer{integer_of(field(o, "pid", ""), "pid")}; });
}

TimeAnswer parse_time_answer(const json& j, const char* op) {
  return parsing_answer(op, j, [](const json& o) {
    return TimeAnswer{finite(o, "us", ""), positive_int32(field(o, "calls", ""), "calls")};
  });
}

QueryAnswer parse_query_answer(const json& j) {
  return parsing_answer("query", j, [](const json& o) {
    return QueryAnswer{str(o, "refusal", ""), static_cast<size_t>(unsigned_of(field(o, "workspace", ""), "workspace"))};
  });
}

TimerAnswer parse_timer_answer(const json& j) {
  return parsing_answer("timer", j, [](const json& o) {
    return TimerAnswer{positive_int32(field(o, "inner", ""), "inner"), str(o, "graph_error", "")};
  });
}

std::string to_hex(const void* p, size_t n) {
  std::string out;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", b[i]);
  return out;
}

void from_hex(const std::string& hex, void* p, size_t n) {
  if (hex.size() != 2 * n) throw InputError("bad IPC handle");
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
}

}  // namespace cudal2::protocol
