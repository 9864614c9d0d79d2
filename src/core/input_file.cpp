#include "core/input_file.hpp"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "core/problem.hpp"

namespace cudal2 {

std::string read_input_bytes(const std::string& path, std::string_view what, size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{} '{}' is a directory", what, excerpt(path, 200)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} '{}'", what, excerpt(path, 200)));
  std::string out;
  std::array<char, 65536> buf{};
  while (in.read(buf.data(), buf.size()), in.gcount() > 0) {
    out.append(buf.data(), static_cast<size_t>(in.gcount()));
    if (out.size() > max_bytes)
      throw InputError(fmt::format("{} '{}' is larger than {} MiB", what, excerpt(path, 200), max_bytes >> 20));
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {} '{}'", what, excerpt(path, 200)));
  return out;
}

std::string read_input_file(const std::string& path, std::string_view what, size_t max_bytes) {
  std::string out = read_input_bytes(path, what, max_bytes);
  if (out.find('\0') != std::string::npos)
    throw InputError(fmt::format("{} '{}' is not a text file", what, excerpt(path, 200)));
  return out;
}

std::string excerpt(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, max), text.size());
}

}  // namespace cudal2
