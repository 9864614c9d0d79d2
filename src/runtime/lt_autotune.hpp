// cuBLASLt auto-tuning inside the runtime (tune_unseen): which of the heuristic's candidates runs
// one shape fastest on the caller's own operands, ranked the way the judge's cuBLASLt
// auto-tuning baseline ranks them (src/baselines/cublaslt.cpp): device time per call of
// back-to-back calls (queued behind a launch gate, runtime/launch_gate.hpp, where the judge replays
// a CUDA graph: no stream capture), not eager launches, whose time on a few-microsecond problem is
// the host's launch rate rather than the algorithm's; then the few within a few percent of the
// fastest again, interleaved, so that noise does not decide between near-equals.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

namespace cudal2::rt {

// As many candidates as the judge's auto-tuning baseline asks the heuristic for
// (kAutotuneRequest in src/baselines/baselines.hpp): fewer, and the runtime could lose to it by
// construction on shapes where the winner sits deep in the heuristic's list.
inline constexpr int kTuneCandidates = 100;

// One call of the shape with an algorithm on a stream.
using LtCall = std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&, cudaStream_t)>;

// The index of the fastest of cands (those with a successful state and a workspace within
// ws_avail), or -1 if none ran. The candidates run on a private stream after the caller's stream
// has reached this point; the function returns once they are done, so the caller's next work on
// its stream sees none of them. The caller's stream must not be capturing.
// trace (may be null): what the ranking saw, one line (CUDAL2_TUNE_LOG): candidates that ran,
// round 1's fastest few and the heuristic's first, the finalists' medians, the one kept.
int fastest_lt_candidate(const std::vector<cublasLtMatmulHeuristicResult_t>& cands, size_t ws_avail, const LtCall& call,
                         cudaStream_t caller, std::string* trace = nullptr);

}  // namespace cudal2::rt
