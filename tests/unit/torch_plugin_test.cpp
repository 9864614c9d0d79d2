// The torch.matmul plugin is built whenever a Python the build looks at (CUDAL2_PYTHON, the
// project's .venv, python3) has PyTorch, and it loads on its own: its PyTorch libraries are found
// through its run path, not through the environment of the process that loads it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "../../plugins/torch/cudal2_torch_abi.h"

namespace {

TEST(TorchPlugin, BuiltWherePyTorchIsAndLoads) {
#ifndef CUDAL2_TORCH_SO
  GTEST_SKIP() << "no Python with PyTorch at configure time: the plugin is not built";
#else
  void* lib = dlopen(CUDAL2_TORCH_SO, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto abi = reinterpret_cast<decltype(&cudal2_torch_abi_version)>(dlsym(lib, "cudal2_torch_abi_version"));
  auto version = reinterpret_cast<decltype(&cudal2_torch_version)>(dlsym(lib, "cudal2_torch_version"));
  ASSERT_TRUE(abi && version);
  EXPECT_EQ(abi(), CUDAL2_TORCH_ABI_VERSION);
  EXPECT_FALSE(std::string(version()).empty());
  std::printf("torch-matmul plugin %s: PyTorch %s\n", CUDAL2_TORCH_SO, version());
#endif
}

}  // namespace
