// The judge's jobs (judge/jobs.hpp): a judge request translated into a bench of the candidates
// and the baselines, and the bench's report translated back into the answer.
#include "judge/jobs.hpp"

#include <chrono>
#include <filesystem>
#include <string>

#include "baselines/baselines.hpp"
#include "baselines/cublaslt_config.hpp"
#include "baselines/cublaslt_space.hpp"
#include "codegen/family.hpp"
#include "judge/bench.hpp"
#include "judge/runner_proxy.hpp"
#include "measure/device.hpp"
#include "measure/fatal_fault.hpp"

namespace cudal2 {

namespace {

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace

protocol::JobAnswer run_eval_job(const protocol::EvalJob& job) {
  protocol::JobAnswer answer;
  if (!gpu_available(&answer.error)) return answer;
  BenchOptions o;
  o.measure_settings() = job.measure_settings();
  o.shapes = job.shapes;
  o.accum = job.accum;
  o.progress = false;
  o.csv_path = job.csv;
  o.resume = !o.csv_path.empty();  // append to the file: every job of a tuning run shares it
  o.command_line = job.command;
  // Candidate code is never loaded here: each candidate runs in a confined runner process of its
  // own (judge/runner_proxy.hpp) and this process judges it.
  RemoteConfig rc;
  rc.runner_exe = job.runner.empty() ? self_exe() : job.runner;
  rc.timeout = std::chrono::seconds(job.candidate_timeout);
  rc.confine = job.confine;
  for (const auto& c : job.candidates) {
    const std::string name = c.name, text = c.spec;
    KernelSpec spec;
    if (!text.empty()) {
      spec = parse_spec(text);
    } else {  // a free-form source: only its layout and accumulator are known
      spec.layout = c.layout;
      spec.accum = o.accum;
    }
    if (runs_in_judge(spec, text)) {
      o.methods.push_back({name, false, [spec, name] { return make_cublaslt_config_runner(spec, name); }});
      continue;
    }
    const std::string artifact = c.artifact;
    o.methods.push_back(
        {name, false, [rc, artifact, spec, text, name] { return make_remote_runner(rc, artifact, spec, text, name); }});
  }
  for (const auto& n : job.baselines) {
    const Accum acc = o.accum;
    o.methods.push_back({n, true, [n, acc] { return make_baseline(n, acc); }});
  }
  BenchReport report;
  std::string error;
  try {
    report = run_bench(o);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // A kernel that faulted poisons the context: everything after it fails, so say so and let the
  // parent restart us (and find the culprit by running the job's candidates one at a time).
  if (auto fatal = fatal_fault_answer()) {
    answer.error = fatal->error, answer.fatal = true, answer.kind = fatal->kind;
    return answer;
  }
  if (!error.empty()) {
    answer.error = error;
    return answer;
  }
  answer.ok = true;
  answer.gpu = query_gpu(0).name;
  for (const auto& sr : report.shapes) {
    protocol::ShapeAnswer sa;
    sa.shape = sr.shape;
    for (const auto& mr : sr.methods) {
      protocol::MethodAnswer ma;
      ma.method = mr.method;
      ma.status = mr.status;
      const Verdict& bad = mr.first_failure();
      ma.failure = bad.failure;
      ma.reason = mr.reason.empty() ? bad.detail : mr.reason;
      // -1: not computed (absent); a NaN error is passed on (null on the wire).
      if (!(mr.normal.rel_err < 0)) ma.rel_err = mr.normal.rel_err;
      for (const auto& [mode, arr] : mr.timing)
        for (auto t : kTimers)
          if (arr[static_cast<int>(t)]) ma.timing[mode][t] = *arr[static_cast<int>(t)];
      sa.methods.push_back(std::move(ma));
    }
    answer.shapes.push_back(std::move(sa));
  }
  return answer;
}

nlohmann::json run_lt_space_job(const protocol::LtSpaceJob& job) {
  std::string why;
  if (!gpu_available(&why)) return to_json(protocol::ErrorAnswer{why});
  try {
    protocol::LtSpaceAnswer answer;
    for (const auto& shape : job.shapes)
      for (auto layout : job.layouts) {
        protocol::LtSpace space{shape, layout, {}};
        for (const auto& spec : cublaslt_neighbourhood(shape, layout, job.accum, job.max))
          space.specs.push_back(spec.text());
        answer.spaces.push_back(std::move(space));
      }
    answer.gpu = query_gpu(0).name;
    return to_json(answer);
  } catch (const std::exception& e) {
    return to_json(protocol::ErrorAnswer{e.what()});
  }
}

}  // namespace cudal2
