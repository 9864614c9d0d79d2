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

#include "eval/half.hpp"
#include "eval/verify.hpp"

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
  EXPECT_EQ(v.failure, "");
  EXPECT_EQ(v.detail, "");
}

TEST(VerifyVerdict, KeepsFirstFailureKindAndAppendsDetails) {
  Verdict v;
  v.fail("exact mismatch", "3 of 100 elements differ");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, "exact mismatch");
  EXPECT_EQ(v.detail, "3 of 100 elements differ");
  v.fail("NaN/Inf", "2 NaN outputs");
  v.fail("normal error", "rel err 1e-2");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failure, "exact mismatch");
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
