// eval/verify: sampling plans, the fp64 reference, and every host-side output check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/roofline.hpp"
#include "measure/half.hpp"
#include "measure/verify.hpp"

namespace cudal2 {
namespace {

constexpr double kFullBudget = 1e18;  // large enough that every test shape is checked fully

std::vector<uint16_t> random_half(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = float_to_half(d(rng));
  return v;
}

std::vector<uint16_t> random_binary(size_t n, std::mt19937& rng) {
  std::bernoulli_distribution d(0.5);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = d(rng) ? 0x3C00 : 0x0000;
  return v;
}

std::vector<uint16_t> halves(const std::vector<float>& v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(float_to_half(f));
  return out;
}

// Straightforward C = A*B in double, A row-major MxK, B row-major KxN.
std::vector<double> naive(const Shape& s, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B) {
  std::vector<double> C(static_cast<size_t>(s.m * s.n), 0.0);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k)
        acc += static_cast<double>(half_to_float(A[i * s.k + k])) * static_cast<double>(half_to_float(B[k * s.n + j]));
      C[i * s.n + j] = acc;
    }
  return C;
}

// Which elements of C a sampling plan covers, by brute force.
std::vector<char> covered(const Shape& s, const Sampling& sp) {
  std::vector<char> c(static_cast<size_t>(s.m * s.n), 0);
  if (sp.full) {
    std::fill(c.begin(), c.end(), 1);
    return c;
  }
  for (auto i : sp.rows)
    for (int64_t j = 0; j < s.n; ++j) c[i * s.n + j] = 1;
  for (auto j : sp.cols)
    for (int64_t i = 0; i < s.m; ++i) c[i * s.n + j] = 1;
  return c;
}

// Values (fp64, relative error <= 1e-12) of ref at every sampled position must equal `want`.
void expect_reference_matches(const Shape& s, const Reference& ref, const std::vector<double>& want, bool exact) {
  const auto& sp = ref.sampling;
  ASSERT_EQ(ref.row_vals.size(), sp.rows.size() * static_cast<size_t>(s.n));
  ASSERT_EQ(ref.col_vals.size(), sp.cols.size() * static_cast<size_t>(s.m));
  auto check = [&](double got, double w, int64_t i, int64_t j) {
    if (exact)
      EXPECT_EQ(got, w) << "(" << i << "," << j << ")";
    else
      EXPECT_NEAR(got, w, 1e-12 * std::max(1.0, std::fabs(w))) << "(" << i << "," << j << ")";
  };
  for (size_t r = 0; r < sp.rows.size(); ++r)
    for (int64_t j = 0; j < s.n; ++j) check(ref.row_vals[r * s.n + j], want[sp.rows[r] * s.n + j], sp.rows[r], j);
  for (size_t c = 0; c < sp.cols.size(); ++c)
    for (int64_t i = 0; i < s.m; ++i) check(ref.col_vals[c * s.m + i], want[i * s.n + sp.cols[c]], i, sp.cols[c]);
}

// C rounded to fp16 from the exact product (what a perfect fp32-accumulating GEMM returns).
std::vector<uint16_t> rounded(const std::vector<double>& exact, double rel = 0.0) {
  std::vector<uint16_t> C;
  for (double v : exact) C.push_back(float_to_half(static_cast<float>(v * (1.0 + rel))));
  return C;
}

// ---------------------------------------------------------------- plan_sampling

TEST(VerifySampling, FullWhenWithinBudget) {
  const Shape s{4, 5, 6};  // 120 multiply-adds
  const auto sp = plan_sampling(s, 120);
  EXPECT_TRUE(sp.full);
  EXPECT_EQ(sp.elements(s), 20);
  EXPECT_TRUE(plan_sampling(s, 1e9).full);
  EXPECT_FALSE(plan_sampling(s, 119).full);
}

TEST(VerifySampling, SampledRowsAndColsIncludeEdgesSortedUniqueInRange) {
  for (const Shape& s : {Shape{1000, 700, 300}, Shape{4096, 4096, 4096}, Shape{64, 16384, 16384},
                         Shape{16384, 64, 1024}, Shape{3, 1000, 1000}, Shape{1000, 2, 1000}}) {
    for (double budget : {1.0, 1e5, 1e7, 1e9}) {
      const double macs = static_cast<double>(s.m) * s.n * s.k;
      if (macs <= budget || 2.0 * static_cast<double>(s.m + s.n) * s.k >= macs) continue;  // full is cheaper
      const auto sp = plan_sampling(s, budget);
      SCOPED_TRACE(s.str() + " budget " + std::to_string(budget));
      ASSERT_FALSE(sp.full);
      ASSERT_FALSE(sp.rows.empty());
      ASSERT_FALSE(sp.cols.empty());
      EXPECT_EQ(sp.rows.front(), 0);
      EXPECT_EQ(sp.rows.back(), s.m - 1);
      EXPECT_EQ(sp.cols.front(), 0);
      EXPECT_EQ(sp.cols.back(), s.n - 1);
      EXPECT_TRUE(std::is_sorted(sp.rows.begin(), sp.rows.end()));
      EXPECT_TRUE(std::is_sorted(sp.cols.begin(), sp.cols.end()));
      EXPECT_EQ(std::set<int64_t>(sp.rows.begin(), sp.rows.end()).size(), sp.rows.size());
      EXPECT_EQ(std::set<int64_t>(sp.cols.begin(), sp.cols.end()).size(), sp.cols.size());
      for (auto r : sp.rows) EXPECT_TRUE(r >= 0 && r < s.m);
      for (auto c : sp.cols) EXPECT_TRUE(c >= 0 && c < s.n);
      // Cost of the reference: r rows cost r*N*K, c columns c*M*K. Within budget unless the
      // budget is below the minimum of first+last row and column.
      const double cost =
          static_cast<double>(sp.rows.size()) * s.n * s.k + static_cast<double>(sp.cols.size()) * s.m * s.k;
      const double minimum = 2.0 * (s.m + s.n) * s.k;
      EXPECT_LE(cost, std::max(budget, minimum));
      // ...and it uses a fair part of a budget that allows more than the minimum.
      if (budget >= 4 * minimum) {
        EXPECT_GE(cost, budget / 4);
      }
    }
  }
}

TEST(VerifySampling, TinyBudgetKeepsFirstAndLast) {
  const Shape s{500, 300, 100};
  const auto sp = plan_sampling(s, 1);
  ASSERT_FALSE(sp.full);
  EXPECT_EQ(sp.rows, (std::vector<int64_t>{0, 499}));
  EXPECT_EQ(sp.cols, (std::vector<int64_t>{0, 299}));
}

TEST(VerifySampling, SampledRowsAreSpreadNotClustered) {
  const Shape s{10000, 10000, 1000};
  const auto sp = plan_sampling(s, 1e9);  // 50 rows and 50 columns
  ASSERT_GE(sp.rows.size(), 10u);
  int64_t max_gap = 0;
  for (size_t i = 1; i < sp.rows.size(); ++i) max_gap = std::max(max_gap, sp.rows[i] - sp.rows[i - 1]);
  // evenly spread: no gap much larger than the average
  EXPECT_LE(max_gap, 2 * (s.m - 1) / static_cast<int64_t>(sp.rows.size() - 1) + 1);
}

TEST(VerifySampling, ElementsCountsDistinctCheckedPositions) {
  for (const Shape& s : {Shape{37, 23, 50}, Shape{1, 40, 40}, Shape{40, 1, 40}, Shape{200, 150, 64}, Shape{5, 5, 5}}) {
    for (double budget : {1.0, 3000.0, 20000.0, 1e12}) {
      const auto sp = plan_sampling(s, budget);
      const auto c = covered(s, sp);
      const auto n = std::count(c.begin(), c.end(), 1);
      EXPECT_EQ(sp.elements(s), n) << s.str() << " budget " << budget;
    }
  }
}

// ---------------------------------------------------------------- compute_reference

TEST(VerifyReference, FullMatchesNaiveOnRandomInputs) {
  std::mt19937 rng(42);
  for (const Shape& s : {Shape{1, 1, 1}, Shape{7, 5, 9}, Shape{13, 17, 33}, Shape{32, 3, 100}, Shape{2, 40, 1}}) {
    const auto A = random_half(static_cast<size_t>(s.m * s.k), rng);
    const auto B = random_half(static_cast<size_t>(s.k * s.n), rng);
    const auto sp = plan_sampling(s, kFullBudget);
    ASSERT_TRUE(sp.full);
    const auto ref = compute_reference(s, A, B, sp, 1);
    SCOPED_TRACE(s.str());
    expect_reference_matches(s, ref, naive(s, A, B), false);
    // Full plan: all rows are reference rows.
    EXPECT_EQ(ref.row_vals.size(), static_cast<size_t>(s.m * s.n));
  }
}

TEST(VerifyReference, SampledMatchesNaiveAtSampledPositions) {
  std::mt19937 rng(43);
  for (const Shape& s : {Shape{40, 30, 20}, Shape{97, 61, 33}, Shape{5, 50, 10}, Shape{50, 5, 10}}) {
    const auto A = random_half(static_cast<size_t>(s.m * s.k), rng);
    const auto B = random_half(static_cast<size_t>(s.k * s.n), rng);
    const double macs = static_cast<double>(s.m) * s.n * s.k;
    const auto sp = plan_sampling(s, std::min(4.0 * (s.m + s.n) * s.k, macs - 1));  // a few rows and columns
    ASSERT_FALSE(sp.full) << s.str();
    const auto ref = compute_reference(s, A, B, sp, 1);
    SCOPED_TRACE(s.str());
    expect_reference_matches(s, ref, naive(s, A, B), false);
  }
}

TEST(VerifyReference, BinaryInputsAreExact) {
  std::mt19937 rng(44);
  const Shape s{33, 45, 300};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  const auto want = naive(s, A, B);
  for (double budget : {kFullBudget, 5.0 * (s.m + s.n) * s.k}) {
    const auto ref = compute_reference(s, A, B, plan_sampling(s, budget), 2);
    expect_reference_matches(s, ref, want, true);
  }
  // integer counts between 0 and K
  for (double v : want) {
    EXPECT_EQ(v, std::floor(v));
    EXPECT_GE(v, 0);
    EXPECT_LE(v, s.k);
  }
}

TEST(VerifyReference, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(45);
  const Shape s{64, 48, 40};
  const auto A = random_half(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_half(static_cast<size_t>(s.k * s.n), rng);
  for (double budget : {kFullBudget, 8.0 * (s.m + s.n) * s.k}) {
    const auto sp = plan_sampling(s, budget);
    const auto r1 = compute_reference(s, A, B, sp, 1);
    const auto r4 = compute_reference(s, A, B, sp, 4);
    const auto r0 = compute_reference(s, A, B, sp, 0);  // hardware concurrency
    EXPECT_EQ(r1.row_vals, r4.row_vals);
    EXPECT_EQ(r1.col_vals, r4.col_vals);
    EXPECT_EQ(r1.row_vals, r0.row_vals);
    EXPECT_EQ(r1.col_vals, r0.col_vals);
  }
}

TEST(VerifyReference, RejectsWrongBufferSizes) {
  const Shape s{4, 5, 6};
  const std::vector<uint16_t> A(24), B(30);
  const auto sp = plan_sampling(s, kFullBudget);
  EXPECT_NO_THROW(compute_reference(s, A, B, sp, 1));
  EXPECT_THROW(compute_reference(s, std::vector<uint16_t>(23), B, sp, 1), std::invalid_argument);
  EXPECT_THROW(compute_reference(s, A, std::vector<uint16_t>(31), sp, 1), std::invalid_argument);
  EXPECT_THROW(compute_reference(s, B, A, sp, 1), std::invalid_argument);  // swapped
}

TEST(VerifyReference, RowMajorConvention) {
  // A = [[1,2],[3,4]] (M=2,K=2), B = [[5,6,7],[8,9,10]] (K=2,N=3):
  // C = [[21,24,27],[47,54,61]]
  const Shape s{2, 3, 2};
  const auto A = halves({1, 2, 3, 4});
  const auto B = halves({5, 6, 7, 8, 9, 10});
  const auto ref = compute_reference(s, A, B, plan_sampling(s, kFullBudget), 1);
  EXPECT_EQ(ref.row_vals, (std::vector<double>{21, 24, 27, 47, 54, 61}));
}

// ---------------------------------------------------------------- compare_exact

TEST(VerifyCompareExact, MasksLargeReferenceValues) {
  // K = 1: C[0][j] = B[j]. 2047 is compared, 2048 and -3000 are masked.
  const Shape s{1, 5, 1};
  const auto A = halves({1});
  const auto B = halves({2047, 2048, 5, -3000, -2047});
  const auto ref = compute_reference(s, A, B, plan_sampling(s, kFullBudget), 1);
  auto C = rounded(ref.row_vals);
  auto r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.checked, 3);
  EXPECT_EQ(r.masked, 2);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.first_i, -1);
  EXPECT_EQ(r.first_j, -1);
  // A wrong value at a masked position is not a mismatch...
  C[1] = float_to_half(1.0f);
  C[3] = float_to_half(0.0f);
  EXPECT_EQ(compare_exact(s, C.data(), ref).mismatches, 0);
  // ...at a compared one it is.
  C[4] = float_to_half(-2046.0f);
  r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_i, 0);
  EXPECT_EQ(r.first_j, 4);
  EXPECT_EQ(r.first_got, -2046.0);
  EXPECT_EQ(r.first_want, -2047.0);
}

TEST(VerifyCompareExact, CountsMismatchesAndReportsTheFirst) {
  std::mt19937 rng(46);
  const Shape s{6, 7, 50};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  const auto ref = compute_reference(s, A, B, plan_sampling(s, kFullBudget), 1);
  auto C = rounded(ref.row_vals);
  auto r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.checked, s.m * s.n);
  EXPECT_EQ(r.masked, 0);
  EXPECT_EQ(r.mismatches, 0);
  // Break (4,2), (2,5) and (5,0): the first in row-major order is (2,5).
  const double want25 = ref.row_vals[2 * s.n + 5];
  C[4 * s.n + 2] = float_to_half(static_cast<float>(ref.row_vals[4 * s.n + 2] + 1));
  C[2 * s.n + 5] = float_to_half(static_cast<float>(want25 + 3));
  C[5 * s.n + 0] = 0x7E00;  // a NaN is a mismatch too
  r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.checked, s.m * s.n);
  EXPECT_EQ(r.mismatches, 3);
  EXPECT_EQ(r.first_i, 2);
  EXPECT_EQ(r.first_j, 5);
  EXPECT_EQ(r.first_want, want25);
  EXPECT_EQ(r.first_got, want25 + 3);
}

TEST(VerifyCompareExact, SampledVisitsEachSampledElementOnce) {
  std::mt19937 rng(47);
  const Shape s{60, 50, 40};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  const auto sp = plan_sampling(s, 4.0 * (s.m + s.n) * s.k);
  ASSERT_FALSE(sp.full);
  const auto want = naive(s, A, B);
  const auto ref = compute_reference(s, A, B, sp, 1);
  auto C = rounded(want);
  auto r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.checked + r.masked, sp.elements(s));
  EXPECT_EQ(r.mismatches, 0);
  const auto cov = covered(s, sp);
  // An error outside the sample goes unseen.
  int64_t outside = -1;
  for (int64_t i = 0; i < s.m * s.n && outside < 0; ++i)
    if (!cov[i]) outside = i;
  ASSERT_GE(outside, 0);
  C[outside] = float_to_half(static_cast<float>(want[outside] + 1));
  EXPECT_EQ(compare_exact(s, C.data(), ref).mismatches, 0);
  // An error in a sampled column, outside the sampled rows, is caught and located.
  int64_t row = -1;
  for (int64_t i = 0; i < s.m && row < 0; ++i)
    if (!std::binary_search(sp.rows.begin(), sp.rows.end(), i)) row = i;
  ASSERT_GE(row, 0);
  const int64_t col = sp.cols[1];
  C[row * s.n + col] = float_to_half(static_cast<float>(want[row * s.n + col] + 2));
  r = compare_exact(s, C.data(), ref);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_i, row);
  EXPECT_EQ(r.first_j, col);
  // An error where a sampled row and a sampled column cross counts once.
  const int64_t i0 = sp.rows[0], j0 = sp.cols[0];
  C[i0 * s.n + j0] = float_to_half(static_cast<float>(want[i0 * s.n + j0] + 1));
  EXPECT_EQ(compare_exact(s, C.data(), ref).mismatches, 2);
}

// ---------------------------------------------------------------- scan_output / guards

TEST(VerifyScanOutput, DistinguishesPoisonFromComputedNonFinite) {
  const std::vector<uint16_t> C{0x3C00, 0x0000,  0x8000, 0x7BFF, kPoison, 0x7C00, 0xFC00,
                                0x7E00, kPoison, 0x7FFF, 0xFE00, 0x0001,  kPoison};
  const auto r = scan_output(C.data(), C.size());
  EXPECT_EQ(r.unwritten, 3);
  EXPECT_EQ(r.first_unwritten, 4);
  EXPECT_EQ(r.nonfinite, 5);  // 0x7C00, 0xFC00, 0x7E00, 0x7FFF, 0xFE00
  EXPECT_EQ(r.first_nonfinite, 5);
}

TEST(VerifyScanOutput, CleanAndEmptyOutputs) {
  std::vector<uint16_t> C(1000);
  for (size_t i = 0; i < C.size(); ++i) C[i] = float_to_half(static_cast<float>(i) - 500.0f);
  auto r = scan_output(C.data(), C.size());
  EXPECT_EQ(r.unwritten, 0);
  EXPECT_EQ(r.nonfinite, 0);
  EXPECT_EQ(r.first_unwritten, -1);
  EXPECT_EQ(r.first_nonfinite, -1);
  r = scan_output(C.data(), 0);
  EXPECT_EQ(r.unwritten + r.nonfinite, 0);
  // Only the first n elements are scanned.
  C[999] = kPoison;
  EXPECT_EQ(scan_output(C.data(), 999).unwritten, 0);
  EXPECT_EQ(scan_output(C.data(), 1000).unwritten, 1);
  EXPECT_EQ(scan_output(C.data(), 1000).first_unwritten, 999);
}

TEST(VerifyScanOutput, PoisonIsANaNNoArithmeticProduces) {
  EXPECT_TRUE(std::isnan(half_to_float(kPoison)));
  EXPECT_NE(kPoison, 0x7E00);
  EXPECT_NE(kPoison, 0x7FFF);
  // A NaN produced on the host (e.g. inf - inf) and converted is not the poison.
  const float nan = std::numeric_limits<float>::infinity() - std::numeric_limits<float>::infinity();
  EXPECT_NE(float_to_half(nan), kPoison);
  EXPECT_NE(float_to_half(-nan), kPoison);
  const uint16_t all_poison[4] = {kPoison, kPoison, kPoison, kPoison};
  const auto r = scan_output(all_poison, 4);
  EXPECT_EQ(r.unwritten, 4);
  EXPECT_EQ(r.nonfinite, 0);
}

TEST(VerifyGuard, CountsChangedBytes) {
  std::vector<uint8_t> g(4096, kGuardByte);
  EXPECT_EQ(count_guard_damage(g.data(), g.size()), 0);
  g[0] = 0;
  g[17] = kGuardByte ^ 1;
  g[4095] = 0xFF;
  EXPECT_EQ(count_guard_damage(g.data(), g.size()), 3);
  EXPECT_EQ(count_guard_damage(g.data(), 4095), 2);  // only the first n bytes
  EXPECT_EQ(count_guard_damage(g.data(), 0), 0);
  std::fill(g.begin(), g.end(), 0);
  EXPECT_EQ(count_guard_damage(g.data(), g.size()), 4096);
}

// ---------------------------------------------------------------- relative_frobenius

TEST(VerifyFrobenius, ZeroForExactOutput) {
  std::mt19937 rng(48);
  const Shape s{20, 30, 64};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  for (double budget : {kFullBudget, 4.0 * (s.m + s.n) * s.k}) {
    const auto sp = plan_sampling(s, budget);
    const auto ref = compute_reference(s, A, B, sp, 1);
    const auto C = rounded(naive(s, A, B));  // integers <= 64: exact in fp16
    EXPECT_EQ(relative_frobenius(s, C.data(), ref), 0.0);
  }
}

TEST(VerifyFrobenius, HandComputedValue) {
  // K = 1, A = [1]: ref = B = [3, 4], ||ref|| = 5.
  const Shape s{1, 2, 1};
  const auto A = halves({1});
  const auto B = halves({3, 4});
  const auto ref = compute_reference(s, A, B, plan_sampling(s, kFullBudget), 1);
  EXPECT_DOUBLE_EQ(relative_frobenius(s, halves({3, 5}).data(), ref), 0.2);  // ||(0,1)|| / 5
  EXPECT_DOUBLE_EQ(relative_frobenius(s, halves({0, 0}).data(), ref), 1.0);
  EXPECT_DOUBLE_EQ(relative_frobenius(s, halves({6, 8}).data(), ref), 1.0);    // 2x
  EXPECT_DOUBLE_EQ(relative_frobenius(s, halves({0, 4}).data(), ref), 0.6);    // 3/5
  EXPECT_DOUBLE_EQ(relative_frobenius(s, halves({-3, -4}).data(), ref), 2.0);  // sign flip
}

TEST(VerifyFrobenius, ZeroReference) {
  const Shape s{2, 2, 1};
  const auto A = halves({0, 0});
  const auto B = halves({1, 1});
  const auto ref = compute_reference(s, A, B, plan_sampling(s, kFullBudget), 1);
  EXPECT_EQ(relative_frobenius(s, halves({0, 0, 0, 0}).data(), ref), 0.0);
  EXPECT_GT(relative_frobenius(s, halves({0, 1, 0, 0}).data(), ref), 1.0);  // any error is infinitely large
}

TEST(VerifyFrobenius, SampledCountsEachElementOnce) {
  std::mt19937 rng(49);
  const Shape s{30, 25, 16};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  const auto sp = plan_sampling(s, 3.0 * (s.m + s.n) * s.k);
  ASSERT_FALSE(sp.full);
  const auto want = naive(s, A, B);
  const auto ref = compute_reference(s, A, B, sp, 1);
  const auto cov = covered(s, sp);
  double den = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (cov[i]) den += want[i] * want[i];
  ASSERT_GT(den, 0);
  auto C = rounded(want);
  // Off by 2 where the first sampled row and column cross: counted once.
  const int64_t x = sp.rows[0] * s.n + sp.cols[0];
  C[x] = float_to_half(static_cast<float>(want[x] + 2));
  EXPECT_NEAR(relative_frobenius(s, C.data(), ref), std::sqrt(4.0 / den), 1e-15);
  // An error outside the sample changes nothing.
  int64_t outside = -1;
  for (int64_t i = 0; i < s.m * s.n && outside < 0; ++i)
    if (!cov[i]) outside = i;
  ASSERT_GE(outside, 0);
  C[outside] = float_to_half(static_cast<float>(want[outside] + 7));
  EXPECT_NEAR(relative_frobenius(s, C.data(), ref), std::sqrt(4.0 / den), 1e-15);
}

// ---------------------------------------------------------------- sampled output

// What the judge copies back from a large output (only the sampled rows and columns).
SampledOutput take_sample(const Shape& s, const std::vector<uint16_t>& C, const Sampling& sp) {
  SampledOutput o;
  for (int64_t i : sp.rows)
    for (int64_t j = 0; j < s.n; ++j) o.rows.push_back(C[i * s.n + j]);
  for (int64_t j : sp.cols)
    for (int64_t i = 0; i < s.m; ++i) o.cols.push_back(C[i * s.n + j]);
  return o;
}

TEST(VerifySampledOutput, SameVerdictsAsTheWholeOutput) {
  std::mt19937 rng(50);
  const Shape s{37, 29, 16};
  const auto A = random_binary(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_binary(static_cast<size_t>(s.k * s.n), rng);
  const auto sp = plan_sampling(s, 4.0 * (s.m + s.n) * s.k, 7);
  ASSERT_FALSE(sp.full);
  ASSERT_FALSE(sp.cols.empty());
  const auto want = naive(s, A, B);
  const auto ref = compute_reference(s, A, B, sp, 1);
  auto C = rounded(want);
  EXPECT_EQ(compare_exact(s, take_sample(s, C, sp), ref).mismatches, 0);
  EXPECT_EQ(relative_frobenius(s, take_sample(s, C, sp), ref), 0.0);
  // Wrong in a sampled row, in a sampled column outside the rows, and outside the sample.
  const auto cov = covered(s, sp);
  int64_t in_col = -1;
  for (int64_t i = 0; i < s.m && in_col < 0; ++i)
    if (!std::binary_search(sp.rows.begin(), sp.rows.end(), i)) in_col = i * s.n + sp.cols.back();
  ASSERT_GE(in_col, 0);
  for (int64_t x : {sp.rows.front() * s.n + 3, in_col}) C[x] = float_to_half(static_cast<float>(want[x] + 1));
  for (int64_t x = 0; x < s.m * s.n; ++x)
    if (!cov[x]) {
      C[x] = float_to_half(static_cast<float>(want[x] + 5));
      break;
    }
  const auto whole = compare_exact(s, C.data(), ref), part = compare_exact(s, take_sample(s, C, sp), ref);
  EXPECT_EQ(part.mismatches, 2);
  EXPECT_EQ(part.mismatches, whole.mismatches);
  EXPECT_EQ(part.checked, whole.checked);
  EXPECT_EQ(part.first_i, whole.first_i);
  EXPECT_EQ(part.first_j, whole.first_j);
  EXPECT_EQ(relative_frobenius(s, take_sample(s, C, sp), ref), relative_frobenius(s, C.data(), ref));
  EXPECT_GT(relative_frobenius(s, take_sample(s, C, sp), ref), 0.0);
}

TEST(VerifySampledOutput, RefusesASampleOfTheWrongSize) {
  const Shape s{8, 8, 4};
  std::vector<uint16_t> A(32, float_to_half(1.f)), B(32, float_to_half(1.f));
  const auto sp = plan_sampling(s, 2.0 * (s.m + s.n) * s.k + 1);
  const auto ref = compute_reference(s, A, B, sp, 1);
  SampledOutput o = take_sample(s, std::vector<uint16_t>(64, float_to_half(4.f)), sp);
  EXPECT_EQ(compare_exact(s, o, ref).mismatches, 0);
  o.cols.pop_back();
  EXPECT_THROW(compare_exact(s, o, ref), std::invalid_argument);
  EXPECT_THROW(relative_frobenius(s, o, ref), std::invalid_argument);
}

// ---------------------------------------------------------------- normal_tolerance

TEST(VerifyTolerance, Ordering) {
  const double u = std::ldexp(1.0, -11);  // fp16 unit roundoff
  EXPECT_GE(normal_tolerance(Accum::F32, 4096), u);
  EXPECT_GT(normal_tolerance(Accum::F16, 4096), normal_tolerance(Accum::F32, 4096));
  EXPECT_GT(normal_tolerance(Accum::F16, 16384), normal_tolerance(Accum::F16, 4096));
  EXPECT_GT(normal_tolerance(Accum::F16, 4096), normal_tolerance(Accum::F16, 64));
  for (int64_t k : {1, 64, 1024, 16384}) {
    EXPECT_GE(normal_tolerance(Accum::F32, k), u) << k;
    // fp16 accumulation is never more accurate than fp32 accumulation. (Checked from K = 64, the
    // smallest paper size: at K = 1 and 2 the F16 formula gives 5.6e-4 / 5.9e-4 < 6e-4.)
    if (k >= 64) {
      EXPECT_GE(normal_tolerance(Accum::F16, k), normal_tolerance(Accum::F32, k)) << k;
    }
    // Tight enough to mean something: well below a 1% error.
    EXPECT_LT(normal_tolerance(Accum::F32, k), 1e-3) << k;
    EXPECT_LT(normal_tolerance(Accum::F16, k), 1e-2) << k;
  }
}

class VerifyToleranceBehaviour : public ::testing::TestWithParam<Shape> {};

TEST_P(VerifyToleranceBehaviour, RoundedExactPassesSystematicErrorFails) {
  const Shape s = GetParam();
  std::mt19937 rng(50 + static_cast<unsigned>(s.k));
  const auto A = random_half(static_cast<size_t>(s.m * s.k), rng);
  const auto B = random_half(static_cast<size_t>(s.k * s.n), rng);
  const auto want = naive(s, A, B);
  const double tol = normal_tolerance(Accum::F32, s.k);
  for (double budget : {kFullBudget, 4.0 * (s.m + s.n) * s.k}) {
    const auto ref = compute_reference(s, A, B, plan_sampling(s, budget), 0);
    const auto good = rounded(want);
    const double e_good = relative_frobenius(s, good.data(), ref);
    EXPECT_GT(e_good, 0.0);  // rounding to fp16 does lose something on random data
    EXPECT_LE(e_good, tol) << "a correctly rounded fp16 result fails the fp32-accumulate tolerance";
    const auto bad = rounded(want, 2e-3);
    const double e_bad = relative_frobenius(s, bad.data(), ref);
    EXPECT_GT(e_bad, tol) << "a 2e-3 systematic error passes the fp32-accumulate tolerance";
    EXPECT_NEAR(e_bad, 2e-3, 5e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, VerifyToleranceBehaviour,
                         ::testing::Values(Shape{64, 48, 32}, Shape{40, 40, 1024}, Shape{16, 24, 4096}),
                         [](const ::testing::TestParamInfo<Shape>& i) { return "K" + std::to_string(i.param.k); });

// ---------------------------------------------------------------- Verdict

TEST(VerifyVerdict, StartsOk) {
  const Verdict v;
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.failure, FailureKind::None);
  EXPECT_EQ(v.detail, "");
}

TEST(VerifyVerdict, KeepsFirstFailureKindAndAppendsDetails) {
  Verdict v;
  v.fail(FailureKind::ExactMismatch, "3 of 100 elements differ");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, FailureKind::ExactMismatch);
  EXPECT_EQ(v.detail, "3 of 100 elements differ");
  v.fail(FailureKind::NanInf, "2 NaN outputs");
  v.fail(FailureKind::NormalError, "rel err 1e-2");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, FailureKind::ExactMismatch);
  const auto a = v.detail.find("3 of 100 elements differ");
  const auto b = v.detail.find("2 NaN outputs");
  const auto c = v.detail.find("rel err 1e-2");
  ASSERT_NE(a, std::string::npos) << v.detail;
  ASSERT_NE(b, std::string::npos) << v.detail;
  ASSERT_NE(c, std::string::npos) << v.detail;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(v.detail.find('\n'), std::string::npos);  // "one line for humans"
}

}  // namespace
}  // namespace cudal2

// Merged from verify_test.cpp (one unit-test file per area); its own namespace keeps its helpers
// apart from this file's.
namespace cudal2 {
namespace verify_test_cases {

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
  v.fail(FailureKind::UnwrittenOutput, "12 never written");
  v.fail(FailureKind::NanInf, "3 NaN");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, FailureKind::UnwrittenOutput);
  EXPECT_EQ(v.detail, "12 never written; 3 NaN");
}

}  // namespace verify_test_cases
}  // namespace cudal2

namespace cudal2 {
namespace verify_test_cases {
TEST(Sampling, FullWhenSamplingWouldCostMore) {
  // 1000x2x1000: two rows and two columns cost 2(M+N)K = 2.004e6 > MNK = 2e6
  EXPECT_TRUE(plan_sampling({1000, 2, 1000}, 1e5).full);
  EXPECT_FALSE(plan_sampling({1000, 1000, 1000}, 1e5).full);
}
TEST(NormalCheck, Fp16ToleranceNeverBelowFp32) {
  for (int64_t k : {1, 2, 16, 64}) EXPECT_GE(normal_tolerance(Accum::F16, k), normal_tolerance(Accum::F32, k)) << k;
}
}  // namespace verify_test_cases
}  // namespace cudal2

// The judge's per-job secrets, tolerances and physical floor (docs/threat-model.md).
namespace cudal2 {
namespace verify_test_cases {
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
}  // namespace verify_test_cases
}  // namespace cudal2
