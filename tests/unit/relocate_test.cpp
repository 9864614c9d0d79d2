// Relocatable: the JIT finds its headers relative to the program (src/core/paths.hpp), so a build or
// installed tree runs from anywhere. tests/relocate_test.sh installs, moves the prefix and runs
// Relocate.InstalledTreeCompilesTiny against it (CUDAL2_TEST_PREFIX).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "core/paths.hpp"
#include "jit/compiler.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace cudal2;

namespace {

using cudal2::testing::TempDir;

// Sets an environment variable for one scope (unset when value is nullptr), then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

CompileOptions cache_at(const std::string& dir) {
  CompileOptions o;
  o.cache_dir = dir;
  return o;
}

}  // namespace

TEST(Relocate, DataDirIsFoundBesideTheProgram) {
  TempDir t;
  // Installed layout: <prefix>/bin/cudal2, <prefix>/share/cudal2/kernels.
  fs::create_directories(t.path() / "prefix" / "bin");
  fs::create_directories(t.path() / "prefix" / "share" / "cudal2" / "kernels");
  EXPECT_EQ(paths::find_data_dir(t.path() / "prefix" / "bin"), t.path() / "prefix" / "share" / "cudal2");
  // Build-tree layout: <build>/cudal2 with <build>/share/cudal2/kernels (and <build>/tests/*).
  fs::create_directories(t.path() / "build" / "tests");
  fs::create_directories(t.path() / "build" / "share" / "cudal2" / "kernels");
  EXPECT_EQ(paths::find_data_dir(t.path() / "build"), t.path() / "build" / "share" / "cudal2");
  EXPECT_EQ(paths::find_data_dir(t.path() / "build" / "tests"), t.path() / "build" / "share" / "cudal2");
  // Neither: empty, so callers can say what to set.
  fs::create_directories(t.path() / "elsewhere");
  EXPECT_EQ(paths::find_data_dir(t.path() / "elsewhere"), fs::path());
}

TEST(Relocate, BuildTreeHasTheInstalledLayout) {
  ScopedEnv a("CUDAL2_DATA_DIR", nullptr), b("CUDAL2_KERNELS_DIR", nullptr);
  EXPECT_EQ(paths::self_dir(), fs::read_symlink("/proc/self/exe").parent_path());
  const fs::path data = paths::data_dir();
  ASSERT_FALSE(data.empty()) << "no share/cudal2 beside " << paths::self_dir();
  EXPECT_TRUE(fs::is_regular_file(data / "kernels" / "cudal2_kernel_abi.h"));
  EXPECT_TRUE(fs::is_regular_file(data / "prompts" / "kernel.md"));
  EXPECT_EQ(paths::kernels_dir(), (data / "kernels").string());
  // Configured with CUTLASS: a relative link to it, which the JIT uses unless CUTLASS_DIR is set.
  if (fs::is_symlink(data / "cutlass")) {
    EXPECT_TRUE(fs::read_symlink(data / "cutlass").is_relative());
    ScopedEnv c("CUTLASS_DIR", nullptr);
    EXPECT_EQ(paths::cutlass_root(), (data / "cutlass").string());
    EXPECT_TRUE(fs::is_regular_file(data / "cutlass" / "include" / "cutlass" / "cutlass.h"));
  }
}

TEST(Relocate, EnvironmentOverrides) {
  TempDir t;
  {
    ScopedEnv k("CUDAL2_KERNELS_DIR", "/some/kernels"), c("CUTLASS_DIR", "/some/cutlass");
    EXPECT_EQ(paths::kernels_dir(), "/some/kernels");
    EXPECT_EQ(paths::cutlass_root(), "/some/cutlass");
    Compiler jit(cache_at(t.path().string()));
    EXPECT_EQ(jit.options().include_dirs,
              (std::vector<std::string>{"/some/kernels", "/some/cutlass/include", "/some/cutlass/tools/util/include"}));
  }
  ScopedEnv d("CUDAL2_DATA_DIR", t.path().c_str()), k("CUDAL2_KERNELS_DIR", nullptr), c("CUTLASS_DIR", nullptr);
  EXPECT_EQ(paths::kernels_dir(), (t.path() / "kernels").string());
  EXPECT_EQ(paths::cutlass_root(), "");  // no cutlass/include/cutlass/cutlass.h there
}

TEST(Relocate, MissingHeadersAreAClearError) {
  TempDir t;
  ScopedEnv d("CUDAL2_DATA_DIR", t.path().c_str()), k("CUDAL2_KERNELS_DIR", nullptr), c("CUTLASS_DIR", nullptr);
  {
    Compiler jit(cache_at((t.path() / "cache").string()));
    const auto r = jit.compile("#include \"tiny_gemm.cuh\"\n");
    EXPECT_EQ(r.status, "compile-error");
    EXPECT_NE(r.log.find("CUDAL2_KERNELS_DIR"), std::string::npos) << r.log;
  }
  fs::create_directories(t.path() / "kernels");
  Compiler jit(cache_at((t.path() / "cache").string()));
  const auto r = jit.compile(generate_source(default_spec("sm90_cutlass")));
  EXPECT_EQ(r.status, "compile-error");
  EXPECT_NE(r.log.find("CUTLASS_DIR"), std::string::npos) << r.log;
  EXPECT_FALSE(fs::exists(t.path() / "cache" / r.key / "status")) << "an installation problem is not cached";
}

// Run by tests/relocate_test.sh with CUDAL2_TEST_PREFIX = an installed tree moved after install.
TEST(Relocate, InstalledTreeCompilesTiny) {
  const char* prefix = std::getenv("CUDAL2_TEST_PREFIX");
  if (!prefix) GTEST_SKIP() << "CUDAL2_TEST_PREFIX not set (tests/relocate_test.sh sets it)";
  ScopedEnv d("CUDAL2_DATA_DIR", nullptr), k("CUDAL2_KERNELS_DIR", nullptr), c("CUTLASS_DIR", nullptr);
  const fs::path data = paths::find_data_dir(fs::path(prefix) / "bin");
  ASSERT_EQ(data, (fs::path(prefix) / "share" / "cudal2").lexically_normal());
  TempDir t;
  CompileOptions opt;
  opt.cache_dir = t.path().string();
  opt.kernels_dir = (data / "kernels").string();
  if (fs::exists(data / "cutlass" / "include" / "cutlass" / "cutlass.h")) opt.cutlass_dir = (data / "cutlass").string();
  Compiler jit(opt);
  for (const auto& dir : jit.options().include_dirs) EXPECT_EQ(dir.rfind(data.string(), 0), 0u) << dir;
  const auto r = jit.compile(generate_source(default_spec("tiny")));
  ASSERT_TRUE(r.ok()) << r.status << "\n" << r.log;
  EXPECT_TRUE(fs::is_regular_file(r.artifact));
}
