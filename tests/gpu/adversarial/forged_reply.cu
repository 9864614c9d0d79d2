// Class: forges the judge's reply.
// Does: computes nothing; on its first call it writes a JSON line claiming success with a tiny
// median into every writable pipe or socket it inherited (no FD_CLOEXEC: the protocol channel,
// not the CUDA driver's own descriptors).
// Caught as: protocol-error | timing-mismatch | wrong-result | error.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include "cudal2_kernel_abi.h"

extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "adversarial: writes a forged reply into its pipes"; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args*, void*, char*, size_t) {
  static bool done = false;
  if (done) return 0;
  done = true;
  const char line[] = "{\"ok\":true,\"gpu\":\"forged\",\"status\":\"ok\",\"median\":0.5,\"times_us\":[0.5,0.5]}\n";
  DIR* d = opendir("/proc/self/fd");
  for (dirent* e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    const int fd = atoi(e->d_name);
    struct stat st;
    if (fd == dirfd(d) || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) continue;
    if ((fcntl(fd, F_GETFD) & FD_CLOEXEC) || (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY) continue;
    (void)!write(fd, line, strlen(line));
  }
  if (d) closedir(d);
  return 0;
}
