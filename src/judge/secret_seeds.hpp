#pragma once
// Seeds the runner sees but must not be able to predict: a chained batch's seed is written to a
// device word the runner maps (measure/interlude.hpp), so a candidate reads every seed of its job.
// Drawn from a Mersenne Twister, 312 of them give away its state and with it every later batch's
// inputs (an input cache keyed by the predicted seed). Each seed here comes from the kernel's
// CSPRNG (getrandom), which no number of earlier outputs predicts.
#include <cstdint>

namespace cudal2 {

// 64 fresh bits from the kernel's CSPRNG (std::random_device where getrandom is missing).
uint64_t secret_seed();

}  // namespace cudal2
