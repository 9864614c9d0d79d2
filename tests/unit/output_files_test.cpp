// Output files written whole or not at all (core/atomic_file.hpp) and input files read within
// bounds (core/input_file.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/input_file.hpp"
#include "core/problem.hpp"
#include "temp_dir.hpp"

using namespace cudal2;
using cudal2::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST(AtomicFile, ReplacesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const auto path = dir / "t.json";
  write_file_atomically(path, "old\n", "--out");
  write_file_atomically(path, "new\n", "--out");
  EXPECT_EQ(read(path), "new\n");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, BadPathsAreInputErrorsAndCreateNothing) {
  TempDir dir;
  EXPECT_THROW(write_file_atomically(dir.path(), "x", "--out"), InputError);  // a directory
  EXPECT_THROW(write_file_atomically(dir / "missing" / "deeper" / "t.json", "x", "--out"), InputError);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  EXPECT_EQ(entries(dir.path()), 0u);
  // The file's own directory is made, no more.
  write_file_atomically(dir / "tables" / "t.json", "x", "--out");
  EXPECT_EQ(read(dir / "tables" / "t.json"), "x");
}

TEST(AtomicFile, ADirectoryIsSwappedInWhole) {
  TempDir dir;
  const auto target = dir / "report";
  fs::create_directory(target);
  std::ofstream(target / "index.html") << "old";
  const auto temp = make_temp_sibling(target, true);
  std::ofstream(temp / "index.html") << "new";
  replace_atomically(temp, target);
  EXPECT_EQ(read(target / "index.html"), "new");
  EXPECT_EQ(entries(dir.path()), 1u);  // the old tree and the temporary are gone
}

TEST(InputFile, EndlessDirectoryAndBinaryInputsAreRefused) {
  TempDir dir;
  EXPECT_THROW(read_input_file("/dev/zero", "shapes file", size_t{1} << 20), InputError);
  EXPECT_THROW(read_input_file(dir.path().string(), "policy file"), InputError);
  EXPECT_THROW(read_input_file(dir.file("bin", std::string("1,2,3\0\x01", 7)), "shapes file"), InputError);
  EXPECT_THROW(read_input_file((dir / "none").string(), "shapes file"), InputError);
  EXPECT_EQ(read_input_file(dir.file("ok", "64,64,64\n"), "shapes file"), "64,64,64\n");
}

TEST(InputFile, ALongBadLineIsNotEchoedWhole) {
  const std::string line = "1,2," + std::string(size_t{5} << 20, '3');
  try {
    parse_shape(line);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << std::string(e.what()).substr(0, 200);
  }
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_NE(excerpt(std::string(1000, 'a')).find("(1000 characters)"), std::string::npos);
}
