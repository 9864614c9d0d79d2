#include "export/export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <tuple>

#include "codegen/spec.hpp"
#include "core/atomic_file.hpp"
#include "core/problem.hpp"
#include "store/store.hpp"

namespace cudal2::exporter {

double ShapeEntry::reference_us() const {
  const double b = best_us();
  return fallback_us > 0 && fallback_us < b ? fallback_us : b;
}

namespace {

using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

// The other ways a job may have timed a spec beside back to back (offline, graph timer): chained
// (an unrelated kernel before every call; the graph row's chain_us) and cold (server mode: L2
// flushed, idle gaps; a row of its own in the same job).
enum Context : std::size_t { kChain = 0, kCold = 1, kContexts = 2 };

// One ok offline graph measurement, with the trusted baselines timed in its job; ctx_us[c] > 0 where
// the job also timed the spec in context c, with the baselines' times there.
struct Seen {
  std::string text;
  double us = 0;
  std::map<std::string, double> baselines;
  std::array<double, kContexts> ctx_us{};
  std::array<std::map<std::string, double>, kContexts> ctx_baselines;
};

// The baselines' medians under one mode and timer, from a measurement's parsed baseline_json.
std::map<std::string, double> baselines_at(const nlohmann::json& j, const char* mode = "offline",
                                           const char* timer = "graph") {
  std::map<std::string, double> out;
  if (!j.is_object()) return out;
  for (const auto& [name, timing] : j.items()) {
    if (!timing.is_object() || !timing.contains(mode) || !timing[mode].contains(timer)) continue;
    const auto& g = timing[mode][timer];
    if (g.contains("median") && g["median"].is_number() && g["median"].get<double>() > 0)
      out[name] = g["median"].get<double>();
  }
  return out;
}

double fallback_time(const ShapeEntry& e, std::string& source) {
  for (const auto& name : {"cublaslt-heuristic-" + e.layout, "cublas-" + e.layout}) {
    if (auto it = e.baselines.find(name); it != e.baselines.end()) {
      source = name;
      return it->second;
    }
  }
  source.clear();
  return 0;
}

// Jobs run at different clocks (a long campaign heats the GPU; a big shape throttles it), so times
// from two jobs are not comparable, only ratios within one job are. When a shape was measured in
// several jobs, each measurement is scored against a baseline of its own job: the first name here
// that every measurement of the shape has (cuBLASLt's heuristic runs one fixed algorithm, a steadier
// clock than auto-tuning, which may pick differently in each job). None in common: raw times.
template <class Of>
std::string common_reference(const std::vector<Seen>& seen, const std::string& layout, Of baselines_of) {
  for (const auto& name : {"cublaslt-heuristic-" + layout, "cublas-" + layout, std::string("cublas-nn"),
                           std::string("cublaslt-autotune-") + layout})
    if (std::all_of(seen.begin(), seen.end(), [&](const Seen& x) { return baselines_of(x).count(name) > 0; }))
      return name;
  return "";
}

std::string clock_reference(const std::vector<Seen>& seen, const std::string& layout) {
  return common_reference(
      seen, layout, [](const Seen& x) -> const auto& { return x.baselines; });
}

// The same in context c, where every measurement of the shape was timed there too: then a spec
// ranks by the geometric mean of its scores in every such context and back to back. Entries chosen
// back to back alone lost chained on a few K-heavy shapes in every whole-grid run (H200:
// bench/results/h200/reconfirm/), and a model calls its GEMMs between other kernels.
std::string context_reference(const std::vector<Seen>& seen, const std::string& layout, Context c) {
  if (!std::all_of(seen.begin(), seen.end(), [c](const Seen& x) { return x.ctx_us[c] > 0; })) return "";
  return common_reference(
      seen, layout, [c](const Seen& x) -> const auto& { return x.ctx_baselines[c]; });
}

// The geometric mean of a back-to-back score and the scores in every context that ranks the shape
// (ctx_ref[c] set); score_in(c) is the score there, 0 where it is missing (then the mean is 0).
// With no such context, the back-to-back score itself.
template <class ScoreIn>
double context_mean(double graph, const std::array<std::string, kContexts>& ctx_ref, ScoreIn score_in) {
  double log_sum = std::log(graph);
  int n = 1;
  for (std::size_t c = 0; c < kContexts; ++c) {
    if (ctx_ref[c].empty()) continue;
    const double x = score_in(Context(c));
    if (!(x > 0)) return 0;
    log_sum += std::log(x);
    ++n;
  }
  return n == 1 ? graph : std::exp(log_sum / n);
}

std::string num(double v, int digits) {
  if (!std::isfinite(v)) return "null";
  auto s = fmt::format("{:.{}f}", v, digits);
  // Trim trailing zeros for a shorter, still stable text.
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string jstr(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

Table collect(const Options& opt) {
  if (opt.dbs.empty()) throw InputError("export needs at least one --db FILE");
  std::map<Key, std::vector<Seen>> all;  // shape -> every usable measurement
  std::set<std::string> gpus;
  struct Open {
    std::string path;
    store::Store db;
    bool confirmation = false;
  };
  std::vector<Open> dbs;
  std::vector<std::pair<std::string, bool>> paths;
  for (const auto& path : opt.dbs) paths.emplace_back(path, false);
  for (const auto& path : opt.confirmed) paths.emplace_back(path, true);
  for (const auto& [path, confirmation] : paths) {
    if (!std::filesystem::is_regular_file(path)) throw InputError(fmt::format("no such store '{}'", path));
    // Checks it is a cudal2 store, intact to the last index (a damaged one exported half its
    // entries without a word); read-only, an older schema through a migrated copy (store/reader.hpp).
    auto db = store::Store::open_to_read(path, store::Verify::Full);
    for (auto& g : db.gpus_with_best()) gpus.insert(std::move(g));
    dbs.push_back({path, std::move(db), confirmation});
  }
  std::string gpu = opt.gpu;
  if (gpu.empty()) {
    if (gpus.size() != 1)
      throw InputError(gpus.empty() ? std::string("the store(s) hold no measured kernel")
                                    : fmt::format("the stores hold several GPUs ({}): pick one with --gpu NAME",
                                                  fmt::join(gpus, ", ")));
    gpu = *gpus.begin();
  } else if (!gpus.count(gpu)) {
    throw InputError(fmt::format("no measured kernel for GPU '{}' in the store(s) (GPUs: {})", gpu,
                                 gpus.empty() ? std::string("none") : fmt::format("{}", fmt::join(gpus, ", "))));
  }
  const std::set<std::string> fams(opt.families.begin(), opt.families.end());
  // shape -> (run, its measurements) of the newest confirmation run (the last store named wins)
  std::map<Key, std::pair<std::string, std::vector<Seen>>> confirmed;
  for (const auto& o : dbs) {
    // The cold (server mode) measurements by job, shape and spec, joined below to the offline
    // measurement of the same job.
    std::map<std::tuple<std::string, Key, std::string>, std::pair<double, std::map<std::string, double>>> cold;
    for (auto& row : o.db.timed_specs(gpu, "server")) {
      auto& [us, base] = cold[{row.run_id, Key{row.dtype, row.layout, row.m, row.n, row.k}, row.spec_text}];
      if (us == 0 || row.median_us < us)
        us = row.median_us, base = baselines_at(nlohmann::json::parse(row.baseline_json, nullptr, false), "server");
    }
    // Per (shape, spec) the fastest ok offline graph measurement, with the baselines of its job.
    for (auto& row : o.db.timed_specs(gpu)) {
      if (!fams.empty() && !fams.count(row.family)) continue;
      // Free-form sources and prebuilt artifacts (eval --source/--artifact) have no spec a table
      // could rebuild them from.
      if (row.family == "source" || row.family == "artifact") continue;
      const Key key{row.dtype, row.layout, row.m, row.n, row.k};
      const auto base = nlohmann::json::parse(row.baseline_json, nullptr, false);  // once for both timers
      Seen seen{std::move(row.spec_text), row.median_us, baselines_at(base), {}, {}};
      if (row.chain_us && *row.chain_us > 0)
        seen.ctx_us[kChain] = *row.chain_us, seen.ctx_baselines[kChain] = baselines_at(base, "offline", "chain");
      if (auto it = cold.find({row.run_id, key, seen.text}); it != cold.end())
        seen.ctx_us[kCold] = it->second.first, seen.ctx_baselines[kCold] = it->second.second;
      if (!o.confirmation) {
        all[key].push_back(std::move(seen));
        continue;
      }
      // rows come in insertion order: a newer run replaces the one before
      auto& [job, rows] = confirmed[key];
      if (job != row.run_id) {
        job = row.run_id;
        rows.clear();
      }
      rows.push_back(std::move(seen));
    }
  }
  for (auto& [key, job] : confirmed) all[key] = std::move(job.second);
  Table t;
  t.gpu = gpu;
  for (auto& [key, seen] : all) {
    ShapeEntry e;
    std::tie(e.accum, e.layout, e.m, e.n, e.k) = key;
    const std::string ref = clock_reference(seen, e.layout);
    std::array<std::string, kContexts> ctx_ref;  // "" = that context does not rank this shape
    if (!ref.empty())
      for (std::size_t c = 0; c < kContexts; ++c) ctx_ref[c] = context_reference(seen, e.layout, Context(c));
    const bool by_contexts =
        std::any_of(ctx_ref.begin(), ctx_ref.end(), [](const std::string& r) { return !r.empty(); });
    const auto graph_score = [&](const Seen& x) { return ref.empty() ? x.us : x.us / x.baselines.at(ref); };
    // Back to back alone, or the geometric mean over it and every context all the shape's
    // measurements were timed in (chained, cold).
    const auto score = [&](const Seen& x) {
      return context_mean(graph_score(x), ctx_ref,
                          [&](Context c) { return x.ctx_us[c] / x.ctx_baselines[c].at(ctx_ref[c]); });
    };
    const auto handicap = [&](const std::string& text) {
      return text.rfind("cublaslt ", 0) == 0 ? 1.0 : 1.0 + opt.compiled_margin;
    };
    // Per spec its best-scoring measurement; the shape's best of those (by rank: compiled kernels
    // handicapped) sets the clock the entry reports (its own time and its job's baselines), the
    // other specs' graph times rescaled to it.
    std::map<std::string, const Seen*> per_spec;
    const Seen* best = nullptr;
    for (const auto& x : seen) {
      auto& slot = per_spec[x.text];
      if (!slot || score(x) < score(*slot)) slot = &x;
      if (!best || score(x) * handicap(x.text) < score(*best) * handicap(best->text)) best = &x;
    }
    const double clock = ref.empty() ? 1.0 : best->baselines.at(ref);
    for (const auto& [text, x] : per_spec) {
      const double us = x == best ? x->us : graph_score(*x) * clock;
      const double rank = by_contexts ? score(*x) * clock : us;
      e.specs.push_back({text, parse_spec(text).compile_text(), us, rank * handicap(text)});
    }
    std::stable_sort(e.specs.begin(), e.specs.end(), [](const SpecTime& a, const SpecTime& b) {
      return a.rank_us != b.rank_us ? a.rank_us < b.rank_us : a.text < b.text;
    });
    e.baselines = best->baselines;
    e.fallback_us = fallback_time(e, e.fallback_source);
    // Against the fallback too, a spec ranks by the same contexts: the fallback's score in each,
    // from the best's job (where that job timed the fallback in all of them).
    if (by_contexts && e.fallback_us > 0) {
      const double mean =
          context_mean(best->baselines.at(e.fallback_source) / best->baselines.at(ref), ctx_ref, [&](Context c) {
            const auto& b = best->ctx_baselines[c];
            const auto it = b.find(e.fallback_source);
            return it == b.end() ? 0.0 : it->second / b.at(ctx_ref[c]);
          });
      if (mean > 0) e.fallback_rank_us = mean * clock;
    }
    t.shapes.push_back(std::move(e));
  }
  return t;
}

Portfolio choose_portfolio(const Table& t, int limit) {
  const size_t ns = t.shapes.size();
  // Per kernel (compile text): the shapes it was measured on, with its fastest spec there.
  std::map<std::string, std::vector<std::pair<size_t, const SpecTime*>>> by_kernel;
  for (size_t s = 0; s < ns; ++s) {
    std::set<std::string> seen;
    for (const auto& st : t.shapes[s].specs)  // fastest first: the first of each kernel is its best
      if (seen.insert(st.compile_text).second) by_kernel[st.compile_text].push_back({s, &st});
  }
  std::vector<double> ref(ns), cur(ns);
  for (size_t s = 0; s < ns; ++s) {
    const auto& e = t.shapes[s];
    ref[s] = e.reference_us();
    cur[s] = e.fallback_rank() > 0 ? e.fallback_rank() : 2 * e.best_us();
  }
  std::set<std::string> chosen;
  const size_t max = limit <= 0 ? by_kernel.size() : std::min<size_t>(limit, by_kernel.size());
  while (chosen.size() < max) {
    const std::string* pick = nullptr;
    double pick_gain = 0;
    for (const auto& [kt, shapes] : by_kernel) {  // map order: ties go to the smaller text
      if (chosen.count(kt)) continue;
      double gain = 0;
      for (const auto& [s, st] : shapes)
        if (st->rank_us < cur[s]) gain += std::log(cur[s] / st->rank_us);
      if (gain > pick_gain + 1e-12) pick = &kt, pick_gain = gain;
    }
    if (!pick) break;  // no remaining kernel improves any shape
    chosen.insert(*pick);
    for (const auto& [s, st] : by_kernel[*pick]) cur[s] = std::min(cur[s], st->rank_us);
  }
  Portfolio p;
  p.kernels.assign(chosen.begin(), chosen.end());
  double log_sum = 0;
  for (size_t s = 0; s < ns; ++s) {
    const auto& e = t.shapes[s];
    Choice c;
    c.us = e.fallback_us;
    for (const auto& st : e.specs) {
      auto it = std::lower_bound(p.kernels.begin(), p.kernels.end(), st.compile_text);
      if (it == p.kernels.end() || *it != st.compile_text) continue;
      if (e.fallback_rank() <= 0 || st.rank_us < e.fallback_rank()) {
        c.kernel = static_cast<int>(it - p.kernels.begin());
        c.spec = st.text;
        c.us = st.us;
      }
      break;  // fastest first
    }
    const double used = c.kernel >= 0 ? c.us : (e.fallback_us > 0 ? e.fallback_us : 2 * e.best_us());
    if (ref[s] > 0) log_sum += std::log(used / ref[s]);
    p.choices.push_back(std::move(c));
  }
  p.geomean_loss = ns ? std::exp(log_sum / static_cast<double>(ns)) : 1;
  return p;
}

std::vector<CurvePoint> portfolio_curve(const Table& t, const std::vector<int>& sizes) {
  std::vector<CurvePoint> out;
  for (int n : sizes) {
    const auto p = choose_portfolio(t, n);
    CurvePoint c;
    c.limit = n;
    c.kernels = static_cast<int>(p.kernels.size());
    c.geomean_loss = p.geomean_loss;
    for (size_t s = 0; s < t.shapes.size(); ++s) {
      const auto& e = t.shapes[s];
      const auto& ch = p.choices[s];
      const double used = ch.kernel >= 0 ? ch.us : (e.fallback_us > 0 ? e.fallback_us : 2 * e.best_us());
      if (e.reference_us() > 0) c.max_loss = std::max(c.max_loss, used / e.reference_us());
      if (ch.kernel < 0) ++c.shapes_on_fallback;
    }
    out.push_back(c);
  }
  return out;
}

std::string to_json_text(const Table& t, const Portfolio& p, const std::vector<CurvePoint>& curve, int limit) {
  std::string o = "{\n";
  o += "  \"format\": \"cudal2-table\",\n  \"version\": 1,\n";
  o += fmt::format("  \"gpu\": {},\n", jstr(t.gpu));
  o += "  \"timer\": \"offline graph median, microseconds\",\n";
  o += "  \"fallback\": \"cublaslt-heuristic (cublas of the same layout where cuBLASLt was not measured)\",\n";
  o += fmt::format("  \"portfolio_limit\": {},\n", limit > 0 ? std::to_string(limit) : std::string("null"));
  o += fmt::format("  \"geomean_loss\": {},\n", num(p.geomean_loss, 4));
  o += "  \"curve\": [";
  for (size_t i = 0; i < curve.size(); ++i)
    o += fmt::format(
        "{}\n    {{\"limit\": {}, \"kernels\": {}, \"geomean_loss\": {}, \"max_loss\": {}, "
        "\"shapes_on_fallback\": {}}}",
        i ? "," : "", curve[i].limit, curve[i].kernels, num(curve[i].geomean_loss, 4), num(curve[i].max_loss, 4),
        curve[i].shapes_on_fallback);
  o += curve.empty() ? "],\n" : "\n  ],\n";
  o += "  \"kernels\": [";
  for (size_t i = 0; i < p.kernels.size(); ++i) o += fmt::format("{}\n    {}", i ? "," : "", jstr(p.kernels[i]));
  o += p.kernels.empty() ? "],\n" : "\n  ],\n";
  o += "  \"entries\": [";
  for (size_t s = 0; s < t.shapes.size(); ++s) {
    const auto& e = t.shapes[s];
    const auto& c = p.choices[s];
    std::string base = "{";
    bool first = true;
    for (const auto& [name, us] : e.baselines) {
      base += fmt::format("{}{}: {{\"us\": {}, \"ratio\": {}}}", first ? "" : ", ", jstr(name), num(us, 3),
                          num(us / e.best_us(), 4));
      first = false;
    }
    base += "}";
    std::string run = c.kernel >= 0 ? fmt::format("{{\"kernel\": {}, \"spec\": {}, \"us\": {}}}", c.kernel,
                                                  jstr(c.spec), num(c.us, 3))
                                    : fmt::format("{{\"kernel\": -1, \"spec\": \"cublaslt\", \"us\": {}}}",
                                                  c.us > 0 ? num(c.us, 3) : std::string("null"));
    o += fmt::format(
        "{}\n    {{\"accum\": {}, \"layout\": {}, \"m\": {}, \"n\": {}, \"k\": {}, \"spec\": {}, \"us\": {}, "
        "\"baselines\": {}, \"run\": {}}}",
        s ? "," : "", jstr(e.accum), jstr(e.layout), e.m, e.n, e.k, jstr(e.specs.front().text), num(e.best_us(), 3),
        base, run);
  }
  o += t.shapes.empty() ? "]\n" : "\n  ]\n";
  o += "}\n";
  return o;
}

int run(const Options& opt) {
  const auto t = collect(opt);
  const auto p = choose_portfolio(t, opt.portfolio);
  const auto curve = portfolio_curve(t, opt.curve_sizes);
  std::set<std::string> distinct;
  for (const auto& e : t.shapes) distinct.insert(e.specs.front().compile_text);
  std::printf("%s: %zu shape(s), %zu distinct best kernel(s)\n", t.gpu.c_str(), t.shapes.size(), distinct.size());
  std::printf("portfolio curve (geomean and worst time / each shape's own best, fallback cuBLASLt where faster):\n");
  std::printf("%8s %8s %14s %10s %12s\n", "limit", "kernels", "geomean loss", "max loss", "on fallback");
  for (const auto& c : curve)
    std::printf("%8d %8d %13.4fx %9.3fx %12d\n", c.limit, c.kernels, c.geomean_loss, c.max_loss, c.shapes_on_fallback);
  std::printf("table: %zu kernel(s)%s, geomean loss %.4fx\n", p.kernels.size(),
              opt.portfolio > 0 ? fmt::format(" (limit {})", opt.portfolio).c_str() : "", p.geomean_loss);
  if (!opt.out.empty()) {
    // Whole or not at all: a full disk used to leave a 0-byte temporary file beside the table.
    write_file_atomically(opt.out, to_json_text(t, p, curve, opt.portfolio), "--out");
    std::printf("wrote %s\n", opt.out.c_str());
  }
  return 0;
}

}  // namespace cudal2::exporter
