// `cudal2 merge --db OUT --from A.db --from B.db`: the stores of a campaign's shards into one
// (src/store/merge.hpp, docs/multi-gpu.md). No GPU needed.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "core/problem.hpp"
#include "store/error.hpp"
#include "store/merge.hpp"

namespace cudal2::cli {

Run add_merge(CLI::App& app, const Context&) {
  auto out = std::make_shared<std::string>();
  auto from = std::make_shared<std::vector<std::string>>();
  auto* cmd = &app;
  cmd->add_option("--db", *out, "Store to merge into (created when missing)")->required();
  cmd->add_option("--from", *from, "Store to merge from (repeatable)")->required();
  return [out, from] {
    std::vector<std::filesystem::path> sources(from->begin(), from->end());
    std::string command = "merge --db " + *out;
    for (const auto& f : *from) command += " --from " + f;
    for (const auto& st : store::merge_stores(*out, sources, command)) {
      std::int64_t total = 0;
      std::string parts;
      for (const auto& [table, n] : st.added) {
        total += n;
        if (n > 0) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + table;
      }
      std::printf("%s: %s; best kernel changed for %lld problem(s)\n", st.source.c_str(),
                  total ? parts.c_str() : "nothing new", static_cast<long long>(st.best_changed));
    }
    std::printf("merged into %s\n", out->c_str());
    return 0;
  };
}

}  // namespace cudal2::cli
