#include "tuner/evaluate.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <set>
#include <thread>

#include "codegen/codegen.hpp"
#include "codegen/family.hpp"
#include "core/input_file.hpp"
#include "jit/compiler.hpp"
#include "protocol/protocol.hpp"
#include "sandbox/sandbox.hpp"

namespace cudal2 {

namespace {

using Clock = std::chrono::steady_clock;

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// One candidate on its way through compile -> job -> sink.
struct Pending {
  std::optional<KernelSpec> spec;  // none: the free-form source
  std::string source, text, hash, family;
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
  std::vector<Shape> shapes;  // the shapes it is measured on
  std::string prebuilt;       // an artifact built elsewhere (EvalRequest::artifacts): not compiled
  CompileResult built;
};

std::optional<double> score_of(const EvalRequest& req, const Pending& p, Outcome status, double time_us = 0,
                               double baseline_us = 0, std::optional<double> rel_err = std::nullopt) {
  if (!req.score) return std::nullopt;
  ScoreInput in;
  in.status = status, in.time_us = time_us, in.baseline_us = baseline_us, in.rel_err = rel_err;
  in.source_bytes = p.spec ? 0 : p.source.size();
  return req.score(in);
}

// Folds one shape's outcome of a candidate into its outcome so far: times, baselines and scores
// per shape; the first failure kind wins over ok, ok over unsupported, unsupported over
// gpu-disturbed (the shapes it was not measured on stay listed in disturbed_shapes).
void merge_outcome(CandidateOutcome& into, const CandidateOutcome& part) {
  for (const auto& [k, v] : part.graph_us) into.graph_us[k] = v;
  for (const auto& [k, v] : part.baseline_us) into.baseline_us[k] = v;
  for (const auto& [k, v] : part.score) into.score[k] = v;
  into.measure_seconds += part.measure_seconds;
  into.disturbed_shapes.insert(into.disturbed_shapes.end(), part.disturbed_shapes.begin(), part.disturbed_shapes.end());
  if (into.transient_fault.empty()) into.transient_fault = part.transient_fault;
  auto rank = [](const Outcome& s) {
    return s == Status::NotRun         ? 0
           : s == Status::GpuDisturbed ? 1
           : s == Status::Unsupported  ? 2
           : s == Status::Ok           ? 3
                                       : 4;
  };
  if (rank(part.status) > rank(into.status)) {
    into.status = part.status;
    into.detail = part.detail;
  }
}

// The builds of cands[todo...], in that order: specs that run in the judge (runs_in_judge) need
// no artifact and are "built" at once; the rest are compiled (in parallel, cached).
std::vector<CompileResult> build_candidates(const Compiler& jit, const std::vector<Pending>& cands,
                                            const std::vector<size_t>& todo) {
  std::vector<CompileResult> out(todo.size());
  std::vector<std::string> sources;
  std::vector<size_t> where;
  for (size_t j = 0; j < todo.size(); ++j) {
    const Pending& p = cands[todo[j]];
    if (!p.prebuilt.empty()) {
      out[j].status = "ok", out[j].key = "prebuilt", out[j].artifact = p.prebuilt, out[j].cached = true;
      continue;
    }
    if (p.spec && runs_in_judge(*p.spec, p.text)) {
      out[j].status = "ok", out[j].key = "in-judge", out[j].cached = true;
      continue;
    }
    sources.push_back(p.source);
    where.push_back(j);
  }
  auto got = jit.compile_all(sources);
  for (size_t i = 0; i < where.size(); ++i) out[where[i]] = std::move(got[i]);
  return out;
}

// One job in the judge: its answer, or why there is none.
struct JobRun {
  sandbox::Result r;
  std::optional<protocol::JobAnswer> answer;
  std::string malformed;  // the answer could not be read: why
  double seconds = 0;
  bool answered() const { return answer && answer->ok; }
};

// One run of one candidate: what it came to (attribution's view), and the job it ran in, from
// which its rows are recorded when its verdict is the one that stands.
struct CandidateRun {
  attribution::Trial trial;
  std::shared_ptr<const JobRun> job;
  std::string name;       // its method name in that job
  bool has_rows = false;  // the job's answer holds results for it
  std::string failure;    // with rows and a failure: "shape: reason" of its first failed shape
};

class Evaluator {
 public:
  Evaluator(const EvalRequest& req, EvalSink& sink)
      : req_(req), sink_(sink), local_gpu_(req.local_gpu), judge_(start_judge(req)) {}

  // Evaluates cands (all compiled ok) on shapes, writing their outcomes. A candidate whose verdict
  // a disturbed GPU can cause (a fault, a wrong result, an implausible time) is attributed before
  // anything is recorded (tuner/attribution.hpp): the trusted canary, re-runs alone in a fresh
  // runner, backoff; what stands is recorded, or nothing when the GPU stayed disturbed.
  void evaluate(std::vector<Pending*> cands, std::vector<CandidateOutcome*> outs, const std::vector<Shape>& shapes) {
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

 private:
  // Attributes a candidate's first run and records the run whose verdict stands.
  void settle(Pending& p, CandidateOutcome& co, const std::vector<Shape>& shapes, const CandidateRun& first) {
    std::vector<CandidateRun> runs{first};
    FailureKind fault = is_fatal_fault(first.trial.outcome.kind) ? first.trial.outcome.kind : FailureKind::None;
    auto rerun = [&] {
      if (req_.progress)
        std::fprintf(stderr, "cudal2: %s: %s; evaluating it again in a fresh runner\n", p.hash.c_str(),
                     runs.back().trial.detail.substr(0, 200).c_str());
      judge_.stop();  // a fresh judge as well as a fresh runner
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

  // Runs cands in one job of the judge.
  std::shared_ptr<const JobRun> run_job(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes) {
    auto out = std::make_shared<JobRun>();
    const auto t0 = Clock::now();
    const nlohmann::json job = job_for(cands, shapes);
    const auto timeout = std::chrono::seconds(req_.job_overhead_s + req_.timeout_s * static_cast<int>(cands.size()));
    out->r = judge_.call(job, timeout);
    out->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (out->r.ok()) out->answer = protocol::parse_job_answer(out->r.response, &out->malformed);
    if (out->r.ok() && out->r.response.is_object() && out->r.response.value("exit_after", false) == true) judge_.stop();
    return out;
  }

  // What candidate `name` came to in job: the first failure over its shapes (as "shape: kind:
  // reason"), else ok on any shape, else unsupported; a job without an answer: what killed it.
  // fault: the fault an earlier run of it hit (None: none); a re-run whose answer has no result
  // for it is that fault coming back before the fresh runner could answer (a device assert or an
  // illegal address poisons the runner's context at once), not the judge's protocol error.
  CandidateRun run_of(const std::shared_ptr<const JobRun>& job, const std::string& name,
                      FailureKind fault = FailureKind::None) const {
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

  // The trusted canary (judge/canary.hpp) in a fresh judge process on this evaluation's GPU. A
  // judge that dies or hangs doing it is a disturbed GPU; one that does not serve the canary (a
  // replaying or scripted judge: no GPU to ask) gives no evidence either way and counts as healthy.
  attribution::Health run_canary_process() const {
    sandbox::Child w = start_judge(req_);
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

  static sandbox::Child start_judge(const EvalRequest& req) {
    sandbox::Options wopt;
    wopt.timeout = std::chrono::seconds(req.job_overhead_s + req.timeout_s);
    if (!req.visible_devices.empty()) wopt.env.push_back("CUDA_VISIBLE_DEVICES=" + req.visible_devices);
    return sandbox::Child({req.judge_exe.empty() ? self_exe() : req.judge_exe, "judge"}, wopt);
  }

  std::string method_name(const Pending& p, size_t i) const {
    return req_.name_by_hash || !req_.csv_path.empty() ? "k-" + p.hash : fmt::format("candidate-{}", i);
  }

  nlohmann::json job_for(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes) const {
    protocol::EvalJob job;
    job.accum = cands.front()->accum;
    job.reps = req_.reps;
    job.qps = req_.qps;
    job.verify_budget = req_.verify_budget;
    job.baselines = req_.baselines;
    job.timers = req_.timers;
    job.interleave = req_.interleave;
    job.command = req_.command_line;
    job.confine = req_.confine;
    job.candidate_timeout = req_.timeout_s;
    if (!req_.csv_path.empty()) job.csv = std::filesystem::absolute(req_.csv_path).string();
    for (size_t i = 0; i < cands.size(); ++i)
      job.candidates.push_back({method_name(*cands[i], i), cands[i]->built.artifact,
                                cands[i]->spec ? cands[i]->spec->text() : "", cands[i]->layout});
    job.shapes = shapes;
    job.modes = req_.modes;
    return to_json(job);
  }

  static std::string describe_failure(const sandbox::Result& r, const std::string& malformed) {
    if (!malformed.empty()) return malformed;
    if (r.ok()) {
      const auto& e =
          r.response.is_object() && r.response.contains("error") ? r.response.at("error") : nlohmann::json();
      return e.is_string() ? e.get<std::string>() : std::string("job failed");
    }
    std::string tail = r.stderr_tail;
    if (tail.size() > 1500) tail = "..." + tail.substr(tail.size() - 1500);
    return r.message + (tail.empty() ? "" : "\n" + tail);
  }

  static MeasurementRecord row_for(const Pending& p, const std::string& gpu, const Shape& s) {
    MeasurementRecord mr;
    mr.spec_hash = p.hash, mr.gpu = gpu, mr.dtype = std::string(to_string(p.accum));
    mr.layout = std::string(to_string(p.layout));
    mr.m = s.m, mr.n = s.n, mr.k = s.k;
    return mr;
  }

  // One failure row per shape, so a resumed run skips the candidate.
  void record_failure(const Pending& p, Outcome kind, const std::string& detail, CandidateOutcome& co,
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

  // Records the rows of run (one with rows: run_of found it in its job's answer); its outcome is
  // the candidate's. note: "" when the run's verdict stood without question; else what attribution
  // found (kept with every row: a transient fault before an ok row, a reproduced one before a
  // failed row).
  void record_results(const Pending& p, const CandidateRun& run, CandidateOutcome& co, const std::string& note) {
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
          // The store keeps the graph, eager and host timers (its schema's CHECK on measurements.timer);
          // chain times reach the CSV and the console, and every reward comes from the graph timer.
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

  const EvalRequest& req_;
  EvalSink& sink_;
  std::string local_gpu_;
  sandbox::Child judge_;
};

}  // namespace

std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req, EvalSink& sink) {
  std::vector<Pending> cands;
  if (!req.spec_shapes.empty() && req.spec_shapes.size() != req.specs.size())
    throw InputError("spec_shapes must have one entry per spec");
  for (const auto& list : req.spec_shapes)
    for (const auto& s : list)
      if (std::find(req.shapes.begin(), req.shapes.end(), s) == req.shapes.end())
        throw InputError("spec_shapes names " + s.str() + ", which is not one of the request's shapes");
  for (size_t i = 0; i < req.specs.size(); ++i) {
    const auto& s = req.specs[i];
    Pending p;
    p.spec = s, p.source = generate_source(s), p.text = s.text(), p.hash = s.hash(), p.family = s.family;
    p.layout = s.layout, p.accum = s.accum;
    p.shapes = req.spec_shapes.empty() || req.spec_shapes[i].empty() ? req.shapes : req.spec_shapes[i];
    cands.push_back(std::move(p));
  }
  for (const auto& src : req.free_sources) {
    // A free-form candidate is named by the hash of its text.
    Pending p;
    p.source = src;
    p.text = fmt::format("source {:016x} {} {}", fnv1a64(src), to_string(req.free_layout), to_string(req.free_accum));
    p.hash = fmt::format("{:016x}", fnv1a64(p.text));
    p.family = "source", p.layout = req.free_layout, p.accum = req.free_accum;
    p.shapes = req.shapes;
    cands.push_back(std::move(p));
  }
  for (const auto& a : req.artifacts) {
    // Named by the hash of its bytes and of the spec it runs with: another build of the same spec
    // (other compiler flags) is another candidate.
    if (a.spec && runs_in_judge(*a.spec, a.spec->text()))
      throw InputError("a " + a.spec->family + " spec runs in the judge from data: it has no artifact to run");
    Pending p;
    p.prebuilt = a.path, p.spec = a.spec;
    p.layout = a.spec ? a.spec->layout : req.free_layout, p.accum = a.spec ? a.spec->accum : req.free_accum;
    const std::string bytes = read_input_bytes(a.path, "artifact", size_t{1} << 30);
    p.text = fmt::format("artifact {:016x} {}", fnv1a64(bytes),
                         a.spec ? a.spec->text() : fmt::format("{} {}", to_string(p.layout), to_string(p.accum)));
    p.hash = fmt::format("{:016x}", fnv1a64(p.text));
    p.family = "artifact";
    p.shapes = req.shapes;
    cands.push_back(std::move(p));
  }
  std::vector<CandidateOutcome> out(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    out[i].spec_text = cands[i].text, out[i].spec_hash = cands[i].hash;
    out[i].device = req.visible_devices;
    sink.spec({cands[i].hash, cands[i].family,
               cands[i].spec || !cands[i].prebuilt.empty() ? cands[i].text : cands[i].source});
  }
  if (cands.empty()) return out;

  // Compile in chunks on a background thread while the previous chunk is being measured: the
  // GPU is not idle while nvcc works, and a killed run keeps every artifact compiled so far.
  CompileOptions copt;
  copt.jobs = req.compile_jobs;
  Compiler jit(copt);
  const size_t jobs = jit.options().jobs > 0 ? jit.options().jobs : std::max(1u, std::thread::hardware_concurrency());
  const size_t batch = static_cast<size_t>(std::max(1, req.batch));
  const size_t chunk = std::max(batch, (jobs + batch - 1) / batch * batch);
  auto compile_chunk = [&](size_t first) {
    return std::async(std::launch::async, [&jit, &cands, first, chunk] {
      std::vector<size_t> todo;
      for (size_t i = first; i < std::min(cands.size(), first + chunk); ++i) todo.push_back(i);
      return build_candidates(jit, cands, todo);
    });
  };
  Evaluator ev(req, sink);
  const std::string& local_gpu = req.local_gpu;
  const auto t0 = Clock::now();
  size_t done = 0;
  auto stopping = [&] { return req.stop && req.stop->load(); };
  // Of candidates `which` on `shape`, those this call may measure (EvalRequest::claim); the others
  // are noted as another tuner's.
  auto claimed = [&](const std::vector<size_t>& which, const Shape& shape) {
    if (!req.claim || which.empty()) return which;
    std::vector<WorkItem> items;
    for (size_t i : which) items.push_back({cands[i].hash, cands[i].layout, cands[i].accum, shape});
    const auto got = req.claim(items);
    std::vector<size_t> mine;
    for (size_t j = 0; j < which.size(); ++j) {
      if (got.at(j)) {
        mine.push_back(which[j]);
      } else {
        out[which[j]].elsewhere_shapes.push_back(shape.str());
      }
    }
    return mine;
  };
  // Records candidate i's build; false (with its failure recorded on each of its shapes) when it
  // did not compile.
  auto record_build = [&](size_t i, const CompileResult& built) {
    Pending& p = cands[i];
    CandidateOutcome& co = out[i];
    p.built = built;
    co.compile_seconds = p.built.seconds;
    BuildRecord br;
    br.spec_hash = p.hash, br.source_hash = p.built.key, br.status = p.built.status;
    br.compile_seconds = p.built.seconds, br.log = p.built.log, br.artifact_path = p.built.artifact;
    sink.build(br);
    if (p.built.ok()) return true;
    co.status = p.built.status == "timeout" ? FailureKind::CompileTimeout : FailureKind::CompileError;
    co.detail = p.built.log.substr(0, 2000);
    MeasurementRecord mr;
    for (const auto& s : p.shapes) {
      if (claimed({i}, s).empty()) continue;  // another tuner's to record
      mr.spec_hash = p.hash, mr.gpu = local_gpu;
      mr.dtype = std::string(to_string(p.accum)), mr.layout = std::string(to_string(p.layout));
      mr.m = s.m, mr.n = s.n, mr.k = s.k, mr.mode = std::string(to_string(req.modes.front()));
      mr.timer = "graph", mr.status = std::string(to_string(co.status)), mr.failure = co.detail;
      mr.reward = score_of(req, p, co.status);
      if (mr.reward) co.score[s.str()] = *mr.reward;
      sink.measurement(mr);
    }
    return false;
  };
  if (!req.spec_shapes.empty()) {
    // Specs with shapes of their own (cuBLASLt's neighbourhood of each shape): shape by shape, one
    // job per shape with every candidate measured on it (up to the batch size), so the job's
    // baselines are measured once for all of them; the next shape's new candidates compile while
    // this one is measured, and --budget-minutes is checked between shapes.
    std::vector<std::vector<size_t>> on(req.shapes.size());
    for (size_t i = 0; i < cands.size(); ++i)
      for (size_t si = 0; si < req.shapes.size(); ++si)
        if (std::find(cands[i].shapes.begin(), cands[i].shapes.end(), req.shapes[si]) != cands[i].shapes.end())
          on[si].push_back(i);
    std::vector<char> scheduled(cands.size(), 0), compiled(cands.size(), 0), usable(cands.size(), 0);
    using Built = std::vector<std::pair<size_t, CompileResult>>;
    auto compile_shape = [&](size_t si) {
      std::vector<size_t> todo;
      for (size_t i : on[si])
        if (!scheduled[i]) scheduled[i] = 1, todo.push_back(i);
      return std::async(std::launch::async, [&jit, &cands, todo] {
        const auto got = build_candidates(jit, cands, todo);
        Built b;
        for (size_t j = 0; j < todo.size(); ++j) b.emplace_back(todo[j], got[j]);
        return b;
      });
    };
    std::future<Built> pending = compile_shape(0);
    size_t shapes_done = 0;
    for (size_t si = 0; si < req.shapes.size(); ++si) {
      for (auto& [i, b] : pending.get()) compiled[i] = 1, usable[i] = record_build(i, b);
      sink.flush();  // failed builds' rows
      if (si + 1 < req.shapes.size()) pending = compile_shape(si + 1);
      if (stopping() || (req.deadline_minutes > 0 &&
                         std::chrono::duration<double>(Clock::now() - t0).count() > 60.0 * req.deadline_minutes)) {
        if (req.progress)
          std::fprintf(stderr, "cudal2: %s; %zu of %zu shape(s) left\n",
                       stopping() ? "stopping" : "--budget-minutes reached", req.shapes.size() - si, req.shapes.size());
        if (pending.valid()) pending.wait();  // what is compiling stays cached
        break;
      }
      std::vector<size_t> usable_here;
      for (size_t i : on[si])
        if (usable[i]) usable_here.push_back(i);
      // Tuners sharing the store take the work job by job: a job's candidates are claimed just
      // before it runs. (Claimed a shape at a time, tuners started together on a few shapes had
      // little to share: four tuners on six shapes finished no sooner than one.)
      size_t measured_here = 0;
      for (size_t b = 0; b < usable_here.size() && !stopping(); b += batch) {
        const std::vector<size_t> job(
            usable_here.begin() + static_cast<std::ptrdiff_t>(b),
            usable_here.begin() + static_cast<std::ptrdiff_t>(std::min(usable_here.size(), b + batch)));
        const auto here = claimed(job, req.shapes[si]);
        if (here.empty()) continue;
        std::vector<Pending*> cs;
        std::vector<CandidateOutcome> part(here.size());
        std::vector<CandidateOutcome*> ps;
        for (size_t j = 0; j < here.size(); ++j) cs.push_back(&cands[here[j]]), ps.push_back(&part[j]);
        ev.evaluate(cs, ps, {req.shapes[si]});
        for (size_t j = 0; j < here.size(); ++j) merge_outcome(out[here[j]], part[j]);
        measured_here += here.size();
      }
      ++shapes_done;
      if (req.progress) {
        const double el = std::chrono::duration<double>(Clock::now() - t0).count();
        const std::string lane = req.visible_devices.empty() ? "" : "[gpu " + req.visible_devices + "] ";
        std::fprintf(stderr, "%s[%zu/%zu] shapes measured (%zu candidate(s) on %s) | elapsed %.0fs, ETA %.0fs\n",
                     lane.c_str(), shapes_done, req.shapes.size(), measured_here, req.shapes[si].str().c_str(), el,
                     el * static_cast<double>(req.shapes.size() - shapes_done) / static_cast<double>(shapes_done));
      }
    }
    // Not measured on any shape before the deadline: not run (a resumed run picks it up).
    return out;
  }
  auto next = compile_chunk(0);
  for (size_t first = 0; first < cands.size(); first += chunk) {
    if (stopping() || (req.deadline_minutes > 0 &&
                       std::chrono::duration<double>(Clock::now() - t0).count() > 60.0 * req.deadline_minutes)) {
      for (size_t i = first; i < cands.size(); ++i) out[i].status = Status::NotRun;
      if (req.progress)
        std::fprintf(stderr, "cudal2: %s; %zu candidate(s) left\n",
                     stopping() ? "stopping" : "--budget-minutes reached", cands.size() - first);
      next.wait();  // let the chunk in flight finish compiling: its artifacts stay cached
      break;
    }
    auto built = next.get();
    if (first + chunk < cands.size()) next = compile_chunk(first + chunk);
    std::vector<Pending*> ready;
    std::vector<CandidateOutcome*> ready_out;
    for (size_t j = 0; j < built.size(); ++j) {
      if (!record_build(first + j, built[j])) continue;
      ready.push_back(&cands[first + j]);
      ready_out.push_back(&out[first + j]);
    }
    sink.flush();  // failed builds' rows
    for (size_t b = 0; b < ready.size(); b += batch) {
      const size_t e = std::min(ready.size(), b + batch);
      ev.evaluate({ready.begin() + b, ready.begin() + e}, {ready_out.begin() + b, ready_out.begin() + e}, req.shapes);
    }
    done = std::min(cands.size(), first + chunk);
    if (req.progress) {
      const double el = std::chrono::duration<double>(Clock::now() - t0).count();
      int ok = 0;
      for (size_t i = 0; i < done; ++i) ok += out[i].status == Status::Ok;
      const std::string lane = req.visible_devices.empty() ? "" : "[gpu " + req.visible_devices + "] ";
      std::fprintf(stderr, "%s[%zu/%zu] candidates evaluated, %d ok | elapsed %.0fs, ETA %.0fs\n", lane.c_str(), done,
                   cands.size(), ok, el, el * static_cast<double>(cands.size() - done) / static_cast<double>(done));
    }
  }
  return out;
}

void print_outcomes(const std::vector<CandidateOutcome>& outcomes) {
  for (const auto& o : outcomes) {
    std::printf("%-16s %-16s %s\n", o.spec_hash.c_str(), std::string(to_string(o.status)).c_str(), o.spec_text.c_str());
    if (o.status != Status::Ok && !o.detail.empty()) std::printf("    %s\n", o.detail.substr(0, 300).c_str());
    if (!o.transient_fault.empty())
      std::printf("    transient fault (the re-run in a fresh runner stands): %s\n",
                  o.transient_fault.substr(0, 300).c_str());
  }
}

}  // namespace cudal2
