// The registry of subcommands (src/cli/commands.cpp) against the built cudal2 binary: every public
// command is listed by `cudal2 --help` and by the unknown-command message, hidden ones by neither,
// and `cudal2 <command> --help` exits 0 for each.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cli/command.hpp"
#include "run_command.hpp"

#ifndef CUDAL2_CLI
#error "CUDAL2_CLI (path to the cudal2 binary) must be defined by the build"
#endif

namespace {

using cudal2::test_util::run_command;

cudal2::test_util::CommandOutcome cli(const std::string& args) {
  return run_command("'" + std::string(CUDAL2_CLI) + "' " + args + " 2>&1 </dev/null");
}

// The words a help text lists as commands: CLI11 prints "Subcommands:" then one "  name  summary" line each.
std::set<std::string> listed_in_help(const std::string& help) {
  std::set<std::string> names;
  const auto at = help.find("Subcommands:");
  if (at == std::string::npos) return names;
  size_t line = help.find('\n', at);
  while (line != std::string::npos && line + 1 < help.size()) {
    const size_t end = help.find('\n', line + 1);
    const std::string l = help.substr(line + 1, end == std::string::npos ? std::string::npos : end - line - 1);
    line = end;
    if (l.size() < 3 || l[0] != ' ' || l[2] == ' ') continue;  // a wrapped summary, or a blank line
    names.insert(l.substr(2, l.find(' ', 2) - 2));
  }
  return names;
}

TEST(CliCommands, RegistryIsNotEmptyAndNamesAreUnique) {
  std::set<std::string_view> names;
  for (const auto& c : cudal2::cli::commands()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_NE(c.add == nullptr, c.raw_main == nullptr) << c.name << ": exactly one of add and raw_main";
  }
  EXPECT_GE(names.size(), 12u);
}

TEST(CliCommands, HelpListsEveryPublicCommandAndNoHiddenOne) {
  const auto o = cli("--help");
  ASSERT_EQ(o.code, 0) << o.output;
  const auto listed = listed_in_help(o.output);
  for (const auto& c : cudal2::cli::commands())
    EXPECT_EQ(listed.count(std::string(c.name)), c.hidden ? 0u : 1u) << c.name << "\n" << o.output;
}

TEST(CliCommands, UnknownCommandMessageListsEveryPublicCommand) {
  const auto o = cli("frobnicate");
  ASSERT_EQ(o.code, 2) << o.output;
  const auto open = o.output.find("(commands: ");
  ASSERT_NE(open, std::string::npos) << o.output;
  const auto close = o.output.find(';', open);
  ASSERT_NE(close, std::string::npos) << o.output;
  std::set<std::string> listed;
  const std::string list = o.output.substr(open + 11, close - open - 11);  // "bench, eval, ..."
  for (size_t at = 0;;) {
    const size_t comma = list.find(", ", at);
    listed.insert(list.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  for (const auto& c : cudal2::cli::commands())
    EXPECT_EQ(listed.count(std::string(c.name)), c.hidden ? 0u : 1u) << c.name << "\n" << o.output;
}

TEST(CliCommands, EveryCommandHasHelpThatExitsZero) {
  for (const auto& c : cudal2::cli::commands()) {
    const auto o = cli(std::string(c.name) + " --help");
    EXPECT_EQ(o.code, 0) << c.name << "\n" << o.output;
    EXPECT_NE(o.output.find("--help"), std::string::npos) << c.name << "\n" << o.output;
  }
}

}  // namespace
