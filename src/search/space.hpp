#pragma once
// What the tuner may propose: each family's valid specs for a problem. Families whose space does
// not depend on the GPU or the shape come from codegen's enumeration; the cublaslt family's space
// is cuBLASLt's answer on this GPU for each shape, which only a process with a CUDA context can
// give, so the caller passes it in (run_tune asks the eval judge: tuner/evaluate.hpp,
// judge_lt_space).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace cudal2::search {

// The shape-independent families' spaces, NN and TN ("full": every valid compile-time
// configuration; "core": the sub-space docs/tuning.md describes), default runtime knobs plus the
// split counts of families that have them; "@FILE": exactly the specs listed in FILE, one per
// line, runtime knobs included. Throws InputError for an unknown space or family, a listed spec
// that is invalid or outside the families and accumulator, and for cublaslt (its space needs a
// shape and a GPU: ProblemSpace).
std::vector<KernelSpec> search_space(const std::vector<std::string>& families, const std::string& space, Accum accum);

// The space of one tuning run: the shape-independent specs plus each problem's own (cublaslt).
struct ProblemSpace {
  std::vector<KernelSpec> common;
  std::map<std::string, std::vector<KernelSpec>> per_problem;  // problem_key() -> specs
  // The valid specs for one problem: common specs of its layout, then its own.
  std::vector<KernelSpec> for_problem(const Problem& p) const;
  // Every distinct spec of the run, in order (common first).
  std::vector<KernelSpec> all() const;
};
std::string problem_key(const Shape& s, Layout l);

// True when the families include one whose space depends on the shape and GPU (cublaslt).
bool needs_gpu_space(const std::vector<std::string>& families);
std::vector<std::string> shape_independent(const std::vector<std::string>& families);

}  // namespace cudal2::search
