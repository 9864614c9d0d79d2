#pragma once
// The evaluation client's side of the judge (tuner/evaluate.hpp): one judge process per
// evaluation, or a tune lane's for the whole tune (EvalRequest::judge), jobs sent to it, a failed job's candidates
// retried one at a time, suspect verdicts attributed (tuner/attribution.hpp: the trusted canary, re-runs in a fresh
// runner, backoff), and the records of what stands handed to the sink.
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/protocol.hpp"
#include "sandbox/sandbox.hpp"
#include "tuner/attribution.hpp"
#include "tuner/candidate.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/sink.hpp"

namespace cudal2::evaluation {

// One job in the judge: its answer, or why there is none.
struct JobRun {
  sandbox::Result r;
  std::optional<protocol::JobAnswer> answer;
  std::string malformed;  // the answer could not be read: why
  double seconds = 0;
  bool answered() const { return answer && answer->ok; }
};

// One run of one candidate: what it came to (attribution's view), and the job it ran in, from
// which its rows are recorded when its verdict is the one that stands.
struct CandidateRun {
  attribution::Trial trial;
  std::shared_ptr<const JobRun> job;
  std::string name;       // its method name in that job
  bool has_rows = false;  // the job's answer holds results for it
  std::string failure;    // with rows and a failure: "shape: reason" of its first failed shape
};

// A judge process for req (its judge_exe, visible_devices and timeouts), not yet started.
sandbox::Child make_judge(const EvalRequest& req);

// One evaluation's judge: req.judge when given (kept running after the evaluation), else one of
// its own started with the Evaluator and stopped with it; restarted after a fault (a fresh judge
// as well as a fresh runner) either way.
class Evaluator {
 public:
  Evaluator(const EvalRequest& req, EvalSink& sink)
      : req_(req),
        sink_(sink),
        local_gpu_(req.local_gpu),
        own_(req.judge ? std::nullopt : std::optional<sandbox::Child>(make_judge(req))),
        judge_(req.judge ? req.judge : &*own_) {}
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Evaluates cands (all compiled ok) on shapes, writing their outcomes. A candidate whose verdict
  // a disturbed GPU can cause (a fault, a wrong result, an implausible time) is attributed before
  // anything is recorded (tuner/attribution.hpp): the trusted canary, re-runs alone in a fresh
  // runner, backoff; what stands is recorded, or nothing when the GPU stayed disturbed.
  void evaluate(std::vector<Pending*> cands, std::vector<CandidateOutcome*> outs, const std::vector<Shape>& shapes);

 private:
  // Attributes a candidate's first run and records the run whose verdict stands.
  void settle(Pending& p, CandidateOutcome& co, const std::vector<Shape>& shapes, const CandidateRun& first);

  // Runs cands in one job of the judge.
  std::shared_ptr<const JobRun> run_job(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes);

  // What candidate `name` came to in job: the first failure over its shapes (as "shape: kind:
  // reason"), else ok on any shape, else unsupported; a job without an answer: what killed it.
  // fault: the fault an earlier run of it hit (None: none); a re-run whose answer has no result
  // for it is that fault coming back before the fresh runner could answer (a device assert or an
  // illegal address poisons the runner's context at once), not the judge's protocol error.
  CandidateRun run_of(const std::shared_ptr<const JobRun>& job, const std::string& name,
                      FailureKind fault = FailureKind::None) const;

  // The trusted canary (judge/canary.hpp) in a fresh judge process on this evaluation's GPU. A
  // judge that dies or hangs doing it is a disturbed GPU; one that does not serve the canary (a
  // replaying or scripted judge: no GPU to ask) gives no evidence either way and counts as healthy.
  attribution::Health run_canary_process() const;

  std::string method_name(const Pending& p, size_t i) const;

  nlohmann::json job_for(const std::vector<Pending*>& cands, const std::vector<Shape>& shapes) const;

  static std::string describe_failure(const sandbox::Result& r, const std::string& malformed);

  static MeasurementRecord row_for(const Pending& p, const std::string& gpu, const Shape& s);

  // One failure row per shape, so a resumed run skips the candidate.
  void record_failure(const Pending& p, Outcome kind, const std::string& detail, CandidateOutcome& co,
                      const std::vector<Shape>& shapes);

  // Records the rows of run (one with rows: run_of found it in its job's answer); its outcome is
  // the candidate's. note: "" when the run's verdict stood without question; else what attribution
  // found (kept with every row: a transient fault before an ok row, a reproduced one before a
  // failed row).
  void record_results(const Pending& p, const CandidateRun& run, CandidateOutcome& co, const std::string& note);

  const EvalRequest& req_;
  EvalSink& sink_;
  std::string local_gpu_;
  std::optional<sandbox::Child> own_;
  sandbox::Child* judge_;  // own_, or the request's
};

}  // namespace cudal2::evaluation
