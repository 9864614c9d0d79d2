#pragma once
// The evaluation client's candidates (tuner/evaluate.hpp) on their way through compile -> judge
// job -> sink: made from an EvalRequest's specs, free-form sources and artifacts, built (compiled,
// or needing no build), scored, and their per-shape outcomes folded together.
#include <optional>
#include <string>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"
#include "jit/compiler.hpp"
#include "tuner/evaluate.hpp"

namespace cudal2::evaluation {

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

// The request's candidates, in its order: specs (each on its spec_shapes entry, else every
// shape), free-form sources, artifacts. Throws InputError for spec_shapes that do not match the
// specs or name a shape the request lacks, and for an artifact of a spec that runs in the judge.
std::vector<Pending> pending_candidates(const EvalRequest& req);

// The request's score of a record of p (none without EvalRequest::score).
std::optional<double> score_of(const EvalRequest& req, const Pending& p, Outcome status, double time_us = 0,
                               double baseline_us = 0, std::optional<double> rel_err = std::nullopt);

// Folds one shape's outcome of a candidate into its outcome so far: times, baselines and scores
// per shape; the first failure kind wins over ok, ok over unsupported, unsupported over
// gpu-disturbed (the shapes it was not measured on stay listed in disturbed_shapes).
void merge_outcome(CandidateOutcome& into, const CandidateOutcome& part);

// The builds of cands[todo...], in that order: specs that run in the judge (runs_in_judge) need
// no artifact and are "built" at once; the rest are compiled (in parallel, cached).
std::vector<CompileResult> build_candidates(const Compiler& jit, const std::vector<Pending>& cands,
                                            const std::vector<size_t>& todo);

}  // namespace cudal2::evaluation
