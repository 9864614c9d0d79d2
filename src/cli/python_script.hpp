#pragma once
// Where the CLI finds a Python program it runs (`cudal2 report`'s generator, the replay judge of
// `--replay`): one lookup for all of them, so an installed tree and a checkout behave the same.
#include <filesystem>

namespace cudal2::cli {

// $env_var, else share/cudal2/<file> of an installed tree (core/paths.hpp), else
// python/cudal2/<file> in the source tree holding the executable (build/cudal2 -> ../python/...),
// looked for up to three levels up. Empty when none exists.
std::filesystem::path find_python_script(const char* file, const char* env_var);

}  // namespace cudal2::cli
