#pragma once
// Deliberately broken GEMMs for the GPU tests: a naive, correct kernel and one variant per check
// the verifier must catch.
#include "measure/method.hpp"

namespace cudal2::testing {

enum class Defect {
  None,         // correct: must pass every check
  OutOfBounds,  // correct output, plus one store just past the end of C
  WrongValue,   // one element off by one
  SkipTile,     // leaves a 16x16 tile of C unwritten
  ProducesNaN,  // one element NaN
  Syncs,        // correct, but synchronizes inside run(): cannot be captured in a graph
};

MethodPtr make_naive(Layout layout, Defect defect);
const char* defect_name(Defect d);

}  // namespace cudal2::testing
