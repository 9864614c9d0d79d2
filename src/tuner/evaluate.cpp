#include "tuner/evaluate.hpp"

#include <algorithm>
#include <cstdio>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "jit/compiler.hpp"
#include "tuner/budget.hpp"
#include "tuner/candidate.hpp"
#include "tuner/evaluator.hpp"

namespace cudal2 {

namespace {

using evaluation::Evaluator;
using evaluation::Pending;

// One evaluate_candidates call once its candidates are known: their outcomes so far, the compiler
// and the judge, the deadline, and what every schedule asks between jobs.
struct Session {
  Session(const EvalRequest& req, EvalSink& sink, std::vector<Pending>& cands, std::vector<CandidateOutcome>& out)
      : req(req),
        sink(sink),
        cands(cands),
        out(out),
        own_jit(req.compiler ? std::nullopt : std::make_optional<Compiler>(compile_options(req))),
        jit(req.compiler ? *req.compiler : *own_jit),
        batch(static_cast<size_t>(std::max(1, req.batch))),
        ev(req, sink),
        budget(0, req.deadline_minutes) {}

  bool stopping() const { return req.stop && req.stop->load(); }
  // Start no new work: a stop, or --budget-minutes reached.
  bool ending() const { return stopping() || budget.out_of_time(); }
  const char* why_ending() const { return stopping() ? "stopping" : "--budget-minutes reached"; }
  // Progress lines of a --gpus lane name its GPU.
  std::string lane() const { return req.visible_devices.empty() ? "" : "[gpu " + req.visible_devices + "] "; }

  // Compiles cands[todo...] on a background thread while the caller measures.
  std::future<std::vector<CompileResult>> compile(std::vector<size_t> todo) {
    return std::async(std::launch::async,
                      [this, todo = std::move(todo)] { return evaluation::build_candidates(jit, cands, todo); });
  }

  // Of candidates `which` on `shape`, those this call may measure (EvalRequest::claim); the others
  // are noted as another tuner's.
  std::vector<size_t> claimed(const std::vector<size_t>& which, const Shape& shape) {
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
  }

  // Records candidate i's build; false (with its failure recorded on each of its shapes) when it
  // did not compile.
  bool record_build(size_t i, const CompileResult& built) {
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
      mr.spec_hash = p.hash, mr.gpu = req.local_gpu;
      mr.dtype = std::string(to_string(p.accum)), mr.layout = std::string(to_string(p.layout));
      mr.m = s.m, mr.n = s.n, mr.k = s.k, mr.mode = std::string(to_string(req.modes.front()));
      mr.timer = "graph", mr.status = std::string(to_string(co.status)), mr.failure = co.detail;
      mr.reward = evaluation::score_of(req, p, co.status);
      if (mr.reward) co.score[s.str()] = *mr.reward;
      sink.measurement(mr);
    }
    return false;
  }

  const EvalRequest& req;
  EvalSink& sink;
  std::vector<Pending>& cands;
  std::vector<CandidateOutcome>& out;
  std::optional<Compiler> own_jit;  // when the request brings none
  const Compiler& jit;
  const size_t batch;  // candidates per judge job
  Evaluator ev;
  const tuner::Budget budget;  // EvalRequest::deadline_minutes, from here
};

// Shape si's usable candidates (`usable_here`), in jobs of up to the batch size. Tuners sharing
// the store take the work job by job: a job's candidates are claimed just before it runs.
// (Claimed a shape at a time, tuners started together on a few shapes had little to share: four
// tuners on six shapes finished no sooner than one.) Returns how many this call measured.
size_t measure_shape(Session& s, size_t si, const std::vector<size_t>& usable_here) {
  const Shape& shape = s.req.shapes[si];
  size_t measured = 0;
  for (size_t b = 0; b < usable_here.size() && !s.stopping(); b += s.batch) {
    const std::vector<size_t> job(
        usable_here.begin() + static_cast<std::ptrdiff_t>(b),
        usable_here.begin() + static_cast<std::ptrdiff_t>(std::min(usable_here.size(), b + s.batch)));
    const auto here = s.claimed(job, shape);
    if (here.empty()) continue;
    std::vector<Pending*> cs;
    std::vector<CandidateOutcome> part(here.size());
    std::vector<CandidateOutcome*> ps;
    for (size_t j = 0; j < here.size(); ++j) cs.push_back(&s.cands[here[j]]), ps.push_back(&part[j]);
    s.ev.evaluate(cs, ps, {shape});
    for (size_t j = 0; j < here.size(); ++j) evaluation::merge_outcome(s.out[here[j]], part[j]);
    measured += here.size();
  }
  return measured;
}

// Specs with shapes of their own (cuBLASLt's neighbourhood of each shape): shape by shape, one
// job per shape with every candidate measured on it (up to the batch size), so the job's
// baselines are measured once for all of them; the next shape's new candidates compile while
// this one is measured, and --budget-minutes is checked between shapes. A candidate not measured
// on any shape before the deadline stays not run (a resumed run picks it up).
void measure_shape_by_shape(Session& s) {
  const auto& shapes = s.req.shapes;
  std::vector<std::vector<size_t>> on(shapes.size());
  for (size_t i = 0; i < s.cands.size(); ++i)
    for (size_t si = 0; si < shapes.size(); ++si)
      if (std::find(s.cands[i].shapes.begin(), s.cands[i].shapes.end(), shapes[si]) != s.cands[i].shapes.end())
        on[si].push_back(i);
  std::vector<char> scheduled(s.cands.size(), 0), usable(s.cands.size(), 0);
  // The candidates first measured on shape si, and their builds.
  auto compile_shape = [&](size_t si) {
    std::vector<size_t> todo;
    for (size_t i : on[si])
      if (!scheduled[i]) scheduled[i] = 1, todo.push_back(i);
    return std::make_pair(todo, s.compile(todo));
  };
  auto pending = compile_shape(0);
  size_t shapes_done = 0;
  for (size_t si = 0; si < shapes.size(); ++si) {
    const auto built = pending.second.get();
    for (size_t j = 0; j < built.size(); ++j) usable[pending.first[j]] = s.record_build(pending.first[j], built[j]);
    s.sink.flush();  // failed builds' rows
    if (si + 1 < shapes.size()) pending = compile_shape(si + 1);
    if (s.ending()) {
      if (s.req.progress)
        std::fprintf(stderr, "cudal2: %s; %zu of %zu shape(s) left\n", s.why_ending(), shapes.size() - si,
                     shapes.size());
      if (pending.second.valid()) pending.second.wait();  // what is compiling stays cached
      break;
    }
    std::vector<size_t> usable_here;
    for (size_t i : on[si])
      if (usable[i]) usable_here.push_back(i);
    const size_t measured_here = measure_shape(s, si, usable_here);
    ++shapes_done;
    if (s.req.progress) {
      const double el = s.budget.elapsed_seconds();
      std::fprintf(stderr, "%s[%zu/%zu] shapes measured (%zu candidate(s) on %s) | elapsed %.0fs, ETA %.0fs\n",
                   s.lane().c_str(), shapes_done, shapes.size(), measured_here, shapes[si].str().c_str(), el,
                   el * static_cast<double>(shapes.size() - shapes_done) / static_cast<double>(shapes_done));
    }
  }
}

// Every candidate on every shape: compiled in chunks on a background thread while the previous
// chunk is measured, so the GPU is not idle while nvcc works, and a killed run keeps every
// artifact compiled so far.
void measure_in_chunks(Session& s) {
  const size_t jobs =
      s.jit.options().jobs > 0 ? s.jit.options().jobs : std::max(1u, std::thread::hardware_concurrency());
  const size_t chunk = std::max(s.batch, (jobs + s.batch - 1) / s.batch * s.batch);
  const size_t total = s.cands.size();
  auto compile_chunk = [&](size_t first) {
    std::vector<size_t> todo;
    for (size_t i = first; i < std::min(total, first + chunk); ++i) todo.push_back(i);
    return s.compile(std::move(todo));
  };
  auto next = compile_chunk(0);
  for (size_t first = 0; first < total; first += chunk) {
    if (s.ending()) {
      for (size_t i = first; i < total; ++i) s.out[i].status = Status::NotRun;
      if (s.req.progress) std::fprintf(stderr, "cudal2: %s; %zu candidate(s) left\n", s.why_ending(), total - first);
      next.wait();  // let the chunk in flight finish compiling: its artifacts stay cached
      break;
    }
    auto built = next.get();
    if (first + chunk < total) next = compile_chunk(first + chunk);
    std::vector<Pending*> ready;
    std::vector<CandidateOutcome*> ready_out;
    for (size_t j = 0; j < built.size(); ++j) {
      if (!s.record_build(first + j, built[j])) continue;
      ready.push_back(&s.cands[first + j]);
      ready_out.push_back(&s.out[first + j]);
    }
    s.sink.flush();  // failed builds' rows
    for (size_t b = 0; b < ready.size(); b += s.batch) {
      const size_t e = std::min(ready.size(), b + s.batch);
      s.ev.evaluate({ready.begin() + b, ready.begin() + e}, {ready_out.begin() + b, ready_out.begin() + e},
                    s.req.shapes);
    }
    const size_t done = std::min(total, first + chunk);
    if (s.req.progress) {
      const double el = s.budget.elapsed_seconds();
      int ok = 0;
      for (size_t i = 0; i < done; ++i) ok += s.out[i].status == Status::Ok;
      std::fprintf(stderr, "%s[%zu/%zu] candidates evaluated, %d ok | elapsed %.0fs, ETA %.0fs\n", s.lane().c_str(),
                   done, total, ok, el, el * static_cast<double>(total - done) / static_cast<double>(done));
    }
  }
}

}  // namespace

CompileOptions compile_options(const EvalRequest& req) {
  CompileOptions copt;
  copt.jobs = req.compile_jobs;
  return copt;
}

std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req, EvalSink& sink) {
  auto cands = evaluation::pending_candidates(req);
  std::vector<CandidateOutcome> out(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    out[i].spec_text = cands[i].text, out[i].spec_hash = cands[i].hash;
    out[i].device = req.visible_devices;
    sink.spec({cands[i].hash, cands[i].family,
               cands[i].spec || !cands[i].prebuilt.empty() ? cands[i].text : cands[i].source});
  }
  if (cands.empty()) return out;
  Session session(req, sink, cands, out);
  if (!req.spec_shapes.empty())
    measure_shape_by_shape(session);
  else
    measure_in_chunks(session);
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
