#pragma once
// Checks of a command's files that can be made before it looks for a GPU: without one, bad input
// (a --db that is a directory, a --csv under a missing directory) used to pass and be reported as
// "no CUDA GPU available" (exit 1) instead of what was wrong (exit 2).
#include <string>
#include <string_view>

namespace cudal2::cli {

// A store a command will write: either not there yet (in an existing directory) or an intact cudal2
// store, read without writing to check it (store/reader.hpp). A 0-byte file is a store to be.
// Throws InputError or store::StoreError naming option and path.
void check_store_arg(const std::string& path, std::string_view option);

// An executable the command will start (a stand-in judge).
void check_executable_arg(const std::string& path, std::string_view option);

}  // namespace cudal2::cli
