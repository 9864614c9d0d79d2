#include "eval/candidate.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "baselines/baselines.hpp"
#include "codegen/codegen.hpp"
#include "eval/artifact.hpp"
#include "eval/device.hpp"
#include "jit/compiler.hpp"
#include "sandbox/sandbox.hpp"
#include "store/store.hpp"

namespace cudal2 {

namespace {

nlohmann::json summary_json(const Summary& s) {
  return {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"min", s.min}, {"n", s.n}};
}

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace

nlohmann::json run_eval_job(const nlohmann::json& req) {
  if (req.value("op", "") != "eval") return {{"ok", false}, {"error", "unknown op"}};
  std::string why;
  if (!gpu_available(&why)) return {{"ok", false}, {"error", why}};
  BenchOptions o;
  for (const auto& s : req.at("shapes")) o.shapes.push_back({s.at(0), s.at(1), s.at(2)});
  o.modes.clear();
  for (const auto& m : req.at("modes")) o.modes.push_back(parse_mode(m.get<std::string>()));
  o.reps = req.value("reps", 20);
  o.verify_budget = req.value("verify_budget", double(1 << 28));
  o.progress = false;
  const KernelSpec spec = parse_spec(req.at("spec").get<std::string>());
  o.accum = spec.accum;
  auto art = std::make_shared<Artifact>(req.at("artifact").get<std::string>());
  const std::string name = req.value("name", "candidate");
  o.methods.push_back({name, false, [art, spec, name] { return make_artifact_runner(art, spec, name); }});
  for (const auto& b : req.at("baselines")) {
    const std::string n = b.get<std::string>();
    const Accum acc = spec.accum;
    o.methods.push_back({n, true, [n, acc] { return make_baseline(n, acc); }});
  }
  const auto report = run_bench(o);
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& sr : report.shapes) {
    nlohmann::json methods = nlohmann::json::array();
    for (const auto& mr : sr.methods) {
      nlohmann::json timing = nlohmann::json::object();
      for (const auto& [mode, arr] : mr.timing)
        for (auto t : kTimers)
          if (arr[static_cast<int>(t)])
            timing[std::string(to_string(mode))][std::string(to_string(t))] = summary_json(*arr[static_cast<int>(t)]);
      const Verdict& bad = !mr.exact.ok ? mr.exact : mr.normal;
      methods.push_back({{"method", mr.method},
                         {"status", mr.status},
                         {"failure", bad.failure},
                         {"reason", mr.reason.empty() ? bad.detail : mr.reason},
                         {"rel_err", mr.normal.rel_err},
                         {"timing", timing}});
    }
    shapes.push_back({{"m", sr.shape.m}, {"n", sr.shape.n}, {"k", sr.shape.k}, {"methods", methods}});
  }
  return {{"ok", true}, {"gpu", query_gpu(0).name}, {"shapes", shapes}};
}

int worker_main() {
  return sandbox::serve([](const nlohmann::json& req) { return run_eval_job(req); });
}

std::vector<CandidateOutcome> evaluate_candidates(const EvalRequest& req) {
  auto db = store::Store::open(req.db_path);
  const std::string local_gpu = gpu_available() ? query_gpu(0).name : "unknown";
  const std::string run = db.begin_run(req.command_line);
  std::vector<std::string> sources;
  std::vector<KernelSpec> specs = req.specs;
  for (const auto& s : specs) sources.push_back(generate_source(s));
  if (!req.free_source.empty()) {
    // A free-form candidate is named by the hash of its text.
    KernelSpec s;
    sources.push_back(req.free_source);
    specs.push_back(s);
  }
  Compiler jit;
  const auto built = jit.compile_all(sources);
  sandbox::Options wopt;
  wopt.timeout = std::chrono::seconds(req.timeout_s);
  sandbox::Worker worker({req.worker_exe.empty() ? self_exe() : req.worker_exe, "worker"}, wopt);

  std::vector<CandidateOutcome> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const bool free_form = !req.free_source.empty() && i + 1 == specs.size();
    CandidateOutcome co;
    co.spec_text = free_form ? fmt::format("source {:016x}", fnv1a64(req.free_source)) : specs[i].text();
    co.spec_hash = fmt::format("{:016x}", fnv1a64(co.spec_text));
    db.put_spec({co.spec_hash, free_form ? "source" : specs[i].family, free_form ? req.free_source : co.spec_text, ""});
    store::BuildRow br;
    br.spec_hash = co.spec_hash;
    br.source_hash = built[i].key;
    br.status = built[i].status;
    br.compile_seconds = built[i].seconds;
    br.log = built[i].log;
    br.artifact_path = built[i].artifact;
    db.put_build(br);
    if (!built[i].ok()) {
      co.status = built[i].status;
      co.detail = built[i].log.substr(0, 2000);
      out.push_back(co);
      continue;
    }
    nlohmann::json job{{"op", "eval"},
                       {"artifact", built[i].artifact},
                       {"spec", free_form ? KernelSpec{}.text() : specs[i].text()},
                       {"name", "candidate"},
                       {"reps", req.reps},
                       {"verify_budget", req.verify_budget},
                       {"baselines", req.baselines}};
    job["shapes"] = nlohmann::json::array();
    for (const auto& s : req.shapes) job["shapes"].push_back({s.m, s.n, s.k});
    job["modes"] = nlohmann::json::array();
    for (auto m : req.modes) job["modes"].push_back(std::string(to_string(m)));
    const auto r = worker.call(job);
    const std::string layout(free_form ? "nn" : to_string(specs[i].layout));
    const std::string dtype(free_form ? "f32" : to_string(specs[i].accum));
    if (!r.ok() || !r.response.value("ok", false)) {
      // Crash, hang, exit or a job error: one failure row per shape, so a resumed run skips it.
      co.status = r.ok() ? "error" : std::string(sandbox::outcome_name(r.kind));
      co.detail = r.ok() ? r.response.value("error", "") : r.message + "\n" + r.stderr_tail;
      for (const auto& s : req.shapes) {
        store::MeasurementRow mr;
        mr.spec_hash = co.spec_hash, mr.gpu = local_gpu, mr.dtype = dtype, mr.layout = layout;
        mr.m = s.m, mr.n = s.n, mr.k = s.k, mr.mode = std::string(to_string(req.modes.front())), mr.timer = "graph";
        mr.status = co.status, mr.failure = co.detail.substr(0, 4000), mr.run_id = run;
        db.put_measurement(mr);
      }
      out.push_back(co);
      continue;
    }
    co.response = r.response;
    co.status = "ok";
    const std::string gpu = r.response.at("gpu");
    for (const auto& sh : r.response.at("shapes")) {
      nlohmann::json baselines = nlohmann::json::object();
      const nlohmann::json* cand = nullptr;
      for (const auto& m : sh.at("methods")) {
        if (m.at("method") == "candidate")
          cand = &m;
        else
          baselines[m.at("method").get<std::string>()] = m.at("timing");
      }
      if (!cand) continue;
      if (cand->at("status") != "ok" && co.status == "ok") co.status = cand->at("status");
      for (auto mode : req.modes)
        for (auto t : kTimers) {
          store::MeasurementRow mr;
          mr.spec_hash = co.spec_hash, mr.gpu = gpu, mr.dtype = dtype, mr.layout = layout;
          mr.m = sh.at("m"), mr.n = sh.at("n"), mr.k = sh.at("k");
          mr.mode = std::string(to_string(mode)), mr.timer = std::string(to_string(t));
          mr.failure = cand->at("failure");
          const auto& tj = cand->at("timing");
          const auto ms = std::string(to_string(mode)), ts = std::string(to_string(t));
          if (tj.contains(ms) && tj.at(ms).contains(ts)) {
            const auto& s = tj.at(ms).at(ts);
            mr.status = "ok";
            mr.median_us = s.at("median"), mr.p10_us = s.at("p10"), mr.p90_us = s.at("p90"), mr.min_us = s.at("min");
          } else {
            mr.status = cand->at("status") == "ok" ? "not-capturable" : cand->at("status").get<std::string>();
          }
          if (cand->at("rel_err").get<double>() >= 0) mr.rel_err = cand->at("rel_err").get<double>();
          mr.baseline_json = baselines.dump();
          mr.run_id = run;
          db.put_measurement(mr);
        }
    }
    out.push_back(co);
  }
  db.finish_run(run);
  return out;
}

}  // namespace cudal2

namespace cudal2 {

std::vector<KernelSpec> exhaustive_candidates(const std::string& db_path, const std::vector<Shape>& shapes, Mode mode,
                                              int budget) {
  auto db = store::Store::open(db_path);
  const std::string gpu = gpu_available() ? query_gpu(0).name : "unknown";
  std::vector<KernelSpec> out;
  for (auto layout : {Layout::NN, Layout::TN})
    for (const auto& s : enumerate_sm90(layout, Accum::F32, false)) {
      bool done = true;
      for (const auto& sh : shapes)
        done = done && db.has_measurement(s.hash(), gpu, to_string(s.accum), to_string(s.layout), sh.m, sh.n, sh.k,
                                          to_string(mode));
      if (done) continue;
      out.push_back(s);
      if (budget > 0 && static_cast<int>(out.size()) >= budget) return out;
    }
  return out;
}

void print_outcomes(const std::vector<CandidateOutcome>& outcomes) {
  for (const auto& o : outcomes) {
    std::printf("%-16s %-14s %s\n", o.spec_hash.c_str(), o.status.c_str(), o.spec_text.c_str());
    if (o.status != "ok" && !o.detail.empty()) std::printf("    %s\n", o.detail.substr(0, 300).c_str());
  }
}

int print_best(const std::string& db_path, const std::string& gpu_in) {
  auto db = store::Store::open(db_path);
  const std::string gpu = !gpu_in.empty() ? gpu_in : gpu_available() ? query_gpu(0).name : "NVIDIA H100 80GB HBM3";
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

}  // namespace cudal2
