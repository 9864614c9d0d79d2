// A bench's shape, before timing (judge/bench_steps.hpp): the methods bound, then verified.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "judge/bench_steps.hpp"
#include "judge/classic_checks.hpp"
#include "judge/secret_seeds.hpp"

namespace cudal2 {

ShapeRun::ShapeRun(BenchJob& j, const Shape& s) : job(j), sr(), buf(s, j.chains) {
  const BenchOptions& opt = job.opt;
  std::vector<MethodPtr>& runners = job.runners;
  sr.shape = s;
  sr.seed = job.rng();  // the shape's first draw (making its buffers draws nothing)
  for (size_t i = 0; i < runners.size(); ++i) {
    MethodResult mr;
    mr.method = opt.methods[i].name;
    mr.baseline = opt.methods[i].baseline;
    mr.layout = runners[i]->layout();
    sr.methods.push_back(std::move(mr));
  }
}

void ShapeRun::fault(size_t i, FailureKind kind, const std::string& detail) {
  auto& mr = sr.methods[i];
  mr.status = Status::Failed;
  mr.judge.fail(kind, detail);
  cudaGetLastError();
}

bool ShapeRun::checked(size_t i, const std::function<void()>& run) {
  std::vector<MethodPtr>& runners = job.runners;
  try {
    judge->arm(*runners[i]);
    run();
    if (const CandidateFault finding = judge->check(*runners[i])) {
      sr.methods[i].judge.fail(finding.kind, finding.what());
      sr.methods[i].status = Status::Failed;
      return false;
    }
    return true;
  } catch (const CandidateFault& e) {
    fault(i, e.kind, e.what());
  } catch (const std::exception& e) {
    fault(i, FailureKind::Error, e.what());
  }
  return false;
}

bool ShapeRun::checked_chain(size_t i, const std::function<void()>& run, int calls) {
  std::vector<MethodPtr>& runners = job.runners;
  try {
    // The runner reads the seed: one it cannot predict from those it saw (judge/secret_seeds.hpp).
    judge->arm_chain(*runners[i], secret_seed());
    run();
    if (const CandidateFault finding = judge->check_chain(*runners[i], calls)) {
      sr.methods[i].judge.fail(finding.kind, finding.what());
      sr.methods[i].status = Status::Failed;
      return false;
    }
    return true;
  } catch (const CandidateFault& e) {
    fault(i, e.kind, e.what());
  } catch (const std::exception& e) {
    fault(i, FailureKind::Error, e.what());
  }
  return false;
}

void ShapeRun::prepare() {
  std::vector<MethodPtr>& runners = job.runners;
  const cudaStream_t st = job.st;
  const Shape& s = sr.shape;
  // Prepare on random-normal data (auto-tuning times candidates on it), then verify.
  buf.fill(false, sr.seed, st);
  for (size_t i = 0; i < runners.size(); ++i) {
    auto& mr = sr.methods[i];
    try {
      runners[i]->prepare(s, buf.operands(runners[i]->layout()), st);
      CUDAL2_CUDA(cudaStreamSynchronize(st));
      mr.details = runners[i]->details();
      live.push_back(i);
    } catch (const MethodUnsupported& e) {
      mr.status = Status::Unsupported;
      mr.reason = e.what();
      cudaGetLastError();
    } catch (const CandidateFault& e) {
      fault(i, e.kind, e.what());
    }
  }
  if (job.any_untrusted) {
    judge = std::make_unique<Judge>(buf, job.secrets, st);
    judge->set_accum(job.opt.accum);
  }
}

void ShapeRun::verify() {
  const BenchOptions& opt = job.opt;
  std::vector<MethodPtr>& runners = job.runners;
  const cudaStream_t st = job.st;
  const JobSecrets& secrets = job.secrets;
  DeviceChecker& checker = job.checker;
  std::mt19937_64& rng = job.rng;
  if (opt.verify) {
    for (bool exact : {false, true}) {
      const auto refill = [&] { buf.fill(exact, exact ? sr.seed ^ 0xE7AC7ull : sr.seed, st); };
      if (exact) refill();
      const Reference ref = host_reference(buf, opt.verify_budget, secrets.sampling_seed ^ sr.seed);
      if (judge) judge->snapshot();
      for (size_t i : live) {
        auto& mr = sr.methods[i];
        Verdict& v = exact ? mr.exact : mr.normal;
        try {
          verify_once(*runners[i], buf, ref, exact, opt.accum, secrets.poison, checker, st, v);
          if (!runners[i]->trusted() && !judge->inputs_intact()) {
            mr.judge.fail(FailureKind::InputModified, "the candidate changed its input operands");
            refill();  // the methods after it are judged on the inputs the reference was made from
          }
        } catch (const CandidateFault& e) {
          fault(i, e.kind, e.what());
        } catch (const std::exception& e) {
          v.fail(FailureKind::Error, e.what());
          cudaGetLastError();
        }
      }
    }
    // Untrusted methods: the whole output against the GPU reference, on every distribution.
    if (judge) {
      for (const auto& d : verification_distributions()) {
        judge->fresh_inputs(d, rng());
        for (size_t i : live) {
          auto& mr = sr.methods[i];
          if (runners[i]->trusted() || !mr.exact.ok || !mr.normal.ok || !mr.judge.ok) continue;
          if (!checked(i, [&] { runners[i]->run(st); })) mr.judge.detail += fmt::format(" (inputs: {})", d.name);
        }
      }
    }
    std::erase_if(live, [&](size_t i) {
      auto& mr = sr.methods[i];
      if (mr.exact.ok && mr.normal.ok && mr.judge.ok) return false;
      if (mr.status == Status::Ok)
        mr.status = mr.exact.failure == FailureKind::Error || mr.normal.failure == FailureKind::Error ? Status::Error
                                                                                                      : Status::Failed;
      return true;
    });
  }
}

}  // namespace cudal2
