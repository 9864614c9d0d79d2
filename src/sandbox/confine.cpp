// Confinement of a sandbox child: parent-side preparation (scratch, cgroups, environment,
// Landlock rules) and the child-side system calls between fork and execve.
#include "sandbox/confine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

extern char** environ;

// Landlock's ABI, defined here because the system's linux/landlock.h may predate the kernel.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

namespace cudal2::sandbox {
namespace {

constexpr std::uint32_t kLandlockCreateRulesetVersion = 1U << 0;
constexpr int kLandlockRulePathBeneath = 1;

constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
constexpr std::uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
// Rights that may be granted on a file (not a directory) in a path-beneath rule.
constexpr std::uint64_t kFsFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate;
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;         // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;      // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6

struct LandlockRulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct __attribute__((packed)) LandlockPathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

// Filesystem rights Landlock handles at each ABI. IOCTL_DEV (ABI 5) is deliberately not handled:
// CUDA's ioctls on /dev/nvidia* must go through, and ioctls on files the child may open at all
// are no wider a door than the open itself.
std::uint64_t handled_fs_for(int abi) {
  std::uint64_t fs = (1ULL << 13) - 1;  // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2) fs |= 1ULL << 13;       // REFER
  if (abi >= 3) fs |= kFsTruncate;
  return fs;
}

}  // namespace

namespace detail {
namespace {

std::atomic<unsigned> g_counter{0};

std::string errstr(int err) { return std::strerror(err); }

bool write_file(const std::string& path, const std::string& text, int* err = nullptr) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return false;
  }
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int e = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    if (err) *err = n < 0 ? e : EIO;
    return false;
  }
  return true;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Mount {
  std::string root, point, fstype, options;
};

std::vector<Mount> cgroup_mounts() {
  std::vector<Mount> out;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream ls(line);
    std::string id, parent, dev, root, point, opts, tok;
    ls >> id >> parent >> dev >> root >> point >> opts;
    while (ls >> tok && tok != "-") {
    }
    std::string fstype, source, super;
    ls >> fstype >> source >> super;
    if (fstype == "cgroup" || fstype == "cgroup2") out.push_back({root, point, fstype, super});
  }
  return out;
}

bool has_option(const std::string& options, const std::string& name) {
  std::istringstream ss(options);
  std::string o;
  while (std::getline(ss, o, ',')) {
    if (o == name) return true;
  }
  return false;
}

// The directory of this process's cgroup in the hierarchy that `match` picks, or "".
std::string own_cgroup_dir(const std::vector<Mount>& mounts, bool v2, const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line, rel;
  bool found = false;
  while (std::getline(f, line)) {
    // hierarchy-id:controllers:path
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string ctl = line.substr(a + 1, b - a - 1);
    if (v2 ? (line.compare(0, a, "0") == 0 && ctl.empty()) : has_option(ctl, controller)) {
      rel = line.substr(b + 1);
      found = true;
      break;
    }
  }
  if (!found) return "";
  for (const Mount& m : mounts) {
    if (v2 ? m.fstype != "cgroup2" : (m.fstype != "cgroup" || !has_option(m.options, controller))) continue;
    // The mount shows the hierarchy from m.root down; our path must lie beneath it.
    std::string sub = rel;
    if (m.root != "/") {
      if (rel.compare(0, m.root.size(), m.root) != 0) continue;
      sub = rel.substr(m.root.size());
    }
    return m.point + (sub == "/" ? "" : sub);
  }
  return "";
}

void chmod_tree_writable(const std::filesystem::path& dir) {
  std::error_code ec;
  ::chmod(dir.c_str(), 0700);
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) chmod_tree_writable(it->path());
  }
}

bool remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) {
    chmod_tree_writable(path);  // a child of our uid may have made directories unwritable
    ec.clear();
    std::filesystem::remove_all(path, ec);
  }
  return !std::filesystem::exists(path, ec);
}

std::vector<pid_t> cgroup_pids(const std::string& dir) {
  std::vector<pid_t> out;
  std::ifstream f(dir + "/cgroup.procs");
  long p;
  while (f >> p) out.push_back(static_cast<pid_t>(p));
  return out;
}

}  // namespace

// ---- child side: system calls only -------------------------------------------------------------

void apply_in_child(const ChildConfine& c, ChildReport& r) {
  for (int i = 0; i < kStepCount; ++i) r.err[i] = -1;
  r.proc_task_fd = -1;
  if (!c.enabled) return;
  // Join the cgroups first, so everything this process starts is counted and killed with it.
  if (c.n_cgroup_procs > 0) {
    r.err[kStepCgroupJoin] = 0;
    for (int i = 0; i < c.n_cgroup_procs; ++i) {
      const int fd = ::open(c.cgroup_procs[i], O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) r.err[kStepCgroupJoin] = errno ? errno : EIO;
      if (fd >= 0) ::close(fd);
    }
  }
  r.err[kStepRlimits] = 0;
  for (int i = 0; i < c.n_limits; ++i) {
    rlimit cur{};
    rlimit want = c.limits[i].limit;
    if (getrlimit(c.limits[i].resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
      // Without CAP_SYS_RESOURCE the hard limit can only go down.
      if (want.rlim_max > cur.rlim_max) want.rlim_max = cur.rlim_max;
      if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
    }
    if (setrlimit(c.limits[i].resource, &want) != 0) r.err[kStepRlimits] = errno;
  }
  if (c.has_data_limit) {
    r.err[kStepRlimitData] = setrlimit(RLIMIT_DATA, &c.data_limit.limit) == 0 ? 0 : errno;
  }
  if (c.netns) r.err[kStepNetns] = unshare(CLONE_NEWNET) == 0 ? 0 : errno;
  // A mount namespace for a private /dev/shm and, in a PID namespace, a /proc that shows it (CUDA
  // names its threads through /proc/<getpid()>/task/<tid>/comm, and getpid() is the namespace's).
  if (c.private_shm || c.pidns) {
    int e = 0;
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) e = errno;
    if (c.private_shm) {
      r.err[kStepPrivateShm] = e ? e
                               : mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1g") == 0
                                   ? 0
                                   : errno;
    }
    if (c.pidns) {
      r.err[kStepProcMount] = e                                                                                ? e
                              : mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0
                                                                                                               : errno;
    }
  }
  r.err[kStepChdir] = chdir(c.scratch) == 0 ? 0 : errno;
  // Capabilities: empty the bounding set while CAP_SETPCAP is still held, so execve cannot give
  // root its capabilities back; the rest is dropped after the Landlock step.
  if (c.drop_caps) {
    r.err[kStepCaps] = 0;
    for (int cap = 0; cap <= 63; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
        r.err[kStepCaps] = errno;
        break;
      }
    }
    if (r.err[kStepCaps] == EPERM) {
      // No CAP_SETPCAP: fine if we hold no capabilities at all, since no_new_privs (below) keeps
      // execve of a set-user-ID or file-capability binary from granting any.
      __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct data[2]{};
      if (syscall(SYS_capget, &hdr, data) == 0 &&
          (data[0].permitted | data[1].permitted | data[0].inheritable | data[1].inheritable) == 0) {
        r.err[kStepCaps] = 0;
      }
    }
  }
  if (c.no_new_privs) r.err[kStepNoNewPrivs] = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
  if (c.landlock_abi > 0) {
    LandlockRulesetAttr attr{c.handled_fs, c.handled_net, c.scoped};
    const std::size_t size = c.landlock_abi >= 6 ? 24 : c.landlock_abi >= 4 ? 16 : 8;
    const int rfd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    int e = rfd < 0 ? errno : 0;
    for (int i = 0; e == 0 && i < c.n_rules; ++i) {
      const int fd = ::open(c.rules[i].path, O_PATH | O_CLOEXEC);
      if (fd < 0) continue;  // a path that does not exist needs no rule
      LandlockPathBeneathAttr pb{c.rules[i].access, fd};
      if (syscall(SYS_landlock_add_rule, rfd, kLandlockRulePathBeneath, &pb, 0) != 0) e = errno;
      ::close(fd);
    }
    // cuInit writes /proc/<pid>/task/<tid>/comm to name its threads and fails with error 304
    // (cudaErrorOperatingSystem) if it cannot. Only this process's own /proc/<pid> is writable
    // (what is written there affects only itself); the descriptor is kept open across execve to
    // pin that inode. Processes the child forks cannot write their own /proc entries.
    if (e == 0) {
      const int fd = ::open("/proc/self", O_PATH | O_DIRECTORY);  // no O_CLOEXEC: kept
      if (fd >= 0) {
        LandlockPathBeneathAttr pb{(kFsReadFile | kFsWriteFile | kFsReadDir | kFsTruncate) & c.handled_fs, fd};
        if (syscall(SYS_landlock_add_rule, rfd, kLandlockRulePathBeneath, &pb, 0) != 0) e = errno;
        r.proc_task_fd = fd;
      }
    }
    if (e == 0 && syscall(SYS_landlock_restrict_self, rfd, 0) != 0) e = errno;
    if (rfd >= 0) ::close(rfd);
    r.err[kStepLandlock] = e;
  }
  if (c.gid >= 0 || c.uid >= 0) {
    int e = 0;
    if (syscall(SYS_setgroups, 0, nullptr) != 0) e = errno;
    if (e == 0 && c.gid >= 0 && syscall(SYS_setresgid, c.gid, c.gid, c.gid) != 0) e = errno;
    if (e == 0 && c.uid >= 0 && syscall(SYS_setresuid, c.uid, c.uid, c.uid) != 0) e = errno;
    r.err[kStepUser] = e;
  }
  if (c.drop_caps && r.err[kStepCaps] == 0) {
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capset, &hdr, data) != 0) r.err[kStepCaps] = errno;
  }
}

// ---- parent side -------------------------------------------------------------------------------

Confiner::~Confiner() {
  cleanup();
  remove_leftovers();
}

void Confiner::make_cgroups() {
  const std::string name = "cudal2-sbx-" + std::to_string(getpid()) + "-" + std::to_string(g_counter++);
  const auto mounts = cgroup_mounts();
  cgroup_v2_.clear();
  cgroup_mem_ = cgroup_pids_ = false;
  std::vector<std::string> why;
  // cgroup v2: cgroup.kill takes the tree down atomically; memory/pids where delegated.
  const std::string v2_parent = own_cgroup_dir(mounts, /*v2=*/true, "");
  if (!v2_parent.empty()) {
    const std::string dir = v2_parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) == 0) {
      cgroup_v2_ = dir;
      cgroup_dirs_.push_back(dir);
      const std::string ctl = read_text(dir + "/cgroup.controllers");
      auto has_ctl = [&](const char* c) { return (" " + ctl + " ").find(std::string(" ") + c) != std::string::npos; };
      if (!has_ctl("memory") || !has_ctl("pids")) {
        // Fails (EBUSY) where our own cgroup holds processes: v2 has no internal processes.
        int se = 0;
        if (!write_file(v2_parent + "/cgroup.subtree_control", "+memory +pids", &se)) {
          std::string avail = read_text(v2_parent + "/cgroup.controllers");
          while (!avail.empty() && std::isspace(static_cast<unsigned char>(avail.back()))) avail.pop_back();
          why.push_back("cgroup v2 " + v2_parent + " cannot enable memory/pids for its children (" + errstr(se) +
                        "; it has controllers '" + avail + "')");
        }
      }
      const std::string ctl2 = read_text(dir + "/cgroup.controllers");
      auto has2 = [&](const char* c) {
        std::istringstream ss(ctl2);
        std::string w;
        while (ss >> w) {
          if (w == c) return true;
        }
        return false;
      };
      int e = 0;
      if (cfg_.memory_bytes > 0 && has2("memory") &&
          write_file(dir + "/memory.max", std::to_string(cfg_.memory_bytes), &e)) {
        write_file(dir + "/memory.swap.max", "0");
        cgroup_mem_ = true;
      }
      if (cfg_.max_processes > 0 && has2("pids") &&
          write_file(dir + "/pids.max", std::to_string(cfg_.max_processes), &e)) {
        cgroup_pids_ = true;
      }
    } else {
      why.push_back("v2 mkdir " + dir + ": " + errstr(errno));
    }
  } else {
    why.push_back("no cgroup v2 mount for this process");
  }
  // cgroup v1 hierarchies for what v2 could not do.
  auto v1 = [&](const char* controller, const std::string& file, std::uint64_t value) {
    const std::string parent = own_cgroup_dir(mounts, /*v2=*/false, controller);
    if (parent.empty()) {
      why.push_back(std::string("no cgroup v1 ") + controller + " mount");
      return false;
    }
    const std::string dir = parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) {
      why.push_back("mkdir " + dir + ": " + errstr(errno));
      return false;
    }
    cgroup_dirs_.push_back(dir);
    int e = 0;
    if (!write_file(dir + "/" + file, std::to_string(value), &e)) {
      why.push_back("write " + dir + "/" + file + ": " + errstr(e));
      return false;
    }
    return true;
  };
  if (cfg_.memory_bytes > 0 && !cgroup_mem_) {
    cgroup_mem_ = v1("memory", "memory.limit_in_bytes", cfg_.memory_bytes);
    if (cgroup_mem_) {
      // Swap too, where swap accounting is on; fails harmlessly where it is not.
      write_file(cgroup_dirs_.back() + "/memory.memsw.limit_in_bytes", std::to_string(cfg_.memory_bytes));
    }
  }
  if (cfg_.max_processes > 0 && !cgroup_pids_) {
    cgroup_pids_ = v1("pids", "pids.max", cfg_.max_processes);
  }
  std::string reasons;
  for (const auto& w : why) reasons += (reasons.empty() ? "" : ", ") + w;
  // The reasons once, in the first entry; the others point to it.
  std::string first;
  auto note = [&](const std::string& name, const std::string& what) {
    prepared_missing_.push_back(name + ": " + what + (first.empty() ? " (" + reasons + ")" : " (see " + first + ")"));
    if (first.empty()) first = name;
  };
  if (cfg_.memory_bytes > 0 && !cgroup_mem_) note("cgroup-mem", "no memory cgroup");
  if (cfg_.max_processes > 0 && !cgroup_pids_) note("cgroup-pids", "no pids cgroup");
  if (cgroup_dirs_.empty() && !cfg_.pid_namespace) {
    note("tree-kill", "no cgroup; only the process group is killed, setsid'd descendants survive");
  }
}

const ChildConfine& Confiner::prepare() {
  child_ = ChildConfine{};
  report_ = ConfinementReport{};
  prepared_missing_.clear();
  prepared_applied_.clear();
  if (!cfg_.enabled) return child_;
  remove_leftovers();

  // Scratch.
  std::string root = cfg_.scratch_root;
  if (root.empty()) {
    const char* t = std::getenv("TMPDIR");
    root = t && *t ? t : "/tmp";
  }
  std::string tmpl = root + "/cudal2-scratch-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    throw std::system_error(errno, std::generic_category(),
                            "cudal2::sandbox: cannot make a scratch directory under " + root);
  }
  scratch_ = tmpl;
  if (cfg_.run_as_uid >= 0 || cfg_.run_as_gid >= 0) {
    if (::chown(scratch_.c_str(), static_cast<uid_t>(cfg_.run_as_uid), static_cast<gid_t>(cfg_.run_as_gid)) != 0) {
      prepared_missing_.push_back("uid: chown scratch: " + errstr(errno));
    }
  }
  report_.scratch = scratch_;
  prepared_applied_.push_back("scratch");

  // Environment.
  env_.clear();
  auto copy = [&](const std::string& name) {
    if (const char* v = std::getenv(name.c_str())) env_.push_back(name + "=" + v);
  };
  env_.push_back("HOME=" + scratch_);
  env_.push_back("TMPDIR=" + scratch_);
  env_.push_back("CUDA_CACHE_PATH=" + scratch_);
  if (const char* p = std::getenv("PATH")) {
    env_.push_back(std::string("PATH=") + p);
  } else {
    env_.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  }
  for (const char* n : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
                        "NVIDIA_DRIVER_CAPABILITIES"}) {
    copy(n);
  }
  for (const std::string& e : cfg_.env) {
    const auto eq = e.find('=');
    const std::string name = e.substr(0, eq);
    std::erase_if(env_, [&](const std::string& x) { return x.compare(0, name.size() + 1, name + "=") == 0; });
    if (eq != std::string::npos) {
      env_.push_back(e);
    } else {
      copy(e);
    }
  }
  envp_.clear();
  for (auto& e : env_) envp_.push_back(e.data());
  envp_.push_back(nullptr);
  prepared_applied_.push_back("env");

  // Cgroups.
  cgroup_dirs_.clear();
  make_cgroups();
  procs_files_.clear();
  procs_ptrs_.clear();
  for (const auto& d : cgroup_dirs_) procs_files_.push_back(d + "/cgroup.procs");
  for (const auto& f : procs_files_) procs_ptrs_.push_back(f.c_str());

  // Rlimits.
  limits_.clear();
  auto lim = [&](int res, std::uint64_t soft, std::uint64_t hard) {
    if (soft > 0) limits_.push_back({res, {static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)}});
  };
  lim(RLIMIT_CPU, cfg_.cpu_seconds, cfg_.cpu_seconds + 1);
  lim(RLIMIT_FSIZE, cfg_.file_size_bytes, cfg_.file_size_bytes);
  lim(RLIMIT_NOFILE, cfg_.open_files, cfg_.open_files);

  // Landlock.
  int abi = 0;
  if (cfg_.landlock) {
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockCreateRulesetVersion);
    if (v < 0) {
      prepared_missing_.push_back("landlock: the kernel has no Landlock (" + errstr(errno) +
                                  "); writes outside scratch are not confined");
    } else {
      abi = static_cast<int>(v);
    }
  }
  report_.landlock_abi = abi;
  rule_paths_.clear();
  rules_.clear();
  if (abi > 0) {
    const std::uint64_t fs = handled_fs_for(abi);
    const std::uint64_t read = kFsReadFile | kFsReadDir | kFsExecute;
    const std::uint64_t rw_file = (kFsReadFile | kFsWriteFile | kFsTruncate) & fs;
    std::vector<std::pair<std::string, std::uint64_t>> rules;
    auto add = [&](const std::string& path, std::uint64_t access) {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) return;
      if (!S_ISDIR(st.st_mode)) access &= kFsFileRights;
      rules.emplace_back(path, access & fs);
    };
    for (const auto& p : cfg_.read_paths) add(p, read);
    add(scratch_, fs);
    for (const auto& p : cfg_.write_paths) add(p, fs);
    // The device files CUDA opens read-write, and the harmless sinks.
    for (const char* d : {"/dev/null", "/dev/zero", "/dev/full"}) add(d, rw_file);
    if (DIR* dev = ::opendir("/dev")) {
      while (const dirent* e = ::readdir(dev)) {
        if (std::strncmp(e->d_name, "nvidia", 6) == 0) {
          add(std::string("/dev/") + e->d_name, rw_file | kFsReadDir);
        }
      }
      ::closedir(dev);
    }
    if (cfg_.dev_shm != Confinement::DevShm::Deny) add("/dev/shm", fs);
    for (auto& [p, a] : rules) {
      rule_paths_.push_back(p);
      (void)a;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) rules_.push_back({rule_paths_[i].c_str(), rules[i].second});
    child_.landlock_abi = abi;
    child_.handled_fs = fs;
    child_.handled_net = abi >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0;
    child_.scoped = abi >= 6 && cfg_.landlock_scope ? (kScopeAbstractUnix | kScopeSignal) : 0;
    child_.rules = rules_.data();
    child_.n_rules = static_cast<int>(rules_.size());
  }

  child_.enabled = true;
  child_.scratch = scratch_.c_str();
  child_.envp = envp_.data();
  child_.cgroup_procs = procs_ptrs_.data();
  child_.n_cgroup_procs = static_cast<int>(procs_ptrs_.size());
  child_.limits = limits_.data();
  child_.n_limits = static_cast<int>(limits_.size());
  // Without a memory cgroup, RLIMIT_DATA stands in for memory_bytes: it leaves CUDA working
  // (checked on an H100: cuInit, IPC and kernels under 4, 8 and 16 GiB) and refuses larger mallocs,
  // but it counts each process's private writable mappings, not the tree's resident memory.
  const std::uint64_t data = cfg_.data_bytes > 0 ? cfg_.data_bytes : cgroup_mem_ ? 0 : cfg_.memory_bytes;
  if (data > 0) {
    child_.has_data_limit = true;
    child_.data_limit = {RLIMIT_DATA, {static_cast<rlim_t>(data), static_cast<rlim_t>(data)}};
  }
  child_.netns = cfg_.network_namespace;
  child_.private_shm = cfg_.dev_shm == Confinement::DevShm::Private;
  child_.pidns = cfg_.pid_namespace;
  child_.no_new_privs = true;
  child_.drop_caps = cfg_.drop_capabilities;
  child_.uid = cfg_.run_as_uid;
  child_.gid = cfg_.run_as_gid;
  return child_;
}

void Confiner::finish(const ChildReport& r, bool pidns, int pidns_errno) {
  if (!cfg_.enabled) return;
  auto& applied = report_.applied;
  auto& missing = report_.missing;
  applied = prepared_applied_;
  missing = prepared_missing_;
  auto step = [&](int s, const char* name, const std::string& what) {
    if (r.err[s] == 0) {
      applied.emplace_back(name);
    } else if (r.err[s] > 0) {
      missing.push_back(std::string(name) + ": " + what + ": " + errstr(r.err[s]));
    }
  };
  step(kStepNetns, "netns", "unshare(CLONE_NEWNET)");
  if (r.err[kStepNetns] > 0 && report_.landlock_abi >= 4 && r.err[kStepLandlock] == 0) {
    missing.back() += " (Landlock still denies TCP bind/connect)";
  }
  if (r.err[kStepLandlock] == 0) {
    applied.emplace_back("landlock");
    if (child_.handled_net) applied.emplace_back("landlock-net");
    if (child_.scoped) applied.emplace_back("landlock-scope");
  } else if (r.err[kStepLandlock] > 0) {
    missing.push_back("landlock: " + errstr(r.err[kStepLandlock]) + "; writes outside scratch are not confined");
  }
  if (cfg_.landlock && report_.landlock_abi > 0 && report_.landlock_abi < 4 && !cfg_.network_namespace) {
    missing.push_back("landlock-net: Landlock ABI " + std::to_string(report_.landlock_abi) + " has no network rules");
  }
  if (cfg_.dev_shm == Confinement::DevShm::Private) {
    step(kStepPrivateShm, "private-shm", "private /dev/shm (mount namespace)");
    if (r.err[kStepPrivateShm] > 0) missing.back() += "; /dev/shm is shared with the host and writable";
  } else if (cfg_.dev_shm == Confinement::DevShm::Shared) {
    missing.push_back("private-shm: /dev/shm is the host's and writable (dev_shm = Shared)");
  }
  if (pidns) {
    applied.emplace_back("pidns");
    if (r.err[kStepProcMount] > 0) {
      missing.push_back("pidns-proc: mounting /proc for the PID namespace: " + errstr(r.err[kStepProcMount]) +
                        " (CUDA cannot name its threads under Landlock)");
    }
  } else if (cfg_.pid_namespace) {
    missing.push_back("pidns: clone(CLONE_NEWPID): " + errstr(pidns_errno));
  }
  step(kStepNoNewPrivs, "no-new-privs", "prctl(PR_SET_NO_NEW_PRIVS)");
  step(kStepCaps, "caps", "dropping capabilities");
  step(kStepUser, "uid", "setuid/setgid");
  if (r.err[kStepChdir] > 0) missing.push_back("scratch: chdir: " + errstr(r.err[kStepChdir]));
  step(kStepRlimits, "rlimits", "setrlimit");
  step(kStepRlimitData, "rlimit-data", "setrlimit(RLIMIT_DATA)");
  const bool joined = r.err[kStepCgroupJoin] == 0;
  if (r.err[kStepCgroupJoin] > 0) {
    missing.push_back("cgroup: joining: " + errstr(r.err[kStepCgroupJoin]));
    cgroup_mem_ = cgroup_pids_ = false;
  }
  if (joined && cgroup_mem_) applied.emplace_back("cgroup-mem");
  if (joined && cgroup_pids_) applied.emplace_back("cgroup-pids");
  if (pidns) {
    applied.emplace_back("tree-kill:pidns");
  }
  if (joined) {
    applied.emplace_back("tree-kill:cgroup");
  } else if (!pidns && !cgroup_dirs_.empty()) {
    missing.push_back("tree-kill: not in a cgroup; only the process group is killed, setsid'd descendants survive");
  }
  // Without cgroup-mem, "rlimit-data" in applied is the memory limit (see prepare()).
  if (!cgroup_mem_ && cfg_.memory_bytes > 0 && r.err[kStepRlimitData] != 0) {
    missing.push_back("memory: no memory limit applied");
  }
  if (cfg_.require && !missing.empty()) {
    throw std::runtime_error("cudal2::sandbox: confinement incomplete: " + report_.summary());
  }
}

void Confiner::kill_tree(int wait_ms) {
  if (cgroup_dirs_.empty()) return;
  if (!cgroup_v2_.empty()) write_file(cgroup_v2_ + "/cgroup.kill", "1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    bool any = false;
    for (const auto& d : cgroup_dirs_) {
      for (pid_t p : cgroup_pids(d)) {
        any = true;
        kill(p, SIGKILL);
      }
    }
    if (!any || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Confiner::cleanup() {
  if (!cfg_.enabled) return;
  kill_tree(2000);
  for (const auto& d : cgroup_dirs_) {
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
      gone = ::rmdir(d.c_str()) == 0 || errno == ENOENT;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!gone) stale_dirs_.push_back(d);
  }
  cgroup_dirs_.clear();
  cgroup_v2_.clear();
  if (!scratch_.empty()) {
    if (!remove_tree(scratch_)) stale_dirs_.push_back(scratch_);
    scratch_.clear();
  }
}

void Confiner::remove_leftovers() {
  std::erase_if(stale_dirs_, [](const std::string& d) {
    if (d.find("/cudal2-sbx-") != std::string::npos) return ::rmdir(d.c_str()) == 0 || errno == ENOENT;
    return remove_tree(d);
  });
}

}  // namespace detail
}  // namespace cudal2::sandbox
