#pragma once
// One mapping from what went wrong to the one line the user sees and the exit code, for every
// subcommand: bad input or a bad store -> "cudal2: error: ..." and 2; no GPU -> 1; anything else
// -> "cudal2: failed: ..." and 1. The registry (src/cli/commands.cpp) runs every command through it.
// Messages are one line of bounded length: an argument of 100,000 characters was echoed whole.
// Library exceptions that mean bad input get words of their own instead of the library's
// ("[json.exception.type_error.316] ...", "filesystem error: status: File name too long").
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/problem.hpp"
#include "measure/device.hpp"
#include "store/error.hpp"

namespace cudal2::cli {

// `message` as one line of at most `max` characters (its start, then how long it was).
inline std::string bounded_message(std::string_view message, size_t max = 600) {
  std::string out;
  for (char c : message.substr(0, max)) out += c == '\n' || c == '\r' ? ' ' : c;
  if (message.size() > max) out += "... (" + std::to_string(message.size()) + " characters)";
  return out;
}

inline int report_error(std::string_view message) {
  std::fprintf(stderr, "cudal2: error: %s\n", bounded_message(message).c_str());
  return 2;
}

inline int exit_code_of(const std::function<int()>& body) {
  try {
    return body();
  } catch (const store::StoreError& e) {
    return report_error(e.what());
  } catch (const InputError& e) {
    return report_error(e.what());
  } catch (const NoGpuError& e) {
    std::fprintf(stderr, "cudal2: %s: nothing to run on this machine\n", bounded_message(e.what()).c_str());
    return 1;
  } catch (const nlohmann::json::type_error& e) {
    // 316: text that is not UTF-8 (an argument or an input file) on its way into JSON.
    if (e.id == 316) return report_error("an argument or input file holds bytes that are not UTF-8 text");
    std::fprintf(stderr, "cudal2: failed: %s\n", bounded_message(e.what()).c_str());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refuses (too long, a loop of links, not a directory): the user's to fix.
    return report_error("'" + bounded_message(e.path1().string(), 200) + "': " + e.code().message());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudal2: failed: %s\n", bounded_message(e.what()).c_str());
    return 1;
  }
}

}  // namespace cudal2::cli
