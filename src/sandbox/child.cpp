// Parent side of the sandbox: start one child process, talk to it, watch it, kill and reap it.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "sandbox/confine.hpp"
#include "sandbox/sandbox.hpp"

extern char** environ;

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace cudal2::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::milliseconds;

// After the child is killed, how long to wait for the kernel to finish it off (a process in an
// uninterruptible driver call can take a while) and for the pipes to report end of file
// (a process that left the group may still hold them).
constexpr milliseconds kReapWait{2000};
constexpr milliseconds kDrainWait{200};
// Without a pidfd, the child's exit is noticed by polling waitid at this interval.
constexpr int kExitPollMs = 10;

[[noreturn]] void throw_errno(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), "cudal2::sandbox: " + what);
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Keeps descriptors 0-2 free so the child's dup2 onto 0, 1 and 2 cannot overwrite one of its own
// pipes when the parent runs with a closed stdin, stdout or stderr.
Fd above_stdio(int fd) {
  if (fd > 2) {
    return Fd(fd);
  }
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int err = errno;
  ::close(fd);
  if (moved < 0) {
    throw_errno(err, "fcntl(F_DUPFD_CLOEXEC)");
  }
  return Fd(moved);
}

struct Pipe {
  Fd read, write;
};

// O_CLOEXEC from the start: a child started by another thread at the same moment must not
// inherit this child's pipes, or our end-of-file would never come.
Pipe make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw_errno(errno, "pipe2");
  }
  Pipe p;
  p.read = above_stdio(fds[0]);
  p.write = above_stdio(fds[1]);
  return p;
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    throw_errno(errno, "fcntl(O_NONBLOCK)");
  }
}

// A write to a pipe whose reader is gone raises SIGPIPE in the writing thread, which by default
// kills the whole parent. Blocking it for this thread and consuming the instance this write raised
// keeps the parent alive without changing the process-wide disposition other code may rely on.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t n;
  do {
    n = ::write(fd, data, size);
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  if (n < 0 && err == EPIPE && !was_pending) {
    timespec zero{};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = err;
  return n;
}

// Reads everything available without blocking. Returns false at end of file (or on a read error,
// which for a pipe means the same: nothing more will come).
template <class Sink>
bool read_available(int fd, Sink&& sink) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return false;
    } else if (errno == EINTR) {
      continue;
    } else {
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
  }
}

int millis_until(Clock::time_point deadline) {
  auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, std::numeric_limits<int>::max()));
}

std::string shorten(std::string_view s, std::size_t limit = 200) {
  if (s.size() <= limit) {
    return std::string(s);
  }
  return std::string(s.substr(0, limit)) + "...";
}

// Everything the child may do between fork and execve, prepared beforehand: a parent with other
// threads may hold the malloc lock at the moment of fork, so the child only makes system calls.
struct ChildSetup {
  char* const* argv;
  int in, out, err, exec_error, report;
  pid_t parent;
  bool die_with_parent, core_dumps, pidns;
  int max_fd;
  const detail::ChildConfine* confine;
  char* const* envp;  // Options::env applied; null: the confined environment or the parent's
};

[[noreturn]] void exec_child(const ChildSetup& s) {
  // Its own process group, so a kill reaches whatever the child spawns (compilers, helpers).
  setpgid(0, 0);
  if (s.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // In a new PID namespace the parent is outside it and getppid() says 0.
    if (!s.pidns && getppid() != s.parent) {
      _exit(127);  // the parent died before prctl took effect
    }
  }
  int err = 0;
  if (dup2(s.in, 0) < 0 || dup2(s.out, 1) < 0 || dup2(s.err, 2) < 0) {
    err = errno;
  }
  // Ignored signals and the blocked mask survive execve; the child should start the way a
  // process started from a shell does (e.g. die of SIGPIPE if the parent goes away).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!s.core_dumps) {
    rlimit core{};
    getrlimit(RLIMIT_CORE, &core);
    core.rlim_cur = 0;
    setrlimit(RLIMIT_CORE, &core);
  }
  detail::ChildReport report;
  detail::apply_in_child(*s.confine, report);
  // Descriptors the rest of the parent opened without O_CLOEXEC (driver handles, databases,
  // sockets) must not leak into untrusted code.
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < s.max_fd; ++fd) {
      fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  if (report.proc_task_fd >= 0) {
    fcntl(report.proc_task_fd, F_SETFD, 0);  // see detail::ChildReport
  }
  if (err == 0) {
    ssize_t written = ::write(s.report, &report, sizeof report);
    (void)written;
    execve(s.argv[0], s.argv, s.envp ? s.envp : s.confine->enabled ? s.confine->envp : environ);
    err = errno;
  }
  ssize_t ignored = ::write(s.exec_error, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

}  // namespace

struct Child::Impl {
  std::vector<std::string> argv;
  Options opt;

  pid_t pid = -1;
  Fd in, out, err, pidfd;  // pidfd: readable when the child exits; absent on kernels before 5.3
  bool out_eof = false, err_eof = false;
  bool in_broken = false;       // a write failed: the child no longer reads its stdin
  std::string out_buf;          // protocol bytes not yet consumed as a response
  std::size_t out_scanned = 0;  // out_buf holds no newline before this offset
  std::string err_tail;         // kept between stderr_limit and twice that, trimmed in bulk
  std::uint64_t err_total = 0;
  int starts = 0;
  std::vector<pid_t> unreaped;  // killed children the kernel had not finished off in kReapWait
  std::unique_ptr<detail::Confiner> confiner;

  bool running() const { return pid > 0; }

  void append_err(const char* p, std::size_t n) {
    err_total += n;
    err_tail.append(p, n);
    if (err_tail.size() > 2 * opt.stderr_limit) {
      err_tail.erase(0, err_tail.size() - opt.stderr_limit);
    }
  }
  std::string err_last(std::uint64_t n) const {
    const std::size_t keep = std::min<std::uint64_t>({n, err_tail.size(), opt.stderr_limit});
    return err_tail.substr(err_tail.size() - keep);
  }

  void read_out() {
    if (!out_eof && !read_available(out.get(), [&](const char* p, std::size_t n) { out_buf.append(p, n); })) {
      out_eof = true;
    }
  }
  void read_err() {
    if (!err_eof && !read_available(err.get(), [&](const char* p, std::size_t n) { append_err(p, n); })) {
      err_eof = true;
    }
  }

  void start() {
    if (running()) {
      return;
    }
    std::vector<char*> cargv;
    for (auto& a : argv) {
      cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    Pipe pin = make_pipe(), pout = make_pipe(), perr = make_pipe(), pexec = make_pipe(), preport = make_pipe();
    const detail::ChildConfine& confine = confiner->prepare();
    // Options::env over the environment the child would otherwise get, built here: the child
    // of a multithreaded parent must not allocate.
    std::vector<std::string> env_strings;
    std::vector<char*> env_ptrs;
    if (!opt.env.empty()) {
      for (char* const* e = confine.enabled ? confine.envp : environ; e && *e; ++e) env_strings.emplace_back(*e);
      for (const std::string& e : opt.env) {
        const std::string name = e.substr(0, e.find('='));
        std::erase_if(env_strings,
                      [&](const std::string& x) { return x.compare(0, name.size() + 1, name + "=") == 0; });
        if (e.find('=') != std::string::npos) env_strings.push_back(e);
      }
      for (auto& e : env_strings) env_ptrs.push_back(e.data());
      env_ptrs.push_back(nullptr);
    }
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    const ChildSetup setup{.argv = cargv.data(),
                           .in = pin.read.get(),
                           .out = pout.write.get(),
                           .err = perr.write.get(),
                           .exec_error = pexec.write.get(),
                           .report = preport.write.get(),
                           .parent = getpid(),
                           .die_with_parent = opt.die_with_parent,
                           .core_dumps = opt.core_dumps,
                           .pidns = false,
                           .max_fd = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 16)),
                           .confine = &confine,
                           .envp = env_ptrs.empty() ? nullptr : env_ptrs.data()};
    // A PID namespace needs clone(); like fork() here, the child goes on on a copy of this stack.
    pid_t child = -1;
    int pidns_errno = 0;
    bool pidns = false;
    if (confiner->pid_namespace()) {
      ChildSetup ns_setup = setup;
      ns_setup.pidns = true;
      child = static_cast<pid_t>(syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
      if (child == 0) {
        exec_child(ns_setup);
      }
      pidns = child > 0;
      pidns_errno = child < 0 ? errno : 0;
    }
    if (child < 0) {
      child = fork();
    }
    if (child < 0) {
      const int e = errno;
      confiner->cleanup();
      throw_errno(e, "fork");
    }
    if (child == 0) {
      exec_child(setup);
    }

    // The child does this too; doing it on both sides closes the window in which a kill(-pid)
    // from here could find no such group yet.
    setpgid(child, child);
    pin.read.reset();
    pout.write.reset();
    perr.write.reset();
    pexec.write.reset();
    preport.write.reset();
    // End of file here means execve succeeded (the pipe is close-on-exec); an int means it failed.
    int child_errno = 0;
    ssize_t n;
    do {
      n = ::read(pexec.read.get(), &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
      confiner->cleanup();
      throw_errno(child_errno, "cannot start child '" + argv[0] + "'");
    }
    // What the confinement steps did, written just before execve.
    detail::ChildReport report{};
    std::size_t got = 0;
    while (got < sizeof report) {
      n = ::read(preport.read.get(), reinterpret_cast<char*>(&report) + got, sizeof report - got);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        break;
      }
      got += static_cast<std::size_t>(n);
    }
    if (got < sizeof report) {
      std::fill(std::begin(report.err), std::end(report.err), EIO);
    }
    try {
      confiner->finish(report, pidns, pidns_errno);
    } catch (...) {
      kill(-child, SIGKILL);
      kill(child, SIGKILL);
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
      confiner->cleanup();
      throw;
    }

    pid = child;
    in = std::move(pin.write);
    out = std::move(pout.read);
    err = std::move(perr.read);
    set_nonblocking(in.get());
    set_nonblocking(out.get());
    set_nonblocking(err.get());
#ifdef SYS_pidfd_open
    pidfd = Fd(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
#endif
    out_eof = err_eof = in_broken = false;
    out_buf.clear();
    out_scanned = 0;
    err_tail.clear();
    ++starts;
  }

  // Peeks without reaping: the zombie keeps the pid, and with it the process group id, reserved
  // until the group has been killed, so that kill can never hit a recycled id.
  bool has_exited() const {
    siginfo_t info{};
    int r;
    do {
      r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      return true;  // ECHILD: reaped by someone else (a SIGCHLD handler); it is gone
    }
    return info.si_pid == pid;
  }

  // One round of I/O until something happens or `until`: write what is left of the request,
  // keep what the child wrote to stdout and stderr (draining stderr also keeps a chatty child
  // from blocking on a full pipe). Returns false if poll() itself fails.
  bool pump(std::string_view& pending, Clock::time_point until) {
    pollfd fds[4] = {{pending.empty() || in_broken ? -1 : in.get(), POLLOUT, 0},
                     {out_eof ? -1 : out.get(), POLLIN, 0},
                     {err_eof ? -1 : err.get(), POLLIN, 0},
                     {pidfd.get(), POLLIN, 0}};
    int wait_ms = millis_until(until);
    if (!pidfd) {
      wait_ms = std::min(wait_ms, kExitPollMs);
    }
    if (poll(fds, 4, wait_ms) < 0) {
      return errno == EINTR;
    }
    if (fds[0].revents != 0) {
      ssize_t n = write_no_sigpipe(in.get(), pending.data(), pending.size());
      if (n > 0) {
        pending.remove_prefix(static_cast<std::size_t>(n));
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        in_broken = true;  // EPIPE: it closed stdin or died; its exit or the deadline will tell
      }
    }
    if (fds[1].revents != 0) {
      read_out();
    }
    if (fds[2].revents != 0) {
      read_err();
    }
    return true;
  }

  // Kills what is left of the group (the child and anything it spawned), reaps the child and
  // collects the rest of its output. Returns the wait status, or nothing if it is unknown.
  std::optional<int> kill_and_reap() {
    std::optional<int> status;
    kill(-pid, SIGKILL);
    // Also the child itself, in case it left its group; through the pidfd where there is one,
    // which cannot name a recycled pid.
#ifdef SYS_pidfd_send_signal
    if (!pidfd || syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) != 0) {
      kill(pid, SIGKILL);
    }
#else
    kill(pid, SIGKILL);
#endif
    // Descendants that left the process group (setsid) are still in the child's cgroup.
    confiner->kill_tree(0);
    in.reset();
    const auto reap_deadline = Clock::now() + kReapWait;
    for (;;) {
      int st = 0;
      pid_t r = waitpid(pid, &st, WNOHANG);
      if (r == pid) {
        status = st;
        break;
      }
      if (r < 0 && errno == EINTR) {
        continue;
      }
      if (r < 0) {
        break;  // ECHILD: someone else reaped it
      }
      if (Clock::now() >= reap_deadline) {
        unreaped.push_back(pid);
        break;
      }
      pollfd pfd{pidfd.get(), POLLIN, 0};
      poll(&pfd, 1, pidfd ? millis_until(reap_deadline) : 1);
    }
    std::string_view nothing;
    const auto drain_deadline = Clock::now() + kDrainWait;
    while (!(out_eof && err_eof) && Clock::now() < drain_deadline) {
      pidfd.reset();  // the dead child's pidfd would wake every poll at once
      if (!pump(nothing, drain_deadline)) {
        break;
      }
    }
    out.reset();
    err.reset();
    pidfd.reset();
    pid = -1;
    // Everything still in the cgroups dies; scratch and cgroups are removed.
    confiner->cleanup();
    return status;
  }

  void reap_leftovers() {
    std::erase_if(unreaped, [](pid_t p) {
      pid_t r;
      do {
        r = waitpid(p, nullptr, WNOHANG);
      } while (r < 0 && errno == EINTR);
      return r != 0;
    });
  }

  // Output the child wrote while idle is consumed here. Unsolicited protocol output means the
  // two sides no longer agree which answer belongs to which request, so that child is replaced,
  // as is one that died or stopped reading since the last call.
  void check_idle_child() {
    if (!running()) {
      return;
    }
    read_out();
    read_err();
    if (has_exited() || in_broken || out_eof || !out_buf.empty()) {
      kill_and_reap();
    }
  }

  Result call(const json& request, milliseconds timeout) {
    const auto t0 = Clock::now();
    const auto deadline = t0 + timeout;
    std::string line = request.dump();
    line += '\n';
    reap_leftovers();
    check_idle_child();
    start();

    Result res;
    res.pid = pid;
    res.confinement = opt.confinement.enabled ? confiner->report().summary() : "none";
    const std::uint64_t err_mark = err_total;
    std::string_view pending = line;
    auto done = [&](Outcome kind, std::string message) {
      res.kind = kind;
      res.message = std::move(message);
      res.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
      return res;
    };
    // Returns the answer if a complete line has arrived.
    auto take_answer = [&]() -> std::optional<Result> {
      const std::size_t nl = out_buf.find('\n', out_scanned);
      if (nl == std::string::npos) {
        out_scanned = out_buf.size();
        if (out_buf.size() <= opt.max_response_bytes) {
          return std::nullopt;
        }
        const std::size_t size = out_buf.size();
        kill_and_reap();
        res.stderr_tail = err_last(err_total);
        return done(Outcome::ProtocolError, "child wrote " + std::to_string(size) +
                                                " bytes without a newline (the limit is " +
                                                std::to_string(opt.max_response_bytes) + ")");
      }
      std::string text = out_buf.substr(0, nl);
      out_buf.erase(0, nl + 1);
      out_scanned = 0;
      json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        if (running()) {
          kill_and_reap();
        }
        res.stderr_tail = err_last(err_total);
        return done(Outcome::ProtocolError, "child wrote a line that is not a JSON object: " + shorten(text));
      }
      res.response = std::move(parsed);
      res.stderr_tail = err_last(err_total - err_mark);
      return done(Outcome::Ok, "");
    };

    for (;;) {
      if (auto answer = take_answer()) {
        return *answer;
      }
      if (has_exited()) {
        const std::optional<int> status = kill_and_reap();
        // It may have answered and exited at once; the answer stands, the next call restarts.
        if (auto answer = take_answer()) {
          return *answer;
        }
        res.stderr_tail = err_last(err_total);
        std::string unfinished = out_buf.empty() ? "" : "; it left an unfinished line on stdout: " + shorten(out_buf);
        if (status && WIFSIGNALED(*status)) {
          res.signal = WTERMSIG(*status);
          res.signal_name = signal_name(res.signal);
          return done(Outcome::Crashed, "child killed by " + res.signal_name + " before answering" +
                                            (WCOREDUMP(*status) ? " (core dumped)" : "") + unfinished);
        }
        if (status && WIFEXITED(*status)) {
          res.exit_code = WEXITSTATUS(*status);
          return done(Outcome::Exited,
                      "child exited with code " + std::to_string(res.exit_code) + " before answering" + unfinished);
        }
        return done(Outcome::Exited, "child exited before answering; its status was taken by another waitpid()");
      }
      if (Clock::now() >= deadline) {
        kill_and_reap();
        res.stderr_tail = err_last(err_total);
        return done(Outcome::Hung, "no answer within " + std::to_string(timeout.count()) +
                                       " ms; killed the child's process group" +
                                       (in_broken ? " (it had stopped reading its stdin)" : ""));
      }
      if (!pump(pending, deadline)) {
        throw_errno(errno, "poll");
      }
    }
  }

  void stop() {
    if (running()) {
      in.reset();  // end of file: serve() returns and the child exits by itself
      std::string_view nothing;
      const auto deadline = Clock::now() + opt.shutdown_grace;
      while (!has_exited() && Clock::now() < deadline && pump(nothing, deadline)) {
      }
      kill_and_reap();  // also takes down anything it left behind in its group
    }
    reap_leftovers();
  }
};

Child::Child(std::vector<std::string> argv, Options options) : impl_(std::make_unique<Impl>()) {
  if (argv.empty() || argv[0].empty()) {
    throw std::invalid_argument("cudal2::sandbox::Child: empty argv");
  }
  impl_->argv = std::move(argv);
  impl_->opt = std::move(options);
  impl_->confiner = std::make_unique<detail::Confiner>(impl_->opt.confinement);
}

// stop() fails only when allocating fails; a destructor has nobody to tell, and the child then
// dies with us through PR_SET_PDEATHSIG or at end of its input.
Child::~Child() {
  try {
    if (impl_) {
      impl_->stop();
    }
  } catch (...) {
  }
}

Child::Child(Child&&) noexcept = default;

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    try {
      if (impl_) {
        impl_->stop();
      }
    } catch (...) {
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Result Child::call(const json& request, std::optional<milliseconds> timeout) {
  return impl_->call(request, timeout.value_or(impl_->opt.timeout));
}

void Child::start() { impl_->start(); }
void Child::stop() { impl_->stop(); }
bool Child::running() const { return impl_->running() && !impl_->has_exited(); }
pid_t Child::pid() const { return impl_->pid; }
int Child::restarts() const { return std::max(0, impl_->starts - 1); }
const ConfinementReport& Child::confinement() const { return impl_->confiner->report(); }

}  // namespace cudal2::sandbox
