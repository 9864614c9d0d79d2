#pragma once
// `cudal2 export`: the results store(s) -> the dispatch table the runtime library is built from
// (docs/runtime.md). Per GPU: one entry per (accumulator, layout, M, N, K) with the fastest spec
// (offline graph timer), its time, the baselines measured in the same job and the ratio to each,
// and the kernel the runtime runs there when the library ships only a portfolio of N kernels.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudal2::exporter {

struct SpecTime {
  std::string text;          // KernelSpec::text() (with runtime knobs)
  std::string compile_text;  // the kernel the library compiles (specs differing in knobs share it)
  double us = 0;             // best offline graph median of this spec on this shape
  // What choices compare: us, times 1 + Options::compiled_margin for a compiled kernel (any
  // family but `cublaslt`), so that one displaces a cuBLASLt configuration or the fallback only
  // where it measured faster by that margin. Where every measurement of the shape was also timed
  // chained (a confirmation run with --timers graph,chain) or cold (with --mode offline,server: the
  // same job's server-mode graph timer), the geometric mean of the spec's scores back to back and
  // in each such context, each relative to the same job's baseline there, in place of us.
  double rank_us = 0;
};

struct ShapeEntry {
  std::string accum, layout;  // "f32"/"f16", "nn"/"tn"
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<SpecTime> specs;              // by rank_us, fastest first; specs[0] is the shape's best
  std::map<std::string, double> baselines;  // method -> offline graph median (us), from the best's job
  // The runtime's fallback (cuBLASLt heuristic) on this shape, us; 0 = not measured. Taken from
  // "cublaslt-heuristic-<layout>", else "cublas-<layout>" as a proxy (fallback_source says which).
  double fallback_us = 0;
  std::string fallback_source;
  // The fallback's rank over the same contexts as a spec's rank_us, where the shape ranks by more
  // than the graph timer; 0 = fallback_us. What specs' rank_us are compared with: fallback_rank().
  double fallback_rank_us = 0;
  double fallback_rank() const { return fallback_rank_us > 0 ? fallback_rank_us : fallback_us; }
  double best_us() const { return specs.empty() ? 0 : specs.front().us; }
  // What the full table achieves here: the best spec, or the fallback where that is faster.
  double reference_us() const;
};

struct Table {
  std::string gpu;
  std::vector<ShapeEntry> shapes;  // sorted by accum, layout, m, n, k
};

struct Options {
  std::vector<std::string> dbs;
  std::string gpu;                    // "" = the only GPU in the stores (error when several)
  std::vector<std::string> families;  // empty = all
  int portfolio = 0;                  // kernels the library ships; 0 = every shape's best
  std::string out;                    // "" = no file
  std::vector<int> curve_sizes = {1, 2, 4, 8, 16, 32, 64};
  // A compiled kernel of ours is chosen over a cuBLASLt configuration (or the fallback) only when
  // it measured at least this much faster. Measured on the H100 (two same-process runs of the
  // whole grid): wgmma entries that had won their tuning by under 3% ran 1-1.7%
  // slower in the runtime than the cuBLASLt configuration they displaced; those that had won by
  // 3% or more ran 1-10% faster. Winning the best of many noisy measurements, in a job of its
  // own, overstates a kernel's lead (bench/results/h100/runtime/README.md).
  double compiled_margin = 0.03;
  // Confirmation stores (bench/runtime/confirm_entries.sh): a shape and layout measured there is chosen
  // only from its newest run there (one `cudal2 eval --spec-list`, one job per shape), where the
  // table's entry, the search's runners-up and the configurations cuBLASLt's auto-tuning picks
  // from were timed side by side, many rounds, in one process. The search's own measurements stay
  // out of that choice: the best of many noisy jobs, each at its own clocks, overstates a
  // configuration's lead (on the H100, 27 grid shapes ran 1-5% slower in the runtime than
  // auto-tuning's pick, in two copies of the library alike).
  std::vector<std::string> confirmed;
};

// Reads the stores (several are merged: a shape's spec keeps its fastest time across them).
Table collect(const Options& opt);

// A portfolio: which compiled kernels ship and, per shape, what the runtime runs.
struct Choice {
  int kernel = -1;   // index into Portfolio::kernels; -1 = the fallback (cuBLASLt)
  std::string spec;  // full spec text (knobs of the fastest spec of that kernel on the shape)
  double us = 0;     // measured time of that choice (fallback: fallback_us; 0 = unknown)
};
struct Portfolio {
  std::vector<std::string> kernels;  // compile texts, sorted
  std::vector<Choice> choices;       // one per Table::shapes
  double geomean_loss = 1;           // geomean over shapes of choice time / reference time
};

// Greedy: starting from no kernel (every shape on the fallback), add the kernel that lowers the
// geomean loss most, `limit` times (0 or more than there are: all kernels that help). A shape
// runs the fastest portfolio kernel measured on it, or the fallback where that is faster. A shape
// with no fallback time counts its fallback as 2x its best.
Portfolio choose_portfolio(const Table& t, int limit);

struct CurvePoint {
  int limit = 0, kernels = 0;
  double geomean_loss = 1, max_loss = 1;
  int shapes_on_fallback = 0;
};
std::vector<CurvePoint> portfolio_curve(const Table& t, const std::vector<int>& sizes);

// The table file: stable key order and number formatting, one entry per line, so re-exporting
// after more tuning gives a readable diff.
std::string to_json_text(const Table& t, const Portfolio& p, const std::vector<CurvePoint>& curve, int limit);

// Whole command: collect, choose, print the curve, write opt.out. Returns the exit code.
int run(const Options& opt);

// `cudal2 export --trajectories FILE.jsonl` (src/export/trajectories.cpp): the LLM proposer's
// turns as JSON lines {prompt (messages), completion (messages), reward, measurement, problem,
// source, episode, turn, ...} (docs/llm.md). Turns without a reward are skipped unless
// include_unscored. Returns the exit code.
int write_trajectories(const std::vector<std::string>& dbs, const std::string& out_path, bool include_unscored = false);

}  // namespace cudal2::exporter
