// The cudal2 command line. Parsing and output only: the work is in the library. Every subcommand
// is in the registry (src/cli/command.hpp, src/cli/commands.cpp), one file each (src/cli/cmd_*.cpp).
#include <signal.h>

#include <cstring>

#include "cli/command.hpp"

namespace {

// The commands that stop cleanly on SIGTERM/SIGINT (serve, tune: a thread of theirs takes the
// signals, src/serve/signals.hpp) have them blocked before anything else runs: from the
// executable's .preinit_array, which the dynamic loader calls before any library's initializer.
// cuBLASLt's alone takes over 100 ms, and a SIGTERM in that time (or while the options were
// parsed) killed `cudal2 serve` outright. Their sandboxed children unblock them (src/sandbox/child.cpp).
void block_stop_signals_first(int argc, char** argv, char** /*envp*/) {
  if (argc < 2 || argv == nullptr || argv[1] == nullptr) return;
  if (std::strcmp(argv[1], "serve") != 0 && std::strcmp(argv[1], "tune") != 0) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);  // one thread yet: the process's mask
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): the loader's table entry
[[maybe_unused]] __attribute__((section(".preinit_array"),
                                used)) void (*const kEarly)(int, char**, char**) = &block_stop_signals_first;

}  // namespace

int main(int argc, char** argv) { return cudal2::cli::run_cli(argc, argv); }
