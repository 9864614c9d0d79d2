#pragma once
// What `bench`, `eval` and `tune` share on the command line: the shapes to run (--shape, --shapes,
// --grid, --model, --class, --shard), and the lists of modes and timers.
#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "measure/timing.hpp"

namespace CLI {
class App;
}

namespace cudal2::cli {

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> split_list(const std::string& s);

struct ShapeArgs {
  std::vector<std::string> shapes, shape_files;
  std::string grid, shard, classes;
  // A model's linear layers (core/model.hpp): its (N, K) at M buckets.
  std::vector<std::string> models;
  int64_t model_max_m = 4096;
  std::string model_m, model_layers = "all";
  void add(CLI::App* app);
  std::vector<Shape> model_shapes() const;
  // Every shape named, deduplicated, filtered by class and shard; the sample grid when none is named.
  std::vector<Shape> resolve() const;
};

// offline, server or both.
std::vector<Mode> parse_modes(const std::string& m);
// Comma-separated timer names; throws InputError for an unknown one or none.
TimerSet parse_timers(const std::string& list);

}  // namespace cudal2::cli
