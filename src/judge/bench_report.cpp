// What a bench's report says (judge/bench.hpp): the best baseline and paired ratios of a shape,
// the console tables, and the device memory a shape needs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/bench.hpp"
#include "judge/shape_buffers.hpp"
#include "measure/chain_check.hpp"
#include "measure/device.hpp"

namespace cudal2 {

const MethodResult* ShapeResult::fastest_baseline(Mode m, TimerKind t) const {
  const MethodResult* best = nullptr;
  for (const auto& mr : methods) {
    if (!mr.baseline || mr.status != Status::Ok || !mr.timing.count(m)) continue;
    const auto& s = mr.timing.at(m)[static_cast<int>(t)];
    if (s && (!best || s->median < best->timing.at(m)[static_cast<int>(t)]->median)) best = &mr;
  }
  return best;
}

std::optional<double> ShapeResult::best_baseline(Mode m, TimerKind t) const {
  const MethodResult* best = fastest_baseline(m, t);
  return best ? std::optional<double>(best->timing.at(m)[static_cast<int>(t)]->median) : std::nullopt;
}

std::optional<std::vector<double>> ShapeResult::round_ratios(const MethodResult& mr, Mode m, TimerKind t) const {
  const MethodResult* best = fastest_baseline(m, t);
  if (!best || !mr.samples.count(m) || !best->samples.count(m)) return std::nullopt;
  const auto& ours = mr.samples.at(m)[static_cast<int>(t)];
  const auto& theirs = best->samples.at(m)[static_cast<int>(t)];
  if (ours.empty() || ours.size() != theirs.size()) return std::nullopt;
  std::vector<double> ratios(ours.size());
  for (size_t r = 0; r < ours.size(); ++r) ratios[r] = theirs[r] / ours[r];
  return ratios;
}

std::optional<double> ShapeResult::paired_ratio(const MethodResult& mr, Mode m, TimerKind t) const {
  auto ratios = round_ratios(mr, m, t);
  return ratios ? std::optional<double>(percentile(std::move(*ratios), 50)) : std::nullopt;
}

std::optional<std::pair<double, double>> ShapeResult::paired_interval(const MethodResult& mr, Mode m,
                                                                      TimerKind t) const {
  auto ratios = round_ratios(mr, m, t);
  return ratios ? median_interval(std::move(*ratios)) : std::nullopt;
}

size_t bench_bytes(const Shape& s) {
  const size_t g = 2 * GuardedBuffer::kDefaultGuard + 512;
  return static_cast<size_t>(s.m * s.k + 2 * s.k * s.n + s.m * s.n) * 2 + 5 * g + kLibraryWorkspace;
}

size_t chain_bytes(const Shape& s) {
  const size_t mn = static_cast<size_t>(s.m * s.n) * 2;
  const size_t per_call = static_cast<size_t>(s.m * s.k + s.k * s.n) * 2 + mn;
  return static_cast<size_t>(slot_count(s)) * mn + std::max(kChainCheckScratch, per_call) +
         2 * GuardedBuffer::kDefaultGuard;
}

void print_table(const BenchReport& r, const BenchOptions& opt) {
  for (auto mode : opt.modes) {
    std::printf(
        "\n== %s mode (accum %s): median us per call; TFLOP/s and %%roofline from graph; ratio = best baseline / this "
        "(graph) ==\n",
        std::string(to_string(mode)).c_str(), std::string(to_string(opt.accum)).c_str());
    // %limit: of the measured read limit (graph timer), on bandwidth-bound shapes only.
    std::printf("%-18s %-22s %10s %10s %10s %10s %8s %7s %7s %6s  %s\n", "shape", "method", "graph", "eager", "host",
                "chain", "TFLOP/s", "%roof", "%limit", "ratio", "status");
    for (const auto& sr : r.shapes) {
      const auto best = sr.best_baseline(mode, TimerKind::Graph);
      for (const auto& mr : sr.methods) {
        auto cell = [&](TimerKind t) -> std::string {
          if (!mr.timing.count(mode)) return "-";
          const auto& s = mr.timing.at(mode)[static_cast<int>(t)];
          return s ? fmt::format("{:.2f}", s->median)
                   : (t == TimerKind::Graph || (t == TimerKind::Chain && opt.timers[static_cast<int>(t)]) ? "no-graph"
                                                                                                          : "-");
        };
        std::string tf = "-", roof = "-", lim = "-", ratio = "-";
        if (mr.timing.count(mode)) {
          const auto& g = mr.timing.at(mode)[0];
          if (g) {
            tf = fmt::format("{:.1f}", tflops_at(sr.shape, g->median));
            roof = fmt::format("{:.1f}", 100.0 * roofline_us(sr.shape, opt.ceilings) / g->median);
            if (r.limit.bandwidth_bound(sr.shape, opt.ceilings))
              lim = fmt::format("{:.1f}", 100.0 * r.limit.limit_us(sr.shape, mode == Mode::Server) / g->median);
            if (best) ratio = fmt::format("{:.3f}", *best / g->median);
          }
        }
        std::string status(to_string(mr.status));
        if (mr.status != Status::Ok) {
          const Verdict& v = mr.first_failure();
          status += ": " + (mr.reason.empty() ? std::string(to_string(v.failure)) + " (" + v.detail + ")" : mr.reason);
          if (status.size() > 90) status = status.substr(0, 87) + "...";
        } else if (mr.exact.sampled) {
          status += " (verified on sampled rows/cols)";
        }
        std::printf("%-18s %-22s %10s %10s %10s %10s %8s %7s %7s %6s  %s\n", sr.shape.str().c_str(), mr.method.c_str(),
                    cell(TimerKind::Graph).c_str(), cell(TimerKind::Eager).c_str(), cell(TimerKind::Host).c_str(),
                    cell(TimerKind::Chain).c_str(), tf.c_str(), roof.c_str(), lim.c_str(), ratio.c_str(),
                    status.c_str());
      }
    }
  }
}

void print_class_summary(const BenchReport& r, const BenchOptions& opt) {
  for (auto mode : opt.modes) {
    std::printf(
        "\n== %s mode: by shape class, geometric mean over shapes of (best baseline / method), graph timer ==\n",
        std::string(to_string(mode)).c_str());
    std::printf("%-22s %8s %8s %8s %8s %8s\n", "method", "small", "skinny", "medium", "large", "all");
    for (const auto& f : opt.methods) {
      std::map<std::string, std::vector<double>> by;
      for (const auto& sr : r.shapes) {
        const auto best = sr.best_baseline(mode, TimerKind::Graph);
        for (const auto& mr : sr.methods) {
          if (mr.method != f.name || !best || !mr.timing.count(mode) || !mr.timing.at(mode)[0]) continue;
          const double ratio = *best / mr.timing.at(mode)[0]->median;
          by[std::string(to_string(classify(sr.shape)))].push_back(ratio);
          by["all"].push_back(ratio);
        }
      }
      auto g = [&](const char* c) { return by.count(c) ? fmt::format("{:.3f}", geometric_mean(by[c])) : "-"; };
      std::printf("%-22s %8s %8s %8s %8s %8s\n", f.name.c_str(), g("small").c_str(), g("skinny").c_str(),
                  g("medium").c_str(), g("large").c_str(), g("all").c_str());
    }
  }
}

namespace {
// The graph-timer median of a shape's method, if it ran.
std::optional<double> graph_median(const ShapeResult& sr, const std::string& method, Mode mode) {
  for (const auto& mr : sr.methods)
    if (mr.method == method && mr.status == Status::Ok && mr.timing.count(mode) && mr.timing.at(mode)[0])
      return mr.timing.at(mode)[0]->median;
  return std::nullopt;
}
}  // namespace

void print_runtime_against_baselines(const BenchReport& r, const BenchOptions& opt) {
  std::vector<std::string> baselines;
  for (const auto& f : opt.methods)
    if (f.baseline) baselines.push_back(f.name);
  static const char* kClasses[] = {"small", "skinny", "medium", "large", "all"};
  for (auto mode : opt.modes)
    for (const auto& f : opt.methods) {
      if (f.baseline || f.name.rfind("runtime", 0) != 0) continue;
      std::printf(
          "\n== %s, %s mode: %s against each baseline by shape class, geometric mean over shapes of (baseline / "
          "%s), graph timer; > 1: the runtime is faster ==\n",
          r.gpu.c_str(), std::string(to_string(mode)).c_str(), f.name.c_str(), f.name.c_str());
      std::printf("%-22s %8s %8s %8s %8s %8s %7s\n", "baseline", "small", "skinny", "medium", "large", "all", "shapes");
      // The runtime's time on each shape, once for every baseline's row.
      std::vector<std::optional<double>> ours;
      ours.reserve(r.shapes.size());
      for (const auto& sr : r.shapes) ours.push_back(graph_median(sr, f.name, mode));
      auto row = [&](const std::string& label, auto&& baseline_us) {
        std::map<std::string, std::vector<double>> by;
        for (size_t i = 0; i < r.shapes.size(); ++i) {
          const std::optional<double> theirs = baseline_us(r.shapes[i]);
          if (!ours[i] || !theirs) continue;
          by[std::string(to_string(classify(r.shapes[i].shape)))].push_back(*theirs / *ours[i]);
          by["all"].push_back(*theirs / *ours[i]);
        }
        std::printf("%-22s", label.c_str());
        for (const char* c : kClasses)
          std::printf(" %8s", by.count(c) ? fmt::format("{:.3f}", geometric_mean(by[c])).c_str() : "-");
        std::printf(" %7zu\n", by["all"].size());
      };
      for (const auto& b : baselines) row(b, [&](const ShapeResult& sr) { return graph_median(sr, b, mode); });
      row("best baseline", [&](const ShapeResult& sr) { return sr.best_baseline(mode, TimerKind::Graph); });
      // Which shapes are behind the best baseline by more than the rounds' spread: the whole
      // paired interval below 0.97 (a class ratio under 1 can be noise alone; docs/measuring.md).
      std::vector<std::string> behind;
      size_t with_interval = 0;
      for (const auto& sr : r.shapes)
        for (const auto& mr : sr.methods) {
          if (mr.method != f.name || mr.status != Status::Ok) continue;
          const auto iv = sr.paired_interval(mr, mode, TimerKind::Graph);
          if (!iv) continue;
          ++with_interval;
          if (iv->second < 0.97)
            behind.push_back(fmt::format("{} ({:.3f}-{:.3f})", sr.shape.str(), iv->first, iv->second));
        }
      if (with_interval > 0)
        std::printf("behind the best baseline beyond the rounds' spread (paired interval below 0.97): %zu of %zu%s%s\n",
                    behind.size(), with_interval, behind.empty() ? "" : ": ",
                    fmt::format("{}", fmt::join(behind, ", ")).c_str());
    }
}

}  // namespace cudal2
