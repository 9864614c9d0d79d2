#pragma once
// A process sandbox for untrusted work. A generated kernel may segfault, abort, hang or poison its
// CUDA context; it runs in a child process so the parent (the tuner) survives it and records why
// the job failed. The parent talks to the child over its stdin/stdout pipes, one JSON object per
// line in each direction; the child's stderr is kept (the last 64 KiB) for failure reports.
//
// Parent side:
//   sandbox::Child w({"/path/to/cudal2", "judge"}, {.timeout = std::chrono::seconds(30)});
//   sandbox::Result r = w.call({{"job", ...}});
//   if (!r.ok()) log(r.to_json());   // kind, message, signal or exit code, stderr tail
// Child side (in the executable's main):
//   return sandbox::serve([](const nlohmann::json& req) { return run_job(req); });
//
// Linux only (fork, execve, poll, pidfd, process groups). Caveats for the parent process:
// do not reap children with waitpid(-1) or set SIGCHLD to SIG_IGN (the Child reaps its own
// child); without Options::confinement a child that calls setsid() or setpgid() escapes the group
// kill (with it, a cgroup or PID namespace takes the whole tree down).
//
// Options::confinement (off by default) confines the child for untrusted code: a private scratch
// directory, a minimal environment, no network, writes only to scratch, rlimits, a memory cgroup
// and killing the whole process tree. What applied is in Child::confinement() and in each
// Result; what could not be applied is listed there too, never silently dropped.
// docs/threat-model.md ("Confinement of the runner") says what is confined, how, and what is not.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudal2::sandbox {

enum class Outcome {
  Ok,             // the child answered with a JSON object (which may itself say "ok": false)
  Crashed,        // the child died by a signal before answering (SIGSEGV, SIGABRT, ...)
  Exited,         // the child exited before answering
  Hung,           // no answer within the timeout; the child's process group was killed
  ProtocolError,  // the child wrote a line that is not a JSON object, or an oversized one
};

std::string_view outcome_name(Outcome kind);  // "ok", "crashed", "exited", "hung", "protocol_error"
std::string signal_name(int signo);           // "SIGSEGV"; "SIGRTMIN+3"; "signal 99"

// What a confined child may do. Every mechanism is best effort unless `require` is set: one that
// the kernel or the parent's privileges do not allow is recorded in ConfinementReport::missing.
struct Confinement {
  bool enabled = false;
  // A fresh private directory (mode 0700) is made under scratch_root for each child start and
  // removed after the child and all its descendants are gone. The child's cwd, HOME, TMPDIR and
  // CUDA_CACHE_PATH point there. Empty: $TMPDIR of the parent, else /tmp.
  std::string scratch_root;
  // The child's environment holds only HOME, TMPDIR, CUDA_CACHE_PATH (scratch), PATH,
  // LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES,
  // NVIDIA_DRIVER_CAPABILITIES (those copied from the parent where set) and these entries:
  // "NAME=value" sets NAME, "NAME" copies NAME from the parent if it is set there.
  std::vector<std::string> env;
  // A new network namespace: the child sees only a loopback interface that is down.
  bool network_namespace = true;
  // Landlock: read and execute under read_paths, write only under scratch, write_paths and the
  // device files CUDA opens (/dev/nvidia*, /dev/nvidia-caps/, /dev/null, /dev/zero, /dev/full)
  // and the child's own /proc/<pid> (cuInit writes its threads' comm files there and fails with
  // error 304 otherwise); where the kernel has them, also no TCP bind/connect, no abstract Unix
  // sockets and no signals to processes outside the sandbox (landlock_scope).
  bool landlock = true;
  bool landlock_scope = true;
  std::vector<std::string> read_paths{"/"};
  std::vector<std::string> write_paths;
  // /dev/shm: Private mounts an empty tmpfs there in a new mount namespace (needs CAP_SYS_ADMIN)
  // and allows writes to it; Shared allows writes to the host's /dev/shm (state can carry over
  // between children); Deny leaves it read-only.
  enum class DevShm { Deny, Private, Shared };
  DevShm dev_shm = DevShm::Private;
  // A new PID namespace (the child is its init: when it dies, the kernel kills every process in
  // it), with its own /proc in the mount namespace. CUDA and CUDA IPC work in it (H100, driver
  // 580); off by default because Result::pid and what the child reports as its pid then differ.
  bool pid_namespace = false;
  // Drop every capability (bounding set, effective, permitted, inheritable, ambient) and set
  // no_new_privs, so a child started by root cannot mount, setns, ptrace or load modules.
  bool drop_capabilities = true;
  // Run as this uid/gid (setgroups({}), setgid, setuid) when >= 0; scratch is chowned to it.
  long run_as_uid = -1, run_as_gid = -1;
  // Resource limits; 0 leaves one unset. RLIMIT_CPU is per child process over its whole life:
  // SIGXCPU at cpu_seconds, SIGKILL a second later.
  std::uint64_t cpu_seconds = 600;
  std::uint64_t file_size_bytes = std::uint64_t{4} << 30;  // RLIMIT_FSIZE
  std::uint64_t open_files = 4096;                         // RLIMIT_NOFILE
  std::uint64_t data_bytes = 0;  // RLIMIT_DATA; RLIMIT_AS is never used (CUDA reserves huge VA)
  // A memory cgroup (v2 memory.max or v1 memory.limit_in_bytes) for the child's tree; host
  // memory only, GPU memory is not counted. Where no memory cgroup can be made, RLIMIT_DATA of
  // this size instead (per process; verified to leave CUDA and CUDA IPC working).
  std::uint64_t memory_bytes = std::uint64_t{32} << 30;
  std::uint64_t max_processes = 512;  // pids cgroup (RLIMIT_NPROC counts every process of the uid)
  // start() throws std::runtime_error instead of recording what could not be applied.
  bool require = false;
};

// What a confined child got. summary(): the applied mechanisms joined by '+', e.g.
// "scratch+env+netns+landlock+landlock-net+landlock-scope+private-shm+no-new-privs+caps+rlimits+
// cgroup-mem+cgroup-pids+tree-kill:cgroup", followed by " missing[netns: ...; ...]" if anything
// was not applied. "none" when confinement is off.
struct ConfinementReport {
  std::vector<std::string> applied;
  std::vector<std::string> missing;  // "netns: unshare(CLONE_NEWNET): Operation not permitted"
  std::string scratch;               // this child's scratch directory (removed when it ends)
  int landlock_abi = 0;
  bool has(std::string_view mechanism) const;
  std::string summary() const;
  nlohmann::json to_json() const;
};

struct Options {
  // Per call, from the moment call() is entered: includes starting the child when one is
  // needed, so a child whose start-up hangs is caught too. call() can override it.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // How long the destructor (or stop()) lets the child exit on its own after closing its stdin
  // before it kills the process group.
  std::chrono::milliseconds shutdown_grace{500};
  std::size_t stderr_limit = std::size_t{64} * 1024;
  std::size_t max_response_bytes = std::size_t{64} << 20;
  // PR_SET_PDEATHSIG: the child is killed if the parent dies, so a crashed tuner leaves no
  // orphan holding a GPU. The kernel ties this to the *thread* that forked: a child started
  // from a thread that later exits is killed with it. Set false if threads come and go.
  bool die_with_parent = true;
  // Core dumps of a process with a CUDA context can take gigabytes and many seconds; off
  // unless asked for (RLIMIT_CORE = 0 in the child).
  bool core_dumps = false;
  // "NAME=value" entries set in the child's environment on top of the one it would get
  // otherwise (the parent's, or the confined minimal one), e.g. "CUDA_VISIBLE_DEVICES=1" to give
  // each child of a multi-GPU run its own GPU. An entry without '=' removes NAME.
  std::vector<std::string> env;
  Confinement confinement{};
};

struct Result {
  Outcome kind = Outcome::Ok;
  nlohmann::json response;  // Ok: the child's answer; otherwise null
  std::string message;      // empty on Ok; otherwise one line saying what happened
  // Failures: the child's stderr since it started (the last stderr_limit bytes), which holds
  // what it said before dying. Ok: only what it wrote to stderr during this call.
  std::string stderr_tail;
  int exit_code = -1;       // Exited
  int signal = 0;           // Crashed
  std::string signal_name;  // Crashed, e.g. "SIGSEGV"
  pid_t pid = -1;           // the child process that handled the call
  std::string confinement;  // ConfinementReport::summary() of that child; "none" if unconfined
  std::chrono::milliseconds elapsed{0};

  bool ok() const { return kind == Outcome::Ok; }
  // For failure records: kind, message, exit_code/signal where they apply, stderr_tail (invalid
  // UTF-8 replaced so the object can always be dumped), elapsed_ms, and response when Ok.
  nlohmann::json to_json() const;
};

// One child process at a time, started lazily on the first call() and again on the call after
// any failure. Not thread-safe: one call at a time per Child (use one Child per GPU/thread).
// Movable, not copyable.
class Child {
 public:
  // argv[0] is the executable's path (execve: no PATH search). The environment is inherited
  // unless options.confinement.enabled.
  explicit Child(std::vector<std::string> argv, Options options = {});
  ~Child();  // stop()
  Child(Child&&) noexcept;
  Child& operator=(Child&&) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Sends one request line and waits for one response line. Never throws for anything the
  // child does. Throws std::system_error when the child cannot be started (execve failed,
  // or fork/pipe failed): a setup error, not the job's fault, which retrying will not fix.
  // Throws nlohmann::json::type_error if the request holds invalid UTF-8.
  Result call(const nlohmann::json& request, std::optional<std::chrono::milliseconds> timeout = {});

  void start();  // starts the child now if none is running (e.g. to pay for start-up early)
  void stop();   // closes its stdin, waits shutdown_grace, kills the group, reaps; idempotent

  bool running() const;  // a child process is alive (one that died while idle is not)
  pid_t pid() const;     // the current child's pid, -1 when none has been started or it was reaped
  int restarts() const;  // children started after the first one
  // What confined the current (or last) child; applied is empty before the first start.
  const ConfinementReport& confinement() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Child side. Reads request lines from stdin, answers each with handler(request) as one line
// on stdout, flushed, and returns 0 at end of input (the parent closed the pipe) or 1 if the
// pipes fail. A handler exception, a request that is not JSON, or a handler result that is not
// an object becomes {"ok": false, "error": "..."} and the loop goes on.
// A response object with "exit_after": true is written and then serve() returns 3: the handler's
// process state is unusable (e.g. a poisoned CUDA context) and the parent should start a new one.
// Before the loop the protocol's pipes are moved to private close-on-exec descriptors: fd 1 is
// pointed at stderr and fd 0 at /dev/null, so printf output from libraries (or from processes the
// handler runs) lands in the captured stderr instead of corrupting the protocol.
int serve(const std::function<nlohmann::json(const nlohmann::json&)>& handler);

}  // namespace cudal2::sandbox
