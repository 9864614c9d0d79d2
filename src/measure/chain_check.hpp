#pragma once
// The judge's check of one chained batch (measure/interlude.hpp): every call's output against a
// GPU reference (measure/reference_gemm.hpp) of the inputs that call was given, and the inputs left behind against the
// last call's. A call that skipped work, reused an earlier result (whole or in part) or computed on inputs other than
// its own leaves an output that differs from its reference.
#include <cstdint>
#include <string>

#include "core/problem.hpp"
#include "measure/checks.hpp"
#include "measure/device.hpp"
#include "measure/method.hpp"
#include "measure/reference_gemm.hpp"
#include "measure/verify.hpp"

namespace cudal2 {

// Where a batch's outputs are: slots[0 .. calls-2] (M x N fp16 each) and C (the last call).
struct ChainOutputs {
  const void* C = nullptr;
  const void* slots = nullptr;
  const void* A = nullptr;  // the inputs the batch left: must be the last call's
  const void* B = nullptr;
  bool b_col_major = false;
};

class ChainChecker {
 public:
  ChainChecker(const Shape& s, Accum accum);
  ChainChecker(const ChainChecker&) = delete;
  ChainChecker& operator=(const ChainChecker&) = delete;
  // Nothing when every one of `calls` outputs matches its reference; else the first defect
  // (wrong-result or input-modified). key: the job's checksum key.
  CandidateFault check(unsigned long long seed, int calls, const ChainOutputs& out, uint16_t poison, uint64_t key,
                       DeviceChecker& chk, cudaStream_t st);
  // The per-element tolerance the outputs are held to.
  ElementTolerance tolerance() const { return tol_; }

 private:
  void reserve(int calls);
  Shape shape_;
  ElementTolerance tol_;
  ReferenceGemm ref_;
  GuardedBuffer scratch_;  // chunk x (A_i, B_i, ref_i)
  int chunk_ = 0;
};

// Bytes of scratch the checker may hold at most (plus one call's worth when a call needs more).
inline constexpr size_t kChainCheckScratch = size_t{512} << 20;

}  // namespace cudal2
