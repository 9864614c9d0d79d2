#pragma once
// What the store already knows, as the tune loop reads it: the GPU name its rows are under and
// the measurements of a problem's specs as policy observations (resume, and work other tuners on
// the same store measured).
#include <string>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"
#include "core/local_gpus.hpp"
#include "core/problem.hpp"
#include "protocol/modes.hpp"
#include "search/policy.hpp"
#include "store/store.hpp"

namespace cudal2::tuner {

// The GPU name this run's results are found under (the store is keyed by device name; the devices
// as the caller found them, TuneOptions::local): the local GPU's; on a machine without one (a
// --judge that answers from recorded measurements) the one GPU the store holds results of, which
// is the judge's: the rows are stored under the name the judge reports, and looking them up
// under "unknown" found nothing, so a finished tune re-ran (and re-stored) everything.
std::string stored_gpu_name(const std::string& db_path, const LocalGpus& local, int ordinal);

// The store's key of problem p measured on gpu in mode.
store::ProblemKey store_key(const std::string& gpu, const Problem& p, Mode mode);

// What the store already knows about the run's specs on one problem, one observation per spec:
// its offline graph row when there is one (the objective), else its first row.
std::vector<search::Observation> stored_observations(const store::Store& db, const std::string& gpu, const Problem& p,
                                                     Mode mode, const std::vector<KernelSpec>& space);

// Gives the policy what another tuner on the store measured (the (problem, spec) pairs plan_round
// found measured), read back from the store as on a resume: one observe() per problem. Nothing
// when there is none.
void observe_measured_elsewhere(search::Policy& policy, const std::string& db_path, const LocalGpus& local, int ordinal,
                                Mode mode, const std::vector<std::pair<Problem, KernelSpec>>& measured);

}  // namespace cudal2::tuner
