#pragma once
// The profiler observer (`--profile`): Nsight Compute metrics for chosen candidates, stored in the
// store's `profiles` table and shown to the LLM proposer. This file builds the ncu command line
// around a command that runs the candidate, and parses ncu's CSV (`--csv --page raw`) into
// metrics per kernel launch. No CUDA; running ncu is the caller's (it needs the GPU).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llm/records.hpp"

namespace cudal2::llm {

// What we ask ncu for: tensor-pipe utilisation, DRAM and L2 throughput, achieved occupancy, the
// kernel's duration, and per-issue stall ratios of every warp-stall reason.
std::vector<std::string> profile_metrics();
// The stall reasons (metric smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio).
const std::vector<std::string>& stall_reasons();

struct NcuOptions {
  std::string ncu = "ncu";           // the executable
  std::string kernel_regex;          // --kernel-name regex:<...> ("" = every kernel)
  int launch_skip = 0;               // --launch-skip (warm-up launches to pass over)
  int launch_count = 1;              // --launch-count
  bool all_processes = true;         // --target-processes all (the runner is a child process)
  std::string clock_control;         // --clock-control none|base ("" = ncu's default, base)
  std::vector<std::string> metrics;  // empty = profile_metrics()
};

// argv for: ncu --csv --page raw --metrics ... [filters] -- target...
std::vector<std::string> ncu_command(const NcuOptions& opt, const std::vector<std::string>& target);
// The same, quoted for a shell and for the store (single quotes where needed).
std::string shell_join(const std::vector<std::string>& argv);

struct KernelProfile {
  std::string kernel;                     // "Kernel Name"
  std::string id;                         // ncu's launch ID
  std::map<std::string, double> metrics;  // metric -> value in ncu's unit (pct, ratio, ...)
  std::map<std::string, std::string> units;
};

// Parses ncu's `--csv --page raw` output (lines before the header, e.g. "==PROF==" messages and
// the program's own output, are skipped; "1,234.5" thousands separators and "n/a" are handled).
// Throws std::runtime_error when there is no header row.
std::vector<KernelProfile> parse_ncu_csv(const std::string& text);

// The summary we store and prompt with: the named metrics (tensor_pipe_pct, dram_pct, l2_pct,
// achieved_occupancy_pct, duration_us) and the top `top` stall reasons as shares of all stalls.
struct ProfileSummary {
  std::map<std::string, double> metrics;
  std::vector<std::pair<std::string, double>> top_stalls;  // largest first
};
ProfileSummary summarize(const KernelProfile& k, int top = 4);
// The launch to summarise among several: the longest kernel whose name matches none of
// `exclude` (substrings; e.g. the baselines' and verification kernels'). nullopt when none.
std::optional<KernelProfile> pick_kernel(const std::vector<KernelProfile>& ks, const std::vector<std::string>& exclude);

}  // namespace cudal2::llm

namespace cudal2::llm {

// The `--profile` observer's whole step for one candidate on one problem (needs the GPU and ncu):
// runs `ncu ... -- <cudal2> eval --source FILE --layout L --accum A --shape M,N,K --timers eager
// --reps 3 --baselines '' --no-confine` (ncu follows the judge and the runner, which it cannot do
// into a confined runner: the confinement's fresh environment drops the variables ncu injects
// itself with; only candidates that already passed the judge are profiled), picks the candidate's launches (excluding
// the judge's kernels), summarises and stores them in the profiles table. Returns the stored row, or nullopt with `why`
// set; then
// `*ncu_unusable` (when given) says whether ncu itself failed (not found, refused, e.g.
// "LibraryNotLoaded" where the hardware counters cannot be read, no CSV, past the timeout) rather
// than this one candidate (no launch of it profiled).
struct ProfileRequest {
  std::string db_path;
  std::string cudal2_exe;   // this executable
  std::string source_path;  // the candidate's .cu
  std::string spec_hash;    // its store name (free_spec_hash)
  std::string gpu;
  std::string layout = "nn", accum = "f32";
  long long m = 0, n = 0, k = 0;
  double timeout_s = 0;  // > 0: the whole ncu run is killed after this many seconds (coreutils timeout)
  NcuOptions ncu;
};
std::vector<std::string> profile_target(const ProfileRequest& r);
// The kernels a profile must not summarise: the judge's (fills, checks, spin) and the baselines'.
const std::vector<std::string>& profile_excluded_kernels();
std::optional<ProfileRow> profile_candidate(const ProfileRequest& r, std::string& why, bool* ncu_unusable = nullptr);

// The names of the __global__ functions a source defines (in order, without duplicates), for
// ncu's --kernel-name filter; empty when none is found (e.g. kernels behind our shim's macro).
std::vector<std::string> kernel_names(const std::string& source);
// ncu's --kernel-name regex for those names: a name as a whole, with or without a namespace,
// template arguments or parameters around it ("" for no names).
std::string kernel_name_regex(const std::vector<std::string>& names);

}  // namespace cudal2::llm
