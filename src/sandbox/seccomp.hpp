#pragma once
// A seccomp filter that takes sockets away from a process that is about to run candidate code.
// The network namespace leaves every Unix socket bound to a path reachable (the namespace covers
// only network sockets and abstract names), and Landlock's filesystem rights do not cover
// connect(2) on a socket file. So the runner, once its trusted set-up (CUDA context, IPC, graphs)
// is done and before it loads a candidate, denies socket(2) outright and io_uring_setup(2) (whose
// IORING_OP_SOCKET would go around the filter). socketpair(2) stays: it reaches nobody.
#include <string>

namespace cudal2::sandbox {

// Installs the filter on every thread of this process (SECCOMP_FILTER_FLAG_TSYNC), after setting
// no_new_privs. Returns "" on success, otherwise why not (the caller treats that as fatal when
// confinement was asked for).
std::string deny_sockets();

}  // namespace cudal2::sandbox
