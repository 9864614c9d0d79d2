#include "tuner/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/codegen.hpp"
#include "codegen/family.hpp"
#include "core/input_file.hpp"

namespace cudal2::evaluation {

std::vector<Pending> pending_candidates(const EvalRequest& req) {
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
  return cands;
}

std::optional<double> score_of(const EvalRequest& req, const Pending& p, Outcome status, double time_us,
                               double baseline_us, std::optional<double> rel_err) {
  if (!req.score) return std::nullopt;
  ScoreInput in;
  in.status = status, in.time_us = time_us, in.baseline_us = baseline_us, in.rel_err = rel_err;
  in.source_bytes = p.spec ? 0 : p.source.size();
  return req.score(in);
}

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

}  // namespace cudal2::evaluation
