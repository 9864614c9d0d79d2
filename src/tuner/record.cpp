#include "tuner/record.hpp"

namespace cudal2::tuner {

store::SpecRow spec_row(const SpecRecord& s) {
  store::SpecRow r;
  r.hash = s.hash, r.family = s.family, r.text = s.text;
  return r;
}

store::BuildRow build_row(const BuildRecord& b) {
  store::BuildRow r;
  r.spec_hash = b.spec_hash, r.source_hash = b.source_hash, r.status = b.status;
  r.compile_seconds = b.compile_seconds, r.log = b.log, r.artifact_path = b.artifact_path;
  return r;
}

store::MeasurementRow measurement_row(const MeasurementRecord& m, const std::string& run_id) {
  store::MeasurementRow r;
  r.spec_hash = m.spec_hash, r.gpu = m.gpu, r.dtype = m.dtype, r.layout = m.layout;
  r.m = m.m, r.n = m.n, r.k = m.k;
  r.mode = m.mode, r.timer = m.timer, r.status = m.status, r.failure = m.failure;
  r.median_us = m.median_us, r.p10_us = m.p10_us, r.p90_us = m.p90_us, r.min_us = m.min_us;
  r.rel_err = m.rel_err;
  r.baseline_json = m.baseline_json;
  r.run_id = run_id;
  r.reward = m.reward;
  r.chain_us = m.chain_us;
  return r;
}

StoreSink::StoreSink(const std::string& db_path, const std::string& command)
    : db_(store::Store::open(db_path)), run_(db_.begin_run(command)) {}

void StoreSink::spec(const SpecRecord& s) { db_.put_spec(spec_row(s)); }

void StoreSink::build(const BuildRecord& b) { db_.put_build(build_row(b)); }

void StoreSink::measurement(const MeasurementRecord& m) { held_.push_back(measurement_row(m, run_)); }

void StoreSink::flush() {
  const auto rows = std::move(held_);
  held_.clear();
  db_.put_measurements(rows);
}

void StoreSink::finish() {
  flush();
  db_.finish_run(run_);
}

StoreSink::~StoreSink() {
  try {
    flush();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; the caller's error stands
  }
}

std::vector<CandidateOutcome> evaluate_and_record(const EvalRequest& req, const std::string& db_path) {
  StoreSink sink(db_path, req.command_line);
  auto out = evaluate_candidates(req, sink);
  sink.finish();
  return out;
}

}  // namespace cudal2::tuner
