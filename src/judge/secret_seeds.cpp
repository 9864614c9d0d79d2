#include "judge/secret_seeds.hpp"

#include <sys/random.h>

#include <cerrno>
#include <random>

namespace cudal2 {

uint64_t secret_seed() {
  uint64_t v = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      // A kernel without getrandom (or a seccomp filter denying it): the library's entropy source.
      std::random_device rd;
      return (static_cast<uint64_t>(rd()) << 32) ^ rd();
    }
  }
  return v;
}

}  // namespace cudal2
