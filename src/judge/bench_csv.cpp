// The bench's CSV (judge/bench.hpp csv_columns): its columns, one row per method x mode x timer, and
// the file opened for a job (resumed where it already has shapes).
#include <fmt/format.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "judge/bench_steps.hpp"

namespace cudal2 {

namespace {

std::string fmt_num(double v, int prec = 4) { return fmt::format("{:.{}g}", v, prec); }

std::vector<std::string> csv_rows_for(const ShapeResult& sr, const MethodResult& mr, Mode mode, TimerKind t,
                                      const BenchOptions& opt, const ReadLimit& limit) {
  const Shape& s = sr.shape;
  std::vector<std::string> f{std::to_string(s.m),
                             std::to_string(s.n),
                             std::to_string(s.k),
                             std::string(to_string(classify(s))),
                             std::string(to_string(opt.accum)),
                             mr.method,
                             std::string(to_string(mr.layout)),
                             std::string(to_string(mode)),
                             std::string(to_string(t))};
  const auto& sum = mr.timing.count(mode) ? mr.timing.at(mode)[static_cast<int>(t)] : std::nullopt;
  Status status = mr.status;
  std::string reason = mr.reason;
  if (mr.status == Status::Ok && !sum) {
    status = Status::NotCapturable;
    reason = mr.graph_error.count(mode) ? mr.graph_error.at(mode) : "";
  }
  if (sum) {
    const auto best = sr.best_baseline(mode, t);
    f.insert(f.end(), {fmt_num(sum->median, 6), fmt_num(sum->p10, 6), fmt_num(sum->p90, 6), fmt_num(sum->min, 6),
                       std::to_string(sum->n), std::to_string(mr.inner.count(mode) ? mr.inner.at(mode) : 1),
                       fmt_num(tflops_at(s, sum->median)), fmt_num(100.0 * roofline_us(s, opt.ceilings) / sum->median),
                       best ? fmt_num(*best / sum->median) : ""});
    const auto paired = sr.paired_ratio(mr, mode, t);
    f.push_back(paired ? fmt_num(*paired) : "");
  } else {
    f.insert(f.end(), 10, "");
  }
  const Verdict& bad = mr.first_failure();
  f.insert(
      f.end(),
      {std::string(to_string(status)), std::string(to_string(bad.failure)), reason.empty() ? bad.detail : reason,
       mr.normal.rel_err >= 0 ? fmt_num(mr.normal.rel_err, 3) : "", fmt_num(mr.normal.tol, 3),
       std::to_string(mr.exact.exact_checked), std::to_string(mr.exact.exact_mismatches), mr.exact.sampled ? "1" : "0",
       std::to_string(sr.sm_mhz_min), std::to_string(sr.sm_mhz_max), std::to_string(sr.seed), mr.details.dump()});
  const double lim = limit.limit_us(s, mode == Mode::Server);
  f.push_back(lim > 0 ? fmt_num(lim, 6) : "");
  f.push_back(lim > 0 && sum ? fmt_num(100.0 * lim / sum->median) : "");
  const auto interval = sum ? sr.paired_interval(mr, mode, t) : std::nullopt;
  f.push_back(interval ? fmt_num(interval->first) : "");
  f.push_back(interval ? fmt_num(interval->second) : "");
  return f;
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> c{"m",
                                          "n",
                                          "k",
                                          "class",
                                          "accum",
                                          "method",
                                          "layout",
                                          "mode",
                                          "timer",
                                          "median_us",
                                          "p10_us",
                                          "p90_us",
                                          "min_us",
                                          "n_samples",
                                          "inner",
                                          "tflops",
                                          "roofline_pct",
                                          "ratio_to_best_baseline",
                                          "paired_ratio",
                                          "status",
                                          "failure",
                                          "reason",
                                          "rel_err",
                                          "tol",
                                          "exact_checked",
                                          "exact_mismatches",
                                          "sampled",
                                          "sm_mhz_min",
                                          "sm_mhz_max",
                                          "seed",
                                          "details",
                                          "limit_us",
                                          "pct_of_limit",
                                          "paired_lo",
                                          "paired_hi"};
  return c;
}

std::unique_ptr<CsvWriter> open_csv(const BenchOptions& opt, const GpuInfo& gpu, std::vector<Shape>& todo,
                                    BenchReport& report) {
  std::unique_ptr<CsvWriter> csv;
  if (opt.csv_path.empty()) return csv;
  {
    if (opt.resume) {
      std::set<std::string> have;
      try {
        for (const auto& row : read_csv(opt.csv_path))
          have.insert(
              fmt::format("{}x{}x{}|{}|{}", row.at("m"), row.at("n"), row.at("k"), row.at("method"), row.at("mode")));
      } catch (const InputError&) {
        // no file yet: start fresh
      } catch (const std::out_of_range&) {
        throw InputError(fmt::format("'{}' is not a cudal2 bench CSV (missing columns); cannot resume", opt.csv_path));
      }
      std::erase_if(todo, [&](const Shape& s) {
        for (const auto& m : opt.methods)
          for (auto mode : opt.modes)
            if (!have.count(fmt::format("{}|{}|{}", s.str(), m.name, to_string(mode)))) return false;
        return true;
      });
      report.skipped_resumed = static_cast<int>(opt.shapes.size() - todo.size());
    }
    std::vector<std::string> comments{
        fmt::format("cudal2 {}", opt.command_line),
        fmt::format("gpu={} sms={} l2_mb={:.0f} cc={}.{} max_sm_mhz={}", gpu.name, gpu.sm_count, gpu.l2_bytes / 1e6,
                    gpu.cc_major, gpu.cc_minor, gpu.max_sm_clock_mhz),
        fmt::format("driver={} driver_api={} cuda_runtime={} cublas={} cublaslt={}", gpu.driver, gpu.driver_api,
                    gpu.runtime_api, gpu.cublas_version, gpu.cublaslt_version),
        fmt::format("accum={} reps={} qps={} verify_budget_macs={:.3g} roofline={}TFLOP/s,{}TB/s", to_string(opt.accum),
                    opt.reps, opt.qps, opt.verify_budget, opt.ceilings.tflops, opt.ceilings.tbps),
        fmt::format("read_limit warm_tbps={:.4g} cold_floor_us={:.4g} cold_64mib_us={:.4g} (limit_us: operand bytes at "
                    "warm_tbps, plus cold_floor_us in server mode)",
                    report.limit.warm_tbps, report.limit.cold_floor_us, report.limit.cold_64mb_us)};
    csv = std::make_unique<CsvWriter>(opt.csv_path, csv_columns(), opt.resume, comments);
  }
  return csv;
}

void write_rows(CsvWriter& csv, const ShapeResult& sr, const BenchOptions& opt, const ReadLimit& limit) {
  for (const auto& mr : sr.methods)
    for (auto mode : opt.modes)
      for (auto t : kTimers)
        if (opt.timers[static_cast<int>(t)]) csv.row(csv_rows_for(sr, mr, mode, t, opt, limit));
}

const std::vector<std::string>& samples_csv_columns() {
  static const std::vector<std::string> c{"m",     "n",        "k",        "accum",  "mode", "timer",
                                          "round", "position", "previous", "method", "us"};
  return c;
}

std::unique_ptr<CsvWriter> open_samples_csv(const BenchOptions& opt) {
  if (opt.samples_csv_path.empty()) return nullptr;
  return std::make_unique<CsvWriter>(opt.samples_csv_path, samples_csv_columns(), opt.resume,
                                     std::vector<std::string>{fmt::format("cudal2 {}", opt.command_line)});
}

void write_samples(CsvWriter& csv, const ShapeResult& sr, const BenchOptions& opt) {
  for (const auto& [mode, rounds] : sr.rounds) {
    std::string previous;
    for (size_t r = 0; r < rounds.size(); ++r)
      for (size_t pos = 0; pos < rounds[r].size(); ++pos) {
        const MethodResult& mr = sr.methods.at(rounds[r][pos]);
        const auto it = mr.samples.find(mode);
        for (auto t : kTimers) {
          if (!opt.timers[static_cast<int>(t)] || it == mr.samples.end()) continue;
          const auto& v = it->second[static_cast<int>(t)];
          if (r >= v.size()) continue;  // failed in an earlier round, or this timer never ran
          csv.row({std::to_string(sr.shape.m), std::to_string(sr.shape.n), std::to_string(sr.shape.k),
                   std::string(to_string(opt.accum)), std::string(to_string(mode)), std::string(to_string(t)),
                   std::to_string(r), std::to_string(pos), previous, mr.method, fmt_num(v[r], 6)});
        }
        previous = mr.method;
      }
  }
}

}  // namespace cudal2
