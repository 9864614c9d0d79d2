#pragma once
// `cudal2 eval --spec-list FILE`: (shape, spec) pairs, one per line, "M,N,K SPEC TEXT" ('#' starts
// a comment). Each shape is measured in one job with all of its specs (bench/runtime/confirm_entries.sh:
// the table's entry, the search's runners-up and auto-tuning's candidates side by side).
#include <string>
#include <vector>

#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace cudal2 {

struct SpecList {
  std::vector<Shape> shapes;                    // in first-seen order, each once
  std::vector<KernelSpec> specs;                // each once (by text)
  std::vector<std::vector<Shape>> spec_shapes;  // parallel to specs: the shapes each is measured on
};

// Throws InputError naming the file and line of anything it cannot read.
SpecList read_spec_list(const std::string& path);

}  // namespace cudal2
