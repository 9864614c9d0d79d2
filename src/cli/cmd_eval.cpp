// `cudal2 eval`: compile, verify and time kernel candidates (specs or free-form sources; or judge
// prebuilt artifacts as they are) in a sandboxed judge process against the baselines; the results
// go to the store.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/artifact_arg.hpp"
#include "cli/command.hpp"
#include "cli/eval_args.hpp"
#include "cli/spec_list.hpp"
#include "core/input_file.hpp"
#include "measure/device.hpp"
#include "tuner/record.hpp"

namespace cudal2::cli {

namespace {

struct EvalCommand {
  EvalArgs e;
  std::vector<std::string> spec_texts, source_files, artifacts;
  std::string spec_list;
  double budget_minutes = 0;
  std::string src_layout = "nn", src_accum = "f32";
};

}  // namespace

Run add_eval(CLI::App& cmd, const Context& ctx) {
  auto a = std::make_shared<EvalCommand>();
  auto* eval = &cmd;
  eval->add_option("--spec", a->spec_texts, "KernelSpec text (repeatable); see docs/kernel-space.md");
  eval->add_option("--source", a->source_files, "A free-form candidate .cu exposing the kernel C ABI (repeatable)");
  eval->add_option("--artifact", a->artifacts,
                   "A prebuilt kernel: PATH.so[@SPEC], SPEC the spec it was built from with the runtime knobs to run "
                   "(after '|'); without SPEC it runs as --layout/--accum say (repeatable)");
  eval->add_option("--spec-list", a->spec_list,
                   "FILE of 'M,N,K SPEC' lines: each shape measured in one job with its own specs (instead of "
                   "--spec and --shape)");
  eval->add_option("--budget-minutes", a->budget_minutes,
                   "With --spec-list: start no new shape after this many minutes");
  eval->add_option("--layout", a->src_layout, "Layout of B for --source: nn or tn")->capture_default_str();
  eval->add_option("--accum", a->src_accum, "Accumulator for --source: f32 or f16")->capture_default_str();
  a->e.add(eval);
  return [a, &ctx] {
    auto& ev = a->e.ev;
    const auto& shapes = a->e.shapes;
    a->e.finish(ctx.command_line);
    if (!a->spec_list.empty()) {
      if (!a->spec_texts.empty() || !a->source_files.empty() || !a->artifacts.empty() || !shapes.shapes.empty() ||
          !shapes.shape_files.empty() || !shapes.grid.empty())
        throw InputError("--spec-list names its own shapes and specs: no --spec, --source, --artifact or shapes");
      auto list = read_spec_list(a->spec_list);
      ev.shapes = std::move(list.shapes);
      ev.spec_shapes = std::move(list.spec_shapes);
      ev.specs = std::move(list.specs);
    }
    if (!(a->budget_minutes >= 0)) throw InputError("--budget-minutes must be 0 or more");
    ev.deadline_minutes = a->budget_minutes;
    for (const auto& t : a->spec_texts) ev.specs.push_back(parse_spec(t));
    for (const auto& f : a->source_files)
      ev.free_sources.push_back(read_input_file(f, "source file", size_t{16} << 20));
    for (const auto& x : a->artifacts) ev.artifacts.push_back(parse_artifact_arg(x));
    ev.free_layout = parse_layout(a->src_layout);
    ev.free_accum = parse_accum(a->src_accum);
    if (ev.specs.empty() && ev.free_sources.empty() && ev.artifacts.empty())
      throw InputError("eval needs --spec TEXT, --source FILE or --artifact PATH.so");
    if (!a->e.replaying()) require_gpu();
    ev.local_gpu = local_gpus().first_name();
    const auto outcomes = tuner::evaluate_and_record(ev, a->e.db_path);
    print_outcomes(outcomes);
    return 0;
  };
}

}  // namespace cudal2::cli
