#include "sandbox/seccomp.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace cudal2::sandbox {

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "cudal2's seccomp filter knows x86_64 and aarch64"
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

constexpr unsigned kNr = offsetof(seccomp_data, nr);
constexpr unsigned kArchOff = offsetof(seccomp_data, arch);

sock_filter stmt(unsigned short code, unsigned k) { return BPF_STMT(code, k); }
sock_filter jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
  return BPF_JUMP(code, k, jt, jf);
}

}  // namespace

std::string deny_sockets() {
  const sock_filter prog[] = {
    stmt(BPF_LD | BPF_W | BPF_ABS, kArchOff),
    // Another ABI (32-bit x86 entry points) could name socket by another number: deny it whole.
    jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    stmt(BPF_LD | BPF_W | BPF_ABS, kNr),
#if defined(__x86_64__)
    // x32 system calls carry bit 30 and their own numbers.
    jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1),
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
#endif
    jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1),
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog fprog{static_cast<unsigned short>(sizeof prog / sizeof prog[0]), const_cast<sock_filter*>(prog)};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  // With TSYNC, a thread that cannot take the filter makes the call return its id (> 0).
  const long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
  if (r < 0) return std::string("seccomp: ") + std::strerror(errno);
  if (r > 0) return "seccomp: thread " + std::to_string(r) + " could not take the filter";
  return "";
}

}  // namespace cudal2::sandbox
