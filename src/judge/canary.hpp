#pragma once
// The trusted canary: is the GPU itself healthy right now? Run by the judge side in a fresh
// `cudal2 judge` process (a fresh CUDA context), never loading candidate code: cuBLAS GEMMs on
// fixed inputs for a fixed window, every output checked against an exact host reference, every
// launch timed with CUDA events. Disturbed when a CUDA or cuBLAS call fails (a fault a neighbour's
// teardown caused, a lost context), an output is wrong (a launch lost without an error), the
// launches are implausibly fast, or they are held up for a large share of the window (another
// context is taking the GPU's time slices: a neighbour's hung kernel before it is killed).
// tuner/attribution.hpp decides what a disturbed canary means for a candidate.
#include "protocol/protocol.hpp"

namespace cudal2 {

// Judge side of op "canary" (never throws: a failure is an unhealthy answer saying why).
protocol::CanaryAnswer run_canary(const protocol::CanaryJob& job);

}  // namespace cudal2
