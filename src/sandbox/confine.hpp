#pragma once
// Internal to the sandbox: the parent-side preparation and child-side application of
// Options::confinement (sandbox.hpp). The parent prepares everything before fork (scratch
// directory, cgroups, environment, Landlock rules as C strings), so that the child, which may be
// the fork of a multithreaded process, only makes system calls before execve.
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox::detail {

// The steps the child takes; ChildReport::err[step] is 0 when it worked, an errno otherwise, and
// -1 when it was not attempted.
enum ChildStep : int {
  kStepCgroupJoin,
  kStepRlimits,
  kStepRlimitData,
  kStepNetns,
  kStepPrivateShm,
  kStepChdir,
  kStepNoNewPrivs,
  kStepLandlock,
  kStepCaps,
  kStepUser,
  kStepProcMount,
  kStepCount
};

struct ChildReport {
  std::int32_t err[kStepCount];
  // Child only: an O_PATH descriptor on /proc/self that the child keeps across execve, so the
  // inode the Landlock rule names stays the one /proc/self leads to.
  std::int32_t proc_task_fd;
};

struct LandlockRule {
  const char* path;
  std::uint64_t access;
};

struct ChildLimit {
  int resource;
  rlimit limit;
};

// Everything the child needs, as plain pointers into the owning Confiner.
struct ChildConfine {
  bool enabled = false;
  const char* scratch = nullptr;
  char* const* envp = nullptr;
  const char* const* cgroup_procs = nullptr;  // cgroup.procs files the child joins
  int n_cgroup_procs = 0;
  const ChildLimit* limits = nullptr;
  int n_limits = 0;
  bool has_data_limit = false;
  ChildLimit data_limit{};
  bool netns = false, private_shm = false, pidns = false, no_new_privs = true, drop_caps = false;
  // Landlock (landlock_abi == 0: not used).
  int landlock_abi = 0;
  std::uint64_t handled_fs = 0, handled_net = 0, scoped = 0;
  const LandlockRule* rules = nullptr;
  int n_rules = 0;
  long uid = -1, gid = -1;
};

// Async-signal-safe: system calls only. Fills report.
void apply_in_child(const ChildConfine& c, ChildReport& report);

// Parent side, one per Child. prepare() before each fork, finish() once the child has exec'd,
// kill_tree() to take down whatever the child left, cleanup() after the child is reaped.
class Confiner {
 public:
  explicit Confiner(const Confinement& c) : cfg_(c) {}
  ~Confiner();
  Confiner(const Confiner&) = delete;
  Confiner& operator=(const Confiner&) = delete;

  bool enabled() const { return cfg_.enabled; }
  bool pid_namespace() const { return cfg_.enabled && cfg_.pid_namespace; }
  // Makes a fresh scratch directory and cgroups and builds the child's environment and rules.
  // Throws std::system_error when no scratch directory can be made.
  const ChildConfine& prepare();
  // pidns: whether the child really got a PID namespace (clone may have failed and fallen back).
  // Throws std::runtime_error when cfg.require and something was not applied.
  void finish(const ChildReport& child, bool pidns, int pidns_errno);
  // SIGKILLs every process in the child's cgroups (repeatedly, until they are empty or `wait_ms`
  // passes). Safe to call any time; does nothing without cgroups.
  void kill_tree(int wait_ms);
  // kill_tree, then removes scratch and the cgroups (retrying later what is still busy).
  void cleanup();
  const ConfinementReport& report() const { return report_; }

 private:
  void make_cgroups();
  void remove_leftovers();

  Confinement cfg_;
  ConfinementReport report_;
  std::vector<std::string> prepared_missing_;
  std::vector<std::string> prepared_applied_;
  std::string scratch_;
  std::string cgroup_v2_;                 // empty: none
  std::vector<std::string> cgroup_dirs_;  // every cgroup directory made for this child
  bool cgroup_mem_ = false, cgroup_pids_ = false;
  std::vector<std::string> env_;
  std::vector<char*> envp_;
  std::vector<std::string> procs_files_;
  std::vector<const char*> procs_ptrs_;
  std::vector<ChildLimit> limits_;
  std::vector<std::string> rule_paths_;
  std::vector<LandlockRule> rules_;
  std::vector<std::string> stale_dirs_;  // scratch and cgroup directories to retry removing
  ChildConfine child_;
};

}  // namespace cudal2::sandbox::detail
