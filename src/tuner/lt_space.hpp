#pragma once
// The cublaslt family's space asked of a judge process (its lt-space op): cuBLASLt answers for the
// GPU in use, and the tuner does not call CUDA itself.
#include <string>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace cudal2 {

// Starts a judge (judge_exe, default this executable) and asks it; one entry per shape and
// layout, in that order. Throws std::runtime_error when the judge cannot answer (no GPU, cuBLASLt
// failure, timeout, a malformed answer).
std::vector<std::pair<Problem, std::vector<KernelSpec>>> judge_lt_space(const std::string& judge_exe,
                                                                        const std::vector<Shape>& shapes,
                                                                        const std::vector<Layout>& layouts, Accum accum,
                                                                        int max_per_problem, int timeout_s = 300);

}  // namespace cudal2
