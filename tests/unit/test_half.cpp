// eval/half: host fp16 <-> float conversion, bit-exact round-to-nearest-even.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "measure/half.hpp"

namespace cudal2 {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Independent decoder from the IEEE binary16 definition, in double.
double decode(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1F;
  const int man = h & 0x3FF;
  double v;
  if (exp == 0x1F)
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(man), -24);
  else
    v = std::ldexp(1.0 + man / 1024.0, exp - 15);
  return sign ? -v : v;
}

bool is_nan_pattern(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

// Reference rounding of a finite float to binary16 by search over all non-negative finite
// halves (0x0000..0x7BFF increase with their bit pattern): nearest, ties to the even pattern,
// and |x| >= 65520 (the midpoint between 65504 and 2^16) to Inf.
uint16_t reference_round(float f) {
  static const std::vector<double> pos = [] {
    std::vector<double> v;
    for (uint32_t h = 0; h <= 0x7BFF; ++h) v.push_back(decode(static_cast<uint16_t>(h)));
    return v;
  }();
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7C00;
  const auto it = std::lower_bound(pos.begin(), pos.end(), a);  // first >= a
  if (it == pos.begin()) return sign;                           // a == 0
  const auto hi = static_cast<uint16_t>(it - pos.begin());
  if (it != pos.end() && *it == a) return sign | hi;
  const auto lo = static_cast<uint16_t>(hi - 1);
  const double dlo = a - pos[lo], dhi = (it == pos.end() ? 1e300 : pos[hi] - a);
  if (dlo < dhi) return sign | lo;
  if (dhi < dlo) return sign | hi;
  return sign | ((lo & 1) ? hi : lo);
}

TEST(HalfConvert, DecodeMatchesDefinitionForEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const float f = half_to_float(b);
    const double want = decode(b);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;  // includes -0
    }
  }
}

TEST(HalfConvert, RoundTripsEveryNonNaNPattern) {
  int checked = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    if (is_nan_pattern(b)) continue;
    ASSERT_EQ(float_to_half(half_to_float(b)), b) << std::hex << h;
    ++checked;
  }
  EXPECT_EQ(checked, 65536 - 2 * 1023);  // all but the NaN patterns
}

TEST(HalfConvert, NaNStaysNaN) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    if (!is_nan_pattern(b)) continue;
    const float f = half_to_float(b);
    ASSERT_TRUE(std::isnan(f)) << std::hex << h;
    ASSERT_TRUE(is_nan_pattern(float_to_half(f))) << std::hex << h;
  }
  EXPECT_TRUE(is_nan_pattern(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_nan_pattern(float_to_half(-std::numeric_limits<float>::quiet_NaN())));
  // float NaNs whose payload lives only in the low mantissa bits (lost by truncation) stay NaN.
  EXPECT_TRUE(is_nan_pattern(float_to_half(bits_to_float(0x7F800001u))));
  EXPECT_TRUE(is_nan_pattern(float_to_half(bits_to_float(0xFF800001u))));
  EXPECT_TRUE(is_nan_pattern(float_to_half(bits_to_float(0x7FC00000u))));
}

TEST(HalfConvert, KnownValues) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-1.0f), 0xBC00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                  // largest finite
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);  // 1/3 rounded: 0x155/1024 * 2^-2 + 2^-2
  EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(half_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
}

TEST(HalfConvert, OverflowToInfinity) {
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // the midpoint to 2^16 rounds (to even) up
  EXPECT_EQ(float_to_half(-65520.0f), 0xFC00);
  EXPECT_EQ(float_to_half(std::nextafter(65520.0f, 0.0f)), 0x7BFF);  // just below: 65504
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65536.0f), 0x7C00);
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(FLT_MAX), 0x7C00);
  EXPECT_EQ(float_to_half(-FLT_MAX), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(HalfConvert, RoundHalfToEvenNormals) {
  const float u = std::ldexp(1.0f, -11);  // half an ulp of 1.0 in fp16
  // 1 + 2^-11: halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01): stays 1.
  EXPECT_EQ(float_to_half(1.0f + u), 0x3C00);
  // 1 + 3*2^-11: halfway between 1 + 2^-10 (0x3C01, odd) and 1 + 2^-9 (0x3C02): goes up.
  EXPECT_EQ(float_to_half(1.0f + 3 * u), 0x3C02);
  // Just past the midpoint rounds up; just before rounds down.
  EXPECT_EQ(float_to_half(std::nextafter(1.0f + u, 2.0f)), 0x3C01);
  EXPECT_EQ(float_to_half(std::nextafter(1.0f + u, 0.0f)), 0x3C00);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -12)), 0x3C00);
  // Integers in [2048, 4096) are spaced by 2.
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);  // 2048 (even)
  EXPECT_EQ(float_to_half(2051.0f), 0x6802);  // 2052 (even), not 2050
  EXPECT_EQ(half_to_float(0x6802), 2052.0f);
  // A tie whose rounding carries into the exponent: 2047.5 -> 2048.
  EXPECT_EQ(float_to_half(2047.5f), 0x6800);
  EXPECT_EQ(float_to_half(-2047.5f), 0xE800);
}

TEST(HalfConvert, RoundHalfToEvenSubnormals) {
  const float t = std::ldexp(1.0f, -25);  // half the smallest subnormal
  EXPECT_EQ(float_to_half(t), 0x0000);    // tie: 0 is even
  EXPECT_EQ(float_to_half(-t), 0x8000);
  EXPECT_EQ(float_to_half(std::nextafter(t, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(float_to_half(3 * t), 0x0002);  // 1.5 subnormal ulps: tie between 1 and 2 -> 2
  EXPECT_EQ(float_to_half(5 * t), 0x0002);  // 2.5 -> 2
  EXPECT_EQ(float_to_half(7 * t), 0x0004);  // 3.5 -> 4
  // Largest subnormal + half an ulp: tie between 0x03FF (odd) and 0x0400, the smallest normal.
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half(FLT_MIN), 0x0000);
}

TEST(HalfConvert, MatchesReferenceRoundingOnRandomFloats) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<uint32_t> mant(0, 0x7FFFFF);
  std::uniform_int_distribution<int> exp(127 - 28, 127 + 17);  // 2^-28 .. 2^17: zero, subnormal, normal, Inf
  std::uniform_int_distribution<int> sign(0, 1);
  for (int i = 0; i < 400000; ++i) {
    const uint32_t bits =
        (static_cast<uint32_t>(sign(rng)) << 31) | (static_cast<uint32_t>(exp(rng)) << 23) | mant(rng);
    const float f = bits_to_float(bits);
    ASSERT_EQ(float_to_half(f), reference_round(f)) << std::hex << "float bits 0x" << bits << " value " << f;
  }
}

TEST(HalfConvert, MatchesReferenceRoundingAtEveryMidpoint) {
  // The midpoint between each pair of adjacent finite halves, and its float neighbours.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const double mid = (decode(static_cast<uint16_t>(h)) + decode(static_cast<uint16_t>(h + 1))) / 2;
    const auto m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid);  // midpoints are floats
    for (float f : {m, std::nextafter(m, 0.0f), std::nextafter(m, 1e6f), -m})
      ASSERT_EQ(float_to_half(f), reference_round(f)) << std::hex << "h=0x" << h << " f=" << f;
  }
}

TEST(HalfConvert, IsFinite) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    ASSERT_EQ(half_is_finite(b), std::isfinite(decode(b))) << std::hex << h;
  }
  EXPECT_TRUE(half_is_finite(0x7BFF));
  EXPECT_TRUE(half_is_finite(0x8000));
  EXPECT_FALSE(half_is_finite(0x7C00));
  EXPECT_FALSE(half_is_finite(0xFC00));
  EXPECT_FALSE(half_is_finite(0x7E00));
}

}  // namespace
}  // namespace cudal2
