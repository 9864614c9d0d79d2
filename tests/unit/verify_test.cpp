// fp16 conversion, reference, and every host-side verification check.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "eval/half.hpp"
#include "eval/verify.hpp"
#include "core/roofline.hpp"
#include <algorithm>
#include <set>

namespace cudal2 {
namespace {

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // rounds up to Inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);  // below half the smallest subnormal
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  // round half to even at 1 + 2^-11 (exactly between 1 and 1 + 2^-10): stays 1
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 is between 1+2^-10 (odd mantissa) and 1+2^-9: rounds to even, 1+2^-9
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isinf(half_to_float(0xFC00)));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))) || (float_to_half(NAN) & 0x7C00) == 0x7C00);
  EXPECT_FALSE(half_is_finite(0x7C00));
  EXPECT_FALSE(half_is_finite(kPoison));
  EXPECT_TRUE(half_is_finite(0x7BFF));
}

TEST(Half, EveryFiniteAndInfinitePatternRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = half_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_EQ(bits & 0x7C00, 0x7C00);
      continue;
    }
    ASSERT_EQ(float_to_half(f), bits) << std::hex << h;
  }
}

std::vector<uint16_t> random_half(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = float_to_half(d(rng));
  return v;
}

double naive(const Shape& s, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, int64_t i, int64_t j) {
  double acc = 0;
  for (int64_t k = 0; k < s.k; ++k) acc += double(half_to_float(A[i * s.k + k])) * half_to_float(B[k * s.n + j]);
  return acc;
}

TEST(Sampling, FullWithinBudgetSampledBeyond) {
  const Shape s{100, 60, 30};
  const auto full = plan_sampling(s, 1e9);
  EXPECT_TRUE(full.full);
  EXPECT_EQ(full.elements(s), 6000);
  const Shape big{4096, 2048, 1024};
  const auto sp = plan_sampling(big, 1e8);
  EXPECT_FALSE(sp.full);
  ASSERT_GE(sp.rows.size(), 2u);
  EXPECT_EQ(sp.rows.front(), 0);
  EXPECT_EQ(sp.rows.back(), big.m - 1);
  EXPECT_EQ(sp.cols.front(), 0);
  EXPECT_EQ(sp.cols.back(), big.n - 1);
  EXPECT_TRUE(std::is_sorted(sp.rows.begin(), sp.rows.end()));
  EXPECT_EQ(std::adjacent_find(sp.rows.begin(), sp.rows.end()), sp.rows.end());
  const double macs = (double(sp.rows.size()) * big.n + double(sp.cols.size()) * big.m) * big.k;
  EXPECT_LE(macs, 1e8);
  EXPECT_GT(macs, 0.5e8);
  EXPECT_EQ(sp.elements(big), int64_t(sp.rows.size()) * big.n + int64_t(sp.cols.size()) * big.m -
                                  int64_t(sp.rows.size() * sp.cols.size()));
  // over budget even at two rows and columns: still checks first and last
  const auto tiny = plan_sampling(big, 1);
  EXPECT_EQ(tiny.rows.size(), 2u);
}

TEST(Reference, MatchesNaiveFullAndSampledAndIsThreadIndependent) {
  std::mt19937 rng(7);
  const Shape s{37, 29, 53};
  const auto A = random_half(s.m * s.k, rng), B = random_half(s.k * s.n, rng);
  const auto full = compute_reference(s, A, B, plan_sampling(s, 1e12), 1);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) ASSERT_NEAR(full.row_vals[i * s.n + j], naive(s, A, B, i, j), 1e-9);
  const auto sp = plan_sampling(s, 5000);
  ASSERT_FALSE(sp.full);
  const auto r1 = compute_reference(s, A, B, sp, 1), r4 = compute_reference(s, A, B, sp, 4);
  EXPECT_EQ(r1.row_vals, r4.row_vals);
  EXPECT_EQ(r1.col_vals, r4.col_vals);
  for (size_t c = 0; c < sp.cols.size(); ++c)
    for (int64_t i = 0; i < s.m; ++i) ASSERT_NEAR(r1.col_vals[c * s.m + i], naive(s, A, B, i, sp.cols[c]), 1e-9);
  EXPECT_THROW(compute_reference({2, 2, 2}, A, B, sp), std::invalid_argument);
}

// C as the exact reference rounded to fp16: what a perfect kernel with fp16 output produces.
std::vector<uint16_t> rounded(const Shape& s, const Reference& ref) {
  std::vector<uint16_t> C(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) C[i * s.n + j] = float_to_half(static_cast<float>(ref.row_vals[i * s.n + j]));
  return C;
}

TEST(ExactCheck, MasksLargeValuesAndReportsFirstMismatch) {
  const Shape s{3, 4, 3000};
  std::vector<uint16_t> A(s.m * s.k, 0x3C00), B(s.k * s.n, 0);  // A all ones
  for (int64_t k = 0; k < s.k; ++k) B[k * s.n + 0] = 0x3C00;    // column 0: sum 3000 (> 2047)
  for (int64_t k = 0; k < 5; ++k) B[k * s.n + 1] = 0x3C00;      // column 1: 5
  const auto ref = compute_reference(s, A, B, plan_sampling(s, 1e12));
  auto C = rounded(s, ref);
  auto ok = compare_exact(s, C.data(), ref);
  EXPECT_EQ(ok.masked, 3);  // column 0 of each row
  EXPECT_EQ(ok.checked, 9);
  EXPECT_EQ(ok.mismatches, 0);
  C[1 * s.n + 1] = float_to_half(6.0f);
  C[2 * s.n + 3] = float_to_half(1.0f);
  C[0 * s.n + 0] = float_to_half(1.0f);  // masked: not counted
  const auto bad = compare_exact(s, C.data(), ref);
  EXPECT_EQ(bad.mismatches, 2);
  EXPECT_EQ(bad.first_i, 1);
  EXPECT_EQ(bad.first_j, 1);
  EXPECT_EQ(bad.first_got, 6.0);
  EXPECT_EQ(bad.first_want, 5.0);
}

TEST(OutputScan, PoisonIsUnwrittenOtherNaNsAreComputed) {
  std::vector<uint16_t> C{0x3C00, kPoison, 0x7E00, 0x7C00, 0xFC00, kPoison, 0x7FFF, 0x0000};
  const auto r = scan_output(C.data(), C.size());
  EXPECT_EQ(r.unwritten, 2);
  EXPECT_EQ(r.first_unwritten, 1);
  EXPECT_EQ(r.nonfinite, 4);
  EXPECT_EQ(r.first_nonfinite, 2);
  const std::vector<uint16_t> clean{0x3C00, 0xBC00};
  EXPECT_EQ(scan_output(clean.data(), 2).unwritten + scan_output(clean.data(), 2).nonfinite, 0);
}

TEST(Guards, CountsChangedBytes) {
  std::vector<uint8_t> g(4096, kGuardByte);
  EXPECT_EQ(count_guard_damage(g.data(), g.size()), 0);
  g[0] = 0;
  g[4095] = 0xA4;
  g[100] = 0xFF;
  EXPECT_EQ(count_guard_damage(g.data(), g.size()), 3);
}

TEST(NormalCheck, RoundedExactResultPassesSystematicErrorFails) {
  std::mt19937 rng(11);
  const Shape s{64, 48, 512};
  const auto A = random_half(s.m * s.k, rng), B = random_half(s.k * s.n, rng);
  const auto ref = compute_reference(s, A, B, plan_sampling(s, 1e12));
  auto C = rounded(s, ref);
  const double err = relative_frobenius(s, C.data(), ref);
  EXPECT_GT(err, 1e-4);                  // fp16 output rounding is visible...
  EXPECT_LT(err, std::ldexp(1.0, -11));  // ...and bounded by the unit roundoff
  EXPECT_LT(err, normal_tolerance(Accum::F32, s.k));
  for (int64_t i = 0; i < s.m * s.n; ++i) C[i] = float_to_half(static_cast<float>(ref.row_vals[i] * (1 + 2e-3)));
  EXPECT_GT(relative_frobenius(s, C.data(), ref), normal_tolerance(Accum::F32, s.k));
  auto same = rounded(s, ref);
  same[5] = float_to_half(static_cast<float>(ref.row_vals[5] + 1.0));
  const double one = relative_frobenius(s, same.data(), ref);
  double den = 0;
  for (double v : ref.row_vals) den += v * v;
  EXPECT_NEAR(one,
              std::sqrt(std::pow(half_to_float(same[5]) - ref.row_vals[5], 2) +
                        [&] {
                          double n = 0;
                          for (int64_t i = 0; i < s.m * s.n; ++i)
                            if (i != 5) n += std::pow(half_to_float(same[i]) - ref.row_vals[i], 2);
                          return n;
                        }()) /
                  std::sqrt(den),
              1e-12);
}

TEST(NormalCheck, ToleranceSeparatesAccumulators) {
  EXPECT_GE(normal_tolerance(Accum::F32, 64), std::ldexp(1.0, -11));
  EXPECT_EQ(normal_tolerance(Accum::F32, 64), normal_tolerance(Accum::F32, 16384));
  EXPECT_GT(normal_tolerance(Accum::F16, 4096), normal_tolerance(Accum::F32, 4096));
  EXPECT_GT(normal_tolerance(Accum::F16, 16384), normal_tolerance(Accum::F16, 1024));
}

TEST(VerdictTest, KeepsFirstFailureAndAppendsDetail) {
  Verdict v;
  EXPECT_TRUE(v.ok);
  v.fail("unwritten output", "12 never written");
  v.fail("NaN/Inf", "3 NaN");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, "unwritten output");
  EXPECT_EQ(v.detail, "12 never written; 3 NaN");
}

}  // namespace
}  // namespace cudal2

namespace cudal2 {
namespace {
TEST(Sampling, FullWhenSamplingWouldCostMore) {
  // 1000x2x1000: two rows and two columns cost 2(M+N)K = 2.004e6 > MNK = 2e6
  EXPECT_TRUE(plan_sampling({1000, 2, 1000}, 1e5).full);
  EXPECT_FALSE(plan_sampling({1000, 1000, 1000}, 1e5).full);
}
TEST(NormalCheck, Fp16ToleranceNeverBelowFp32) {
  for (int64_t k : {1, 2, 16, 64}) EXPECT_GE(normal_tolerance(Accum::F16, k), normal_tolerance(Accum::F32, k)) << k;
}
}  // namespace
}  // namespace cudal2

// The judge's per-job secrets, tolerances and physical floor (issue 8).
namespace cudal2 {
namespace {
TEST(JobSecrets, PoisonIsARareNanAndGuardBytesMakeNans) {
  std::set<uint16_t> poisons;
  for (int i = 0; i < 200; ++i) {
    const auto j = JobSecrets::draw();
    EXPECT_FALSE(half_is_finite(j.poison)) << std::hex << j.poison;
    EXPECT_NE(j.poison & 0x7FFF, 0x7C00);  // not an infinity
    EXPECT_NE(j.poison & 0x7FFF, 0x7E00);  // not a NaN the hardware makes
    EXPECT_NE(j.poison & 0x7FFF, 0x7FFF);
    EXPECT_TRUE(is_nan_guard_byte(j.guard_byte));
    const uint16_t pair = static_cast<uint16_t>(j.guard_byte << 8 | j.guard_byte);
    EXPECT_FALSE(half_is_finite(pair)) << "guard byte " << int(j.guard_byte) << " must read as NaN";
    EXPECT_NE(j.checksum_key, 0u);
    poisons.insert(j.poison);
  }
  EXPECT_GT(poisons.size(), 50u) << "the poison must differ from job to job";
  EXPECT_FALSE(is_nan_guard_byte(kGuardByte)) << "the old documented constant must not be the only choice";
}

TEST(Sampling, SecretSeedDrawsOtherRowsButKeepsTheEdges) {
  const Shape s{4096, 4096, 4096};
  const auto a = plan_sampling(s, 1e9, 11), b = plan_sampling(s, 1e9, 12), plain = plan_sampling(s, 1e9);
  ASSERT_FALSE(a.full);
  EXPECT_EQ(a.rows.size(), plain.rows.size());
  EXPECT_NE(a.rows, b.rows);
  EXPECT_NE(a.rows, plain.rows);
  for (const auto* sp : {&a, &b}) {
    EXPECT_EQ(sp->rows.front(), 0);
    EXPECT_EQ(sp->rows.back(), s.m - 1);
    EXPECT_EQ(sp->cols.front(), 0);
    EXPECT_EQ(sp->cols.back(), s.n - 1);
    EXPECT_TRUE(std::is_sorted(sp->rows.begin(), sp->rows.end()));
    EXPECT_EQ(std::adjacent_find(sp->rows.begin(), sp->rows.end()), sp->rows.end());
  }
}

TEST(ElementTolerance, Fp32AllowsTwoRoundingsAndCatchesOneBadElement) {
  const auto& d = verification_distributions().front();  // N(0,1)
  const auto t = element_tolerance(Accum::F32, 4096, d.scale(4096));
  EXPECT_NEAR(d.scale(4096), 64.0, 1e-9);
  // Two fp16 roundings of a value near 64 differ by at most one ulp (2^-4 there).
  EXPECT_GE(t.rel * 64 + t.abs, 0.0625);
  // An error of 1.0 on an element of magnitude ~64 is far outside.
  EXPECT_LT(t.rel * 64 + t.abs, 1.0);
  const auto f16 = element_tolerance(Accum::F16, 4096, d.scale(4096));
  EXPECT_GT(f16.abs, t.abs);
  EXPECT_GT(f16.rel, t.rel);
}

TEST(Distributions, Fp16RangeKeepsOutputsFinite) {
  for (const auto& d : verification_distributions())
    for (int64_t k : {64, 1024, 16384}) {
      const double typical = d.scale(k) + std::abs(d.a_mean * d.b_mean) * k;
      EXPECT_LT(5 * typical, 65504.0) << d.name << " K=" << k;
      EXPECT_GT(d.scale(k), 0.0) << d.name;
    }
}

TEST(PlausibleFloor, H100NumbersAndL2) {
  const auto p = hopper_peak(132, 1980, 2619, 5120, 50e6);
  EXPECT_NEAR(p.flops_per_s / 1e12, 1070.5, 1.0);  // SMs x boost clock x 4096
  EXPECT_NEAR(p.bytes_per_s / 1e12, 3.35, 0.01);
  const Shape big{8192, 8192, 8192};
  EXPECT_NEAR(plausible_floor_us(big, true, p), flops(big) / (p.flops_per_s * 1.05) * 1e6, 1e-6);
  // cuBLASLt's measured 1429 us at 8192^3 is well above the floor; 500 us would not be.
  EXPECT_LT(plausible_floor_us(big, true, p), 1429.0);
  EXPECT_GT(plausible_floor_us(big, true, p), 500.0);
  // A memory-bound shape: warm L2 may serve the first 50 MB; a cold one must read everything.
  const Shape skinny{16384, 64, 16384};
  EXPECT_LT(plausible_floor_us(skinny, true, p), plausible_floor_us(skinny, false, p));
  EXPECT_NEAR(plausible_floor_us(skinny, false, p), min_bytes(skinny) / (p.bytes_per_s * 1.05) * 1e6, 1e-6);
}
}  // namespace
}  // namespace cudal2
