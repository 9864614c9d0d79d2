#pragma once
// The loop's side of evaluation records: evaluate_candidates hands what it measures to a sink (tuner/sink.hpp)
// and never opens the store; StoreSink writes specs and builds as they arrive and each judge job's
// measurements together as the job ends (one transaction, so a killed run loses at most the job
// in flight), under its run. `cudal2 eval` and `cudal2 serve` evaluate through evaluate_and_record
// (a run per call); `cudal2 tune`'s lanes keep one StoreSink each for the whole search
// (tuner/lanes.hpp), and its final measurement goes through evaluate_and_record.
#include <string>
#include <vector>

#include "store/store.hpp"
#include "tuner/evaluate.hpp"
#include "tuner/sink.hpp"

namespace cudal2::tuner {

// The store at db_path as an evaluation's sink. Opening it (created and migrated if need be)
// begins a run named `command` (store::Store::begin_run); every measurement row is written under
// that run's id. finish() marks the run finished; a sink dropped without it leaves the run
// unfinished (an evaluation that threw, or a killed process: "still running, or it died").
// One store connection: use it from one thread at a time (each GPU lane of run_tune has its own).
class StoreSink final : public EvalSink {
 public:
  StoreSink(const std::string& db_path, const std::string& command);
  void spec(const SpecRecord& s) override;
  void build(const BuildRecord& b) override;
  void measurement(const MeasurementRecord& m) override;
  void flush() override;
  // Writes what is held (flush), then marks the run finished.
  void finish();
  // Writes what is held; errors are lost here (the evaluation is already failing).
  ~StoreSink() override;
  const std::string& run_id() const { return run_; }

 private:
  store::Store db_;
  std::string run_;
  std::vector<store::MeasurementRow> held_;
};

// The store's rows for the evaluation's records (the store sets ids and timestamps).
store::SpecRow spec_row(const SpecRecord& s);
store::BuildRow build_row(const BuildRecord& b);
store::MeasurementRow measurement_row(const MeasurementRecord& m, const std::string& run_id);

// evaluate_candidates(req) recorded in the store at db_path: a run named req.command_line,
// specs, builds and measurements written as they arrive, the run finished when the evaluation
// returns (not when it throws).
std::vector<CandidateOutcome> evaluate_and_record(const EvalRequest& req, const std::string& db_path);

}  // namespace cudal2::tuner
