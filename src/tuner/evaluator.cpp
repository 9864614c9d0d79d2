#include "tuner/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>
#include <utility>

namespace cudal2::evaluation {

namespace {

using Clock = std::chrono::steady_clock;

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace

void Evaluator::evaluate(std::vector<Pending*> cands, std::vector<CandidateOutcome*> outs,
                         const std::vector<Shape>& shapes) {
  const auto job = run_job(cands, shapes);
  if (!job->answered() && cands.size() > 1) {
    // The judge died, hung or answered nonsense, and took the job with it: find who by
    // running the candidates one at a time.
    if (req_.progress)
      std::fprintf(stderr, "cudal2: a job of %zu candidates failed (%s); retrying them one at a time\n", cands.size(),
                   describe_failure(job->r, job->malformed).c_str());
    for (size_t i = 0; i < cands.size(); ++i) evaluate({cands[i]}, {outs[i]}, shapes);
    return;
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    outs[i]->measure_seconds += job->seconds / static_cast<double>(cands.size());
    settle(*cands[i], *outs[i], shapes, run_of(job, method_name(*cands[i], i)));
  }
  sink_.flush();  // the job's rows, together
}

void Evaluator::settle(Pending& p, CandidateOutcome& co, const std::vector<Shape>& shapes, const CandidateRun& first) {
  std::vector<CandidateRun> runs{first};
  FailureKind fault = is_fatal_fault(first.trial.outcome.kind) ? first.trial.outcome.kind : FailureKind::None;
  auto rerun = [&] {
    if (req_.progress)
      std::fprintf(stderr, "cudal2: %s: %s; evaluating it again in a fresh runner\n", p.hash.c_str(),
                   runs.back().trial.detail.substr(0, 200).c_str());
    judge_->stop();  // a fresh judge as well as a fresh runner
    const auto job = run_job({&p}, shapes);
    co.measure_seconds += job->seconds;
    runs.push_back(run_of(job, method_name(p, 0), fault));
    if (is_fatal_fault(runs.back().trial.outcome.kind)) fault = runs.back().trial.outcome.kind;
    return runs.back().trial;
  };
  auto canary = [&] {
    auto h = run_canary_process();
    if (req_.progress && !h.healthy)
      std::fprintf(stderr, "cudal2: the GPU is disturbed (%s)\n", h.reason.substr(0, 300).c_str());
    return h;
  };
  auto wait = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  const auto a = attribution::attribute(first.trial, rerun, canary, wait, req_.attribution);
  if (a.cause == attribution::Cause::Disturbed) {
    // Nobody's fault, and nothing measured: no row, no reward; a later run measures it again.
    co.status = Status::GpuDisturbed;
    co.detail = a.note;
    for (const auto& s : shapes) co.disturbed_shapes.push_back(s.str());
    if (req_.progress)
      std::fprintf(stderr, "cudal2: %s not measured: %s\n", p.hash.c_str(), a.note.substr(0, 300).c_str());
    return;
  }
  const CandidateRun& r = runs.at(static_cast<size_t>(a.trial));
  if (r.has_rows) {
    record_results(p, r, co, a.note);
  } else {
    co.status = r.trial.outcome;
    co.detail = a.note.empty() ? r.trial.detail : fmt::format("{} [{}]", r.trial.detail, a.note);
    record_failure(p, co.status, co.detail, co, shapes);
  }
  if (a.cause == attribution::Cause::Transient) co.transient_fault = a.first;
}

std::shared_ptr<const JobRun> Evaluator::run_job(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes) {
  auto out = std::make_shared<JobRun>();
  const auto t0 = Clock::now();
  const nlohmann::json job = job_for(cands, shapes);
  const auto timeout = std::chrono::seconds(req_.job_overhead_s + req_.timeout_s * static_cast<int>(cands.size()));
  out->r = judge_->call(job, timeout);
  out->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (out->r.ok()) out->answer = protocol::parse_job_answer(out->r.response, &out->malformed);
  if (out->r.ok() && out->r.response.is_object() && out->r.response.value("exit_after", false) == true) judge_->stop();
  return out;
}

CandidateRun Evaluator::run_of(const std::shared_ptr<const JobRun>& job, const std::string& name,
                               FailureKind fault) const {
  CandidateRun run;
  run.job = job, run.name = name;
  attribution::Trial& t = run.trial;
  if (!job->answered()) {
    const auto& answer = job->answer;
    const auto& r = job->r;
    if (answer && answer->fatal)
      t.outcome = answer->kind;
    else if (answer)
      t.outcome = FailureKind::Error;
    else if (r.ok())
      t.outcome = FailureKind::ProtocolError;  // an answer, but not one we can read
    else if (r.kind == sandbox::Outcome::Hung)
      t.outcome = FailureKind::Hang;
    else if (r.kind == sandbox::Outcome::Crashed)
      t.outcome = FailureKind::Crash;
    else
      t.outcome = r.kind == sandbox::Outcome::ProtocolError ? FailureKind::ProtocolError : FailureKind::Exited;
    t.detail = fmt::format("{}: {}", to_string(t.outcome), describe_failure(r, job->malformed));
    return run;
  }
  int ok_shapes = 0, unsupported = 0;
  std::string disturbed;  // the first shape the judge saw disturbed, and what it saw
  for (const auto& sh : job->answer->shapes)
    for (const auto& m : sh.methods) {
      if (m.method != name) continue;
      run.has_rows = true;
      const Outcome kind = m.status == Status::Failed ? Outcome(m.failure) : Outcome(m.status);
      if (kind.failed() && !t.outcome.failed()) {
        t.outcome = kind;
        t.detail = fmt::format("{}: {}: {}", sh.shape.str(), to_string(kind), m.reason);
        run.failure = fmt::format("{}: {}", sh.shape.str(), m.reason);
      }
      if (kind == Status::GpuDisturbed && disturbed.empty())
        disturbed = fmt::format("{}: gpu-disturbed: {}", sh.shape.str(), m.reason);
      ok_shapes += kind == Status::Ok;
      unsupported += kind == Status::Unsupported;
    }
  if (!run.has_rows) {
    t.outcome = fault != FailureKind::None ? Outcome(fault) : Outcome(FailureKind::ProtocolError);
    t.detail = fmt::format("{}: the judge's answer has no result for {}", to_string(t.outcome), name);
  } else if (!t.outcome.failed() && !disturbed.empty()) {
    // A shape measured while another process used the GPU: the whole run is measured again
    // (tuner/attribution.hpp), none of it recorded.
    t.outcome = Status::GpuDisturbed;
    t.detail = disturbed;
  } else if (!t.outcome.failed()) {
    t.outcome = ok_shapes     ? Outcome(Status::Ok)
                : unsupported ? Outcome(Status::Unsupported)
                              : Outcome(FailureKind::Error);
  }
  return run;
}

attribution::Health Evaluator::run_canary_process() const {
  sandbox::Child w = make_judge(req_);
  protocol::CanaryJob job;
  job.seconds =
      std::clamp(req_.attribution.canary_seconds, attribution::kMinCanarySeconds, attribution::kMaxCanarySeconds);
  const auto r = w.call(to_json(job), std::chrono::seconds(60));
  if (!r.ok()) return {false, "the canary's judge " + describe_failure(r, "")};
  try {
    if (const auto e = protocol::error_of(r.response)) {
      if (e->fatal) return {false, fmt::format("the canary hit {}: {}", to_string(e->kind), e->error)};
      return {true, "no canary: " + e->error};
    }
    if (!r.response.contains("healthy")) return {true, "no canary: the judge does not serve it"};
    const auto c = protocol::parse_canary_answer(r.response);
    return {c.healthy, c.reason};
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
}

sandbox::Child make_judge(const EvalRequest& req) {
  sandbox::Options wopt;
  wopt.timeout = std::chrono::seconds(req.job_overhead_s + req.timeout_s);
  if (!req.visible_devices.empty()) wopt.env.push_back("CUDA_VISIBLE_DEVICES=" + req.visible_devices);
  return sandbox::Child({req.judge_exe.empty() ? self_exe() : req.judge_exe, "judge"}, wopt);
}

std::string Evaluator::method_name(const Pending& p, size_t i) const {
  return req_.name_by_hash || !req_.csv_path.empty() ? "k-" + p.hash : fmt::format("candidate-{}", i);
}

nlohmann::json Evaluator::job_for(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes) const {
  protocol::EvalJob job;
  job.measure_settings() = req_.measure_settings();
  job.accum = cands.front()->accum;
  job.baselines = req_.baselines;
  job.command = req_.command_line;
  job.confine = req_.confine;
  job.candidate_timeout = req_.timeout_s;
  if (!req_.csv_path.empty()) job.csv = std::filesystem::absolute(req_.csv_path).string();
  for (size_t i = 0; i < cands.size(); ++i)
    job.candidates.push_back({method_name(*cands[i], i), cands[i]->built.artifact,
                              cands[i]->spec ? cands[i]->spec->text() : "", cands[i]->layout});
  job.shapes = shapes;
  return to_json(job);
}

std::string Evaluator::describe_failure(const sandbox::Result& r, const std::string& malformed) {
  if (!malformed.empty()) return malformed;
  if (r.ok()) {
    const auto& e = r.response.is_object() && r.response.contains("error") ? r.response.at("error") : nlohmann::json();
    return e.is_string() ? e.get<std::string>() : std::string("job failed");
  }
  std::string tail = r.stderr_tail;
  if (tail.size() > 1500) tail = "..." + tail.substr(tail.size() - 1500);
  return r.message + (tail.empty() ? "" : "\n" + tail);
}

MeasurementRecord Evaluator::row_for(const Pending& p, const std::string& gpu, const Shape& s) {
  MeasurementRecord mr;
  mr.spec_hash = p.hash, mr.gpu = gpu, mr.dtype = std::string(to_string(p.accum));
  mr.layout = std::string(to_string(p.layout));
  mr.m = s.m, mr.n = s.n, mr.k = s.k;
  return mr;
}

void Evaluator::record_failure(const Pending& p, Outcome kind, const std::string& detail, CandidateOutcome& co,
                               const std::vector<Shape>& shapes) {
  for (const auto& s : shapes) {
    auto mr = row_for(p, local_gpu_, s);
    mr.mode = std::string(to_string(req_.modes.front())), mr.timer = "graph";
    mr.status = std::string(to_string(kind)), mr.failure = detail.substr(0, 4000);
    mr.reward = score_of(req_, p, kind);
    if (mr.reward) co.score[s.str()] = *mr.reward;
    sink_.measurement(mr);
  }
}

void Evaluator::record_results(const Pending& p, const CandidateRun& run, CandidateOutcome& co,
                               const std::string& note) {
  const std::string& name = run.name;
  const protocol::JobAnswer& answer = *run.job->answer;
  for (const auto& sh : answer.shapes) {
    nlohmann::json baselines = nlohmann::json::object();
    std::map<std::pair<Mode, TimerKind>, double> best_baseline;  // (mode, timer) -> us
    const protocol::MethodAnswer* cand = nullptr;
    for (const auto& m : sh.methods) {
      if (m.method == name)
        cand = &m;
      else if (m.method.rfind("k-", 0) != 0 && m.method.rfind("candidate-", 0) != 0) {
        nlohmann::json t = nlohmann::json::object();
        for (const auto& [mode, timers] : m.timing)
          for (const auto& [timer, sum] : timers) {
            t[std::string(to_string(mode))][std::string(to_string(timer))] = protocol::summary_json(sum);
            auto& b = best_baseline[{mode, timer}];
            if (sum.median > 0 && (b == 0 || sum.median < b)) b = sum.median;
          }
        baselines[m.method] = t;
      }
    }
    if (!cand) continue;
    const Shape& s = sh.shape;
    if (const auto b = best_baseline.find({Mode::Offline, TimerKind::Graph}); b != best_baseline.end())
      co.baseline_us[s.str()] = b->second;
    // ok, unsupported, or the failure kind of what failed (a failed check: its kind; an error: error).
    const Outcome kind = cand->status == Status::Failed ? Outcome(cand->failure) : Outcome(cand->status);
    for (auto mode : req_.modes)
      for (auto t : kTimers) {
        const auto mit = cand->timing.find(mode);
        const Summary* sum = nullptr;
        if (mit != cand->timing.end() && mit->second.count(t)) sum = &mit->second.at(t);
        if (kind == Status::Ok && !sum && !req_.timers[static_cast<int>(t)]) continue;  // not asked for
        // The store keeps the graph, eager and host timers as rows (its schema's CHECK on
        // measurements.timer); a chain time goes on the graph row of its mode (chain_us), where
        // `cudal2 export` ranks by both timers. Every reward comes from the graph timer.
        if (t == TimerKind::Chain) continue;
        auto mr = row_for(p, answer.gpu, s);
        mr.mode = std::string(to_string(mode)), mr.timer = std::string(to_string(t));
        mr.failure = cand->reason.substr(0, 4000);
        const Outcome row = sum && kind == Status::Ok ? Outcome(Status::Ok)
                            : kind == Status::Ok      ? Outcome(Status::NotCapturable)
                                                      : kind;
        if (!note.empty()) mr.failure = (note + (mr.failure.empty() ? "" : ". " + mr.failure)).substr(0, 4000);
        mr.status = std::string(to_string(row));
        if (row == Status::Ok) {
          mr.median_us = sum->median, mr.p10_us = sum->p10, mr.p90_us = sum->p90, mr.min_us = sum->min;
          if (mode == Mode::Offline && t == TimerKind::Graph) co.graph_us[s.str()] = sum->median;
          if (t == TimerKind::Graph && mit->second.count(TimerKind::Chain) &&
              mit->second.at(TimerKind::Chain).median > 0)
            mr.chain_us = mit->second.at(TimerKind::Chain).median;
        }
        if (cand->rel_err) mr.rel_err = *cand->rel_err;
        mr.baseline_json = baselines.dump();
        const auto b = best_baseline.find({mode, t});
        mr.reward =
            score_of(req_, p, row, mr.median_us.value_or(0), b == best_baseline.end() ? 0.0 : b->second, mr.rel_err);
        if (mr.reward && mode == Mode::Offline && t == TimerKind::Graph) co.score[s.str()] = *mr.reward;
        sink_.measurement(mr);
      }
  }
  co.status = run.trial.outcome;  // run_of: the first failure over the shapes, else ok, else unsupported
  co.detail = run.failure;
  if (!note.empty() && co.status.failed()) co.detail = fmt::format("{} [{}]", co.detail, note);
}
}  // namespace cudal2::evaluation
