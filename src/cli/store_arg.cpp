#include "cli/store_arg.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/input_file.hpp"
#include "core/problem.hpp"
#include "store/reader.hpp"

namespace cudal2::cli {

namespace fs = std::filesystem;

void check_store_arg(const std::string& path, std::string_view option) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) {
    check_output_file(path, option);
    return;
  }
  store::check_before_writing(path, option);
}

void check_executable_arg(const std::string& path, std::string_view option) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0)
    throw InputError(fmt::format("{} '{}': not an executable file", option, excerpt(path, 200)));
}

}  // namespace cudal2::cli
