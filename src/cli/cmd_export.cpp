// `cudal2 export`: the store(s) -> the runtime's dispatch table (src/export/export.hpp,
// docs/runtime.md), or with --trajectories the LLM proposer's turns for an RL trainer (docs/llm.md).
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "cli/command.hpp"
#include "codegen/spec.hpp"
#include "core/atomic_file.hpp"
#include "core/problem.hpp"
#include "export/export.hpp"

namespace cudal2::cli {

Run add_export(CLI::App& app, const Context&) {
  auto opt = std::make_shared<exporter::Options>();
  auto families = std::make_shared<std::string>();
  auto* cmd = &app;
  cmd->add_option("--db", opt->dbs, "SQLite results store (repeatable: merged)")->required();
  auto* out_opt = cmd->add_option("--out", opt->out, "Table file to write, e.g. tables/h100-f32.json");
  cmd->add_option("--gpu", opt->gpu, "GPU name as stored (default: the only one in the stores)");
  cmd->add_option("--families", *families, "Keep only these kernel families (comma-separated)");
  cmd->add_option("--portfolio", opt->portfolio, "Ship at most N distinct kernels (0: every shape's best)")
      ->capture_default_str();
  cmd->add_option(
      "--confirmed", opt->confirmed,
      "Confirmation store (repeatable; bench/runtime/confirm_entries.sh): its shapes are chosen from its newest "
      "run only");
  cmd->add_option("--compiled-margin", opt->compiled_margin,
                  "A compiled kernel displaces a cuBLASLt configuration or the fallback only when faster by this "
                  "fraction (measured: winners by less ran slower in the runtime)")
      ->capture_default_str();
  auto trajectories = std::make_shared<std::string>();
  auto unscored = std::make_shared<bool>(false);
  auto* traj_opt = cmd->add_option(
      "--trajectories", *trajectories,
      "Write the LLM proposer's turns as JSON lines for an RL trainer (docs/llm.md) instead of the table");
  cmd->add_flag("--include-unscored", *unscored, "With --trajectories: also turns that have no reward yet");
  return [opt, families, trajectories, unscored, out_opt, traj_opt] {
    std::string item;
    for (size_t i = 0; i <= families->size(); ++i) {
      if (i == families->size() || (*families)[i] == ',') {
        if (!item.empty()) opt->families.push_back(item);
        item.clear();
      } else {
        item += (*families)[i];
      }
    }
    for (const auto& f : opt->families) default_spec(f);  // throws for an unknown family
    if (opt->portfolio < 0) throw InputError("--portfolio must be 0 or more");
    if (!(opt->compiled_margin >= 0 && opt->compiled_margin < 1))
      throw InputError("--compiled-margin must be in [0, 1)");
    // Before any store is read: a bad output path is refused at once, not after the work.
    // An option given with an empty value is refused, not taken for absent (`--trajectories ''`
    // wrote the table instead).
    if (out_opt->count() > 0) check_output_file(opt->out, "--out");
    if (traj_opt->count() > 0) check_output_file(*trajectories, "--trajectories");
    return traj_opt->count() == 0 ? exporter::run(*opt)
                                  : exporter::write_trajectories(opt->dbs, *trajectories, *unscored);
  };
}

}  // namespace cudal2::cli
