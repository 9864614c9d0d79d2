// Seeds the runner sees but cannot predict (judge/secret_seeds.hpp).
#include "judge/secret_seeds.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace cudal2 {
namespace {

TEST(SecretSeeds, DrawsAreDistinctAndEveryBitVaries) {
  constexpr int kDraws = 4096;
  std::set<uint64_t> seen;
  std::array<int, 64> ones{};
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t s = secret_seed();
    seen.insert(s);
    for (int b = 0; b < 64; ++b) ones[b] += static_cast<int>((s >> b) & 1);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kDraws));
  for (int b = 0; b < 64; ++b) {
    EXPECT_GT(ones[b], kDraws * 2 / 5) << "bit " << b;
    EXPECT_LT(ones[b], kDraws * 3 / 5) << "bit " << b;
  }
}

TEST(SecretSeeds, ASeedIsNotTheNextOutputOfAGeneratorSeededByTheOneBefore) {
  // What a bench's std::mt19937_64 gave away: seeded once, every later draw follows. Here no draw
  // is what a generator seeded with the previous draw would give next.
  uint64_t prev = secret_seed();
  for (int i = 0; i < 256; ++i) {
    const uint64_t next = secret_seed();
    std::mt19937_64 guess(prev);
    EXPECT_NE(next, guess());
    prev = next;
  }
}

}  // namespace
}  // namespace cudal2
