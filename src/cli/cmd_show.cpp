// `cudal2 show --db STORE`: the store's best spec per shape for a GPU, with its speedups.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "core/problem.hpp"
#include "measure/device.hpp"
#include "store/store.hpp"

namespace cudal2::cli {

namespace {

// The GPU to show: the one asked for (it must be in the store), else the local GPU's, else the
// only one the store holds. (Without a GPU it used to assume an H100 and print "0 shape(s)" for a
// store of any other GPU.)
std::string pick_gpu(const store::Store& db, const std::string& asked) {
  const auto gpus = db.gpus();
  if (!asked.empty()) {
    if (std::find(gpus.begin(), gpus.end(), asked) == gpus.end())
      throw InputError(fmt::format("no measurement for GPU '{}' in '{}' (GPUs: {})", asked, db.path(),
                                   gpus.empty() ? std::string("none") : fmt::format("{}", fmt::join(gpus, ", "))));
    return asked;
  }
  if (gpu_available()) return query_gpu(0).name;
  if (gpus.size() > 1)
    throw InputError(
        fmt::format("'{}' holds several GPUs ({}): pick one with --gpu NAME", db.path(), fmt::join(gpus, ", ")));
  return gpus.empty() ? std::string("(none)") : gpus.front();
}

// Best spec per shape for a GPU (default: this machine's, else the only one in the store), with its
// speedup over the best cuBLAS and the best cuBLASLt auto-tuning time measured in the same job.
// Throws InputError for a missing store file or a GPU the store does not hold. Returns the exit code.
int print_best(const std::string& db_path, const std::string& gpu_in) {
  // Reading a store never creates, upgrades or otherwise writes it (store/reader.hpp), and a
  // damaged one is refused: a mistyped path is an error, not an empty store.
  auto db = store::Store::open_to_read(db_path);
  const std::string gpu = pick_gpu(db, gpu_in);
  const auto best = db.list_best(gpu);
  std::printf("best kernels on %s (offline, graph timer): %zu shape(s)\n", gpu.c_str(), best.size());
  std::printf("%-20s %-6s %10s %12s %14s  %s\n", "shape", "layout", "us", "vs cuBLAS", "vs cuBLASLt-AT", "spec");
  for (const auto& b : best) {
    const auto m = db.get_measurement(b.measurement_id);
    const auto spec = db.get_spec(b.spec_hash);
    double cublas = 0, lt = 0;
    if (m) {
      const auto bj = nlohmann::json::parse(m->baseline_json, nullptr, false);
      auto t = [&](const char* name) {
        if (!bj.is_object() || !bj.contains(name) || !bj[name].contains("offline") ||
            !bj[name]["offline"].contains("graph"))
          return 0.0;
        return bj[name]["offline"]["graph"]["median"].get<double>();
      };
      auto best_of = [](double a, double b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); };
      cublas = best_of(t("cublas-nn"), t("cublas-tn"));
      lt = best_of(t("cublaslt-autotune-nn"), t("cublaslt-autotune-tn"));
    }
    auto ratio = [&](double base) { return base > 0 ? fmt::format("{:.3f}x", base / b.median_us) : std::string("-"); };
    std::printf("%-20s %-6s %10.2f %12s %14s  %s\n", fmt::format("{}x{}x{}", b.m, b.n, b.k).c_str(), b.layout.c_str(),
                b.median_us, ratio(cublas).c_str(), ratio(lt).c_str(), spec ? spec->text.c_str() : b.spec_hash.c_str());
  }
  return 0;
}

}  // namespace

Run add_show(CLI::App& cmd, const Context&) {
  auto db = std::make_shared<std::string>("cudal2.db");
  auto gpu = std::make_shared<std::string>();
  cmd.add_option("--db", *db, "SQLite results store")->capture_default_str();
  cmd.add_option("--gpu", *gpu, "GPU name as stored (default: the local GPU's, else the only one in the store)");
  return [db, gpu] { return print_best(*db, *gpu); };
}

}  // namespace cudal2::cli
