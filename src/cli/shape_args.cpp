// The shape, mode and timer options of `bench`, `eval` and `tune` (src/cli/shape_args.hpp).
#include "cli/shape_args.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/model.hpp"
#include "core/roofline.hpp"

namespace cudal2::cli {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void ShapeArgs::add(CLI::App* app) {
  app->add_option("--class", classes,
                  "Keep only shapes of these classes: small, skinny, medium, large (comma-separated)");
  app->add_option("--shape", shapes, "Problem M,N,K (repeatable)");
  app->add_option("--shapes", shape_files, "File with one M,N,K per line ('#' comments)");
  app->add_option("--grid", grid, "Shape grid: paper (1000 shapes) or sample (16)");
  app->add_option("--shard", shard, "Run shard I/N of the shape list (shape index % N == I)");
  app->add_option("--model", models,
                  "A Hugging Face config.json (repeatable): its linear layers' (N, K) at M = 1, 2, 4, ... "
                  "--model-max-m and the --model-m values");
  app->add_option("--model-max-m", model_max_m, "Largest M bucket of --model")->capture_default_str();
  app->add_option("--model-m", model_m, "More M values for --model, comma-separated (e.g. your batch sizes)");
  app->add_option("--model-layers", model_layers,
                  "--model's layers: hf (q, k, v, o, gate, up, down, lm_head), fused (qkv, gate_up, o, down, "
                  "lm_head) or all")
      ->capture_default_str();
}

std::vector<Shape> ShapeArgs::model_shapes() const {
  std::vector<Shape> out;
  if (models.empty()) {
    if (!model_m.empty()) throw InputError("--model-m needs --model");
    return out;
  }
  std::vector<int64_t> extra;
  for (const auto& v : split_list(model_m)) {
    try {
      size_t used = 0;
      extra.push_back(std::stoll(v, &used));
      if (used != v.size()) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      throw InputError(fmt::format("--model-m: '{}' is not a number", v));
    }
  }
  const auto ms = m_buckets(model_max_m, extra);
  const auto set = parse_layer_set(model_layers);
  for (const auto& path : models) {
    auto v = cudal2::model_shapes(model_linears(read_model_config(path), set), ms);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::vector<Shape> ShapeArgs::resolve() const {
  std::vector<Shape> out;
  for (const auto& s : shapes) out.push_back(parse_shape(s));
  for (const auto& f : shape_files) {
    auto v = read_shapes_file(f);
    out.insert(out.end(), v.begin(), v.end());
  }
  if (!grid.empty()) {
    auto v = cudal2::grid(grid);
    out.insert(out.end(), v.begin(), v.end());
  }
  {
    auto v = model_shapes();
    out.insert(out.end(), v.begin(), v.end());
  }
  if (out.empty()) out = cudal2::grid("sample");
  out = unique_shapes(out);
  if (!classes.empty()) {
    const auto keep = split_list(classes);
    for (const auto& c : keep)
      if (c != "small" && c != "skinny" && c != "medium" && c != "large")
        throw InputError(fmt::format("unknown shape class '{}' (small, skinny, medium, large)", c));
    std::erase_if(out, [&](const Shape& s) {
      return std::find(keep.begin(), keep.end(), std::string(to_string(classify(s)))) == keep.end();
    });
    if (out.empty()) throw InputError(fmt::format("no shape of class {} among the shapes given", classes));
  }
  if (!shard.empty()) out = apply_shard(out, parse_shard(shard));
  return out;
}

std::vector<Mode> parse_modes(const std::string& m) {
  if (m == "both") return {Mode::Offline, Mode::Server};
  return {parse_mode(m)};
}

TimerSet parse_timers(const std::string& list) {
  TimerSet on{};
  for (const auto& t : split_list(list)) {
    bool known = false;
    for (auto k : kTimers)
      if (to_string(k) == t) on[static_cast<int>(k)] = known = true;
    if (!known) throw InputError(fmt::format("unknown timer '{}' (graph, eager, host, chain)", t));
  }
  if (std::none_of(on.begin(), on.end(), [](bool b) { return b; }))
    throw InputError("--timers names no timer (graph, eager, host, chain)");
  return on;
}

}  // namespace cudal2::cli
