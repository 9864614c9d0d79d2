#pragma once
// The Judge: what decides an untrusted candidate's verdict on one shape (docs/threat-model.md).
// It owns the reference (cuBLAS on the judge's own inputs), the keyed checksums of the inputs,
// and the checks after every run of a candidate: guard bands, inputs, the whole output, and for a
// chained batch every call's output. The bench (judge/bench.hpp) arms it before each untrusted
// run and asks it afterwards.
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>

#include "judge/shape_buffers.hpp"
#include "measure/chain_check.hpp"
#include "measure/checks.hpp"
#include "measure/device.hpp"
#include "measure/method.hpp"
#include "measure/reference_gemm.hpp"
#include "measure/verify.hpp"

namespace cudal2 {

// The judge's side of one shape for untrusted methods: a cuBLAS reference of the current inputs
// (fp32 accumulation), keyed checksums of the inputs, and the checks after every run.
class Judge {
 public:
  Judge(ShapeBuffers& buf, const JobSecrets& sec, cudaStream_t st);
  // New inputs from d, their reference and checksums.
  void fresh_inputs(const InputDistribution& d, uint64_t seed);
  // The inputs as they are now are the ones every later check compares with (the classic
  // rounds fill them themselves).
  void snapshot();
  bool inputs_intact();
  void set_accum(Accum a);
  // Poisoned output, fresh guard bands: what every untrusted run starts from.
  void arm(Method& r);
  // Before a chained batch: a new secret seed (the batch's inputs), poisoned C and slots, fresh
  // guard bands, and the checksum of the B layout the batch must not touch.
  void arm_chain(Method& r, unsigned long long seed);
  // After a chained batch of `calls` calls: guard bands, the other B layout, and every call's
  // output against the reference of its own inputs.
  CandidateFault check_chain(Method& r, int calls);
  // What the last run did wrong, if anything.
  CandidateFault check(Method& r);

 private:
  CandidateFault guards(Method& r);
  std::array<uint64_t, 3> checksums();
  ShapeBuffers& buf_;
  const JobSecrets& sec_;
  cudaStream_t st_;
  GuardedBuffer ref_out_;
  ReferenceGemm ref_;
  DeviceChecker chk_;
  Accum accum_ = Accum::F32;
  const InputDistribution* dist_ = nullptr;
  uint64_t seed_ = 0;
  ElementTolerance tol_;
  std::array<uint64_t, 3> sums_{};
  std::unique_ptr<ChainChecker> chain_;
  unsigned long long seed_value_ = 0;
  uint64_t other_b_ = 0;
};

}  // namespace cudal2
