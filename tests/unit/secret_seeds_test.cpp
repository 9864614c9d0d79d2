// Seeds the runner sees but cannot predict (judge/secret_seeds.hpp).
#include "judge/secret_seeds.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace cudal2 {
namespace {

// What an adversary does with 312 seeds of std::mt19937_64 (tests/gpu/adversarial/predict_seed.cu):
// untemper them into the generator's state words and run its recurrence one step.
uint64_t unshift_right(uint64_t y, int s, uint64_t mask) {
  uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ ((x >> s) & mask);
  return x;
}
uint64_t unshift_left(uint64_t y, int s, uint64_t mask) {
  uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ ((x << s) & mask);
  return x;
}
uint64_t untemper(uint64_t y) {
  y = unshift_right(y, 43, ~0ull);
  y = unshift_left(y, 37, 0xFFF7EEE000000000ull);
  y = unshift_left(y, 17, 0x71D67FFFEDA60000ull);
  return unshift_right(y, 29, 0x5555555555555555ull);
}
uint64_t temper(uint64_t y) {
  y ^= (y >> 29) & 0x5555555555555555ull;
  y ^= (y << 17) & 0x71D67FFFEDA60000ull;
  y ^= (y << 37) & 0xFFF7EEE000000000ull;
  return y ^ (y >> 43);
}
uint64_t twister_next(const uint64_t* last312) {
  const uint64_t x0 = untemper(last312[0]), x1 = untemper(last312[1]), xm = untemper(last312[156]);
  const uint64_t y = (x0 & 0xFFFFFFFF80000000ull) | (x1 & 0x7FFFFFFFull);
  return temper(xm ^ (y >> 1) ^ ((y & 1) ? 0xB5026F5AA96619E9ull : 0));
}

TEST(SecretSeeds, TheTwistersStateFrom312SeedsPredictsItButNotThese) {
  std::mt19937_64 bench(2024);  // what the seeds came from before: every next one predicted
  std::vector<uint64_t> mt, ours;
  for (int i = 0; i < 400; ++i) mt.push_back(bench()), ours.push_back(secret_seed());
  int mt_hits = 0, our_hits = 0;
  for (size_t i = 312; i < mt.size(); ++i) {
    mt_hits += twister_next(&mt[i - 312]) == mt[i];
    our_hits += twister_next(&ours[i - 312]) == ours[i];
  }
  EXPECT_EQ(mt_hits, 88);  // the attack works on the generator it was written for
  EXPECT_EQ(our_hits, 0);
}

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
