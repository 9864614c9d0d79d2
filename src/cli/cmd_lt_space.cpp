// `cudal2 lt-space --shape M,N,K [--layout nn|tn] [--accum f32|f16] [--max N] [--details]`:
// prints the cublaslt family's specs worth trying for one shape on this GPU, one per line.
// `--shapes FILE` does the same for every M,N,K line of FILE in one process (a confirmation list
// of a whole grid would otherwise start a CUDA context per shape), each line led by its shape.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baselines/cublaslt_space.hpp"
#include "cli/command.hpp"
#include "core/problem.hpp"
#include "measure/device.hpp"

namespace cudal2::cli {

namespace {

struct LtSpaceArgs {
  std::string shape_text, shapes_file, layout = "nn", accum = "f32";
  int max = 64;
  size_t workspace_mib = kLibraryWorkspace >> 20;
  bool details = false;
};

}  // namespace

Run add_lt_space(CLI::App& app, const Context&) {
  auto a = std::make_shared<LtSpaceArgs>();
  auto* one = app.add_option("--shape", a->shape_text, "M,N,K");
  auto* many = app.add_option("--shapes", a->shapes_file,
                              "A file of M,N,K lines ('#' comments): every shape in one process, each output "
                              "line led by its shape");
  one->excludes(many);
  many->excludes(one);
  app.add_option("--layout", a->layout, "Layout of B: nn or tn")->capture_default_str();
  app.add_option("--accum", a->accum, "Accumulator: f32 or f16")->capture_default_str();
  app.add_option("--max", a->max,
                 "At most this many specs beyond the heuristic's own suggestions, which are all in (0: all)")
      ->capture_default_str();
  app.add_option("--workspace-mib", a->workspace_mib, "Largest workspace a configuration may need")
      ->capture_default_str();
  app.add_flag("--details", a->details, "After each spec: where it came from, its workspace and waves count");
  return [a] {
    const auto& [shape_text, shapes_file, layout, accum, max, workspace_mib, details] = *a;
    // Every argument is checked before the GPU is asked for: bad input is exit 2 on any machine.
    if (shape_text.empty() == shapes_file.empty()) throw InputError("lt-space: give --shape M,N,K or --shapes FILE");
    const std::vector<Shape> shapes =
        shapes_file.empty() ? std::vector<Shape>{parse_shape(shape_text)} : read_shapes_file(shapes_file);
    const Layout lay = parse_layout(layout);
    const Accum acc = parse_accum(accum);
    if (max < 0) throw InputError(fmt::format("--max {}: must be 0 (all) or more", max));
    require_gpu();
    for (const Shape& shape : shapes) {
      const auto specs = cublaslt_space(shape, lay, acc, max, workspace_mib << 20);
      // Only a many-shape listing leads each line with its shape (M,N,K, as spec lists take it).
      const std::string lead = shapes_file.empty() ? "" : fmt::format("{},{},{} ", shape.m, shape.n, shape.k);
      for (const auto& c : specs) {
        if (details)
          std::printf("%s%s\t# %s, workspace %zu, waves %.2f%s\n", lead.c_str(), c.spec.text().c_str(),
                      c.origin.c_str(), c.workspace, c.waves,
                      c.rebuilt_same ? "" : ", rebuilt algo differs from the heuristic's bytes");
        else
          std::printf("%s%s\n", lead.c_str(), c.spec.text().c_str());
      }
      std::fprintf(stderr, "cudal2 lt-space: %zu spec(s) for %s %s\n", specs.size(), shape.str().c_str(),
                   layout.c_str());
    }
    return 0;
  };
}

}  // namespace cudal2::cli
