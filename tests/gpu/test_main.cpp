// GPU tests. Without a usable GPU the whole executable is skipped (exit 77, which ctest's
// SKIP_RETURN_CODE reports as "Skipped"), saying why.
#include <gtest/gtest.h>

#include <cstdio>

#include "measure/device.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!cudal2::gpu_available(&why)) {
    std::printf("SKIPPED: GPU tests need a CUDA GPU: %s\n", why.c_str());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
