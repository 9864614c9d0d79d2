// The cudal2 command line. Parsing and output only: the work is in the library. Every subcommand
// is in the registry (src/cli/command.hpp, src/cli/commands.cpp), one file each (src/cli/cmd_*.cpp).
#include "cli/command.hpp"

int main(int argc, char** argv) { return cudal2::cli::run_cli(argc, argv); }
