#pragma once
// A process sandbox for untrusted work. A generated kernel may segfault, abort, hang or poison its
// CUDA context; it runs in a worker process so the parent (the tuner) survives it and records why
// the job failed. The parent talks to the worker over its stdin/stdout pipes, one JSON object per
// line in each direction; the worker's stderr is kept (the last 64 KiB) for failure reports.
//
// Parent side:
//   sandbox::Worker w({"/path/to/cudal2", "worker"}, {.timeout = std::chrono::seconds(30)});
//   sandbox::Result r = w.call({{"job", ...}});
//   if (!r.ok()) log(r.to_json());   // kind, message, signal or exit code, stderr tail
// Worker side (in the executable's main):
//   return sandbox::serve([](const nlohmann::json& req) { return run_job(req); });
//
// Linux only (fork, execve, poll, pidfd, process groups). Caveats for the parent process:
// do not reap children with waitpid(-1) or set SIGCHLD to SIG_IGN (the Worker reaps its own
// child); a worker that calls setsid() or setpgid() escapes the group kill.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudal2::sandbox {

enum class Outcome {
  Ok,             // the worker answered with a JSON object (which may itself say "ok": false)
  Crashed,        // the worker died by a signal before answering (SIGSEGV, SIGABRT, ...)
  Exited,         // the worker exited before answering
  Hung,           // no answer within the timeout; the worker's process group was killed
  ProtocolError,  // the worker wrote a line that is not a JSON object, or an oversized one
};

std::string_view outcome_name(Outcome kind);  // "ok", "crashed", "exited", "hung", "protocol_error"
std::string signal_name(int signo);           // "SIGSEGV"; "SIGRTMIN+3"; "signal 99"

struct Options {
  // Per call, from the moment call() is entered: includes starting the worker when one is
  // needed, so a worker whose start-up hangs is caught too. call() can override it.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // How long the destructor (or stop()) lets the worker exit on its own after closing its stdin
  // before it kills the process group.
  std::chrono::milliseconds shutdown_grace{500};
  std::size_t stderr_limit = std::size_t{64} * 1024;
  std::size_t max_response_bytes = std::size_t{64} << 20;
  // PR_SET_PDEATHSIG: the worker is killed if the parent dies, so a crashed tuner leaves no
  // orphan holding a GPU. The kernel ties this to the *thread* that forked: a worker started
  // from a thread that later exits is killed with it. Set false if threads come and go.
  bool die_with_parent = true;
  // Core dumps of a process with a CUDA context can take gigabytes and many seconds; off
  // unless asked for (RLIMIT_CORE = 0 in the worker).
  bool core_dumps = false;
};

struct Result {
  Outcome kind = Outcome::Ok;
  nlohmann::json response;  // Ok: the worker's answer; otherwise null
  std::string message;      // empty on Ok; otherwise one line saying what happened
  // Failures: the worker's stderr since it started (the last stderr_limit bytes), which holds
  // what it said before dying. Ok: only what it wrote to stderr during this call.
  std::string stderr_tail;
  int exit_code = -1;       // Exited
  int signal = 0;           // Crashed
  std::string signal_name;  // Crashed, e.g. "SIGSEGV"
  pid_t pid = -1;           // the worker process that handled the call
  std::chrono::milliseconds elapsed{0};

  bool ok() const { return kind == Outcome::Ok; }
  // For failure records: kind, message, exit_code/signal where they apply, stderr_tail (invalid
  // UTF-8 replaced so the object can always be dumped), elapsed_ms, and response when Ok.
  nlohmann::json to_json() const;
};

// One worker process at a time, started lazily on the first call() and again on the call after
// any failure. Not thread-safe: one call at a time per Worker (use one Worker per GPU/thread).
// Movable, not copyable.
class Worker {
 public:
  // argv[0] is the executable's path (execve: no PATH search). The environment is inherited.
  explicit Worker(std::vector<std::string> argv, Options options = {});
  ~Worker();  // stop()
  Worker(Worker&&) noexcept;
  Worker& operator=(Worker&&) noexcept;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Sends one request line and waits for one response line. Never throws for anything the
  // worker does. Throws std::system_error when the worker cannot be started (execve failed,
  // or fork/pipe failed): a setup error, not the job's fault, which retrying will not fix.
  // Throws nlohmann::json::type_error if the request holds invalid UTF-8.
  Result call(const nlohmann::json& request, std::optional<std::chrono::milliseconds> timeout = {});

  void start();  // starts the worker now if none is running (e.g. to pay for start-up early)
  void stop();   // closes its stdin, waits shutdown_grace, kills the group, reaps; idempotent

  bool running() const;  // a worker process is alive (one that died while idle is not)
  pid_t pid() const;     // the current worker's pid, -1 when none has been started or it was reaped
  int restarts() const;  // workers started after the first one

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Worker side. Reads request lines from stdin, answers each with handler(request) as one line
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
