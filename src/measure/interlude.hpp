#pragma once
// The trusted kernel between the timed calls of a chain (measure/timing.hpp, docs/measuring.md,
// docs/threat-model.md): before call i of a batch it keeps call i-1's output in a slot of its own
// and rewrites both inputs with call i's values, drawn from a counter hash of a secret seed and i.
// So every call of a batch computes on inputs no earlier call saw, every call's output survives
// the batch for the judge to verify, and the operands are as warm in the L2 as back-to-back calls
// leave them (the interlude has just written them). It is an ordinary launch, never with PDL: the
// chain timer's "unrelated kernel before every call" is this kernel.
// C++17: compiled by nvcc.
#include <cuda_runtime.h>

#include <cstdint>

namespace cudal2 {

// One process's pointers (the judge's buffers, or a runner's mappings of them).
struct InterludeArgs {
  void* A = nullptr;        // M x K, row-major fp16
  void* B = nullptr;        // K x N fp16: row-major (nn) or column-major (tn, b_col_major)
  const void* C = nullptr;  // M x N, row-major fp16: where every call writes
  void* slots = nullptr;    // outputs of calls 0..calls-2 (M x N fp16 each); nullptr: kept nowhere
  int64_t m = 0, n = 0, k = 0;
  bool b_col_major = false;
  const unsigned long long* seed = nullptr;  // device word: the batch's seed, set before each batch
};

// Values are uniform in [-1, 1], rounded to fp16: rms 1/sqrt(3).
inline constexpr double kInterludeRms = 0.5773502691896258;

// Before call `call` of a batch (0-based): slot call-1 = C (when call > 0 and slots are kept),
// then A and B = call's inputs.
void launch_interlude(const InterludeArgs& a, int call, cudaStream_t s);

// The inputs the interlude writes before calls first..first+count-1 of a batch with this seed, the
// judge's copy: A_i at A + i*a_stride elements, B_i at B + i*b_stride (column-major when
// b_col_major); strides of 0 mean m*k and k*n (packed).
void generate_call_inputs(unsigned long long seed, int first, int count, void* A, void* B, int64_t m, int64_t n,
                          int64_t k, bool b_col_major, cudaStream_t s, int64_t a_stride = 0, int64_t b_stride = 0);

}  // namespace cudal2
