// core/roofline: flop and byte counts, roofline times, achieved TFLOP/s, shape classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <filesystem>
#include <fstream>
#include "core/csv.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "core/stats.hpp"

namespace cudal2 {
namespace {

TEST(RooflineCounts, FlopsByHand) {
  EXPECT_DOUBLE_EQ(flops({1, 1, 1}), 2.0);
  EXPECT_DOUBLE_EQ(flops({2, 3, 4}), 48.0);
  EXPECT_DOUBLE_EQ(flops({64, 64, 64}), 524288.0);
  EXPECT_DOUBLE_EQ(flops({1000, 1000, 500}), 1e9);
  // 2 * 2^42, exact in double; an int32 product would have overflowed.
  EXPECT_DOUBLE_EQ(flops({16384, 16384, 16384}), 8796093022208.0);
}

TEST(RooflineCounts, MinBytesByHand) {
  EXPECT_DOUBLE_EQ(min_bytes({1, 1, 1}), 6.0);  // three fp16 scalars
  // 2*(M*K + K*N + M*N) = 2*(2*4 + 4*3 + 2*3) = 52
  EXPECT_DOUBLE_EQ(min_bytes({2, 3, 4}), 52.0);
  EXPECT_DOUBLE_EQ(min_bytes({64, 64, 64}), 24576.0);
  // Not symmetric in its arguments: K enters two terms.
  EXPECT_DOUBLE_EQ(min_bytes({1, 1, 100}), 2.0 * (100 + 100 + 1));
  EXPECT_DOUBLE_EQ(min_bytes({100, 1, 1}), 2.0 * (100 + 1 + 100));
  EXPECT_DOUBLE_EQ(min_bytes({16384, 16384, 16384}), 6.0 * 16384.0 * 16384.0);
}

TEST(RooflineTime, SmallShapeIsMemoryBound) {
  const Ceilings c;
  const Shape s{64, 64, 64};
  const double mem_us = 24576.0 / (c.tbps * 1e12) * 1e6;      // bytes / bandwidth
  const double math_us = 524288.0 / (c.tflops * 1e12) * 1e6;  // flops / peak
  ASSERT_GT(mem_us, math_us);
  EXPECT_NEAR(roofline_us(s), mem_us, mem_us * 1e-12);
  EXPECT_NEAR(roofline_us(s, c), mem_us, mem_us * 1e-12);
  // Memory bound: the math ceiling does not matter, the bandwidth does.
  EXPECT_NEAR(roofline_us(s, {c.tflops * 10, c.tbps}), mem_us, mem_us * 1e-12);
  EXPECT_NEAR(roofline_us(s, {c.tflops, c.tbps * 2}), mem_us / 2, mem_us * 1e-12);
}

TEST(RooflineTime, LargeShapeIsComputeBound) {
  const Ceilings c;
  const Shape s{8192, 8192, 8192};
  const double math_us = 2.0 * 8192.0 * 8192.0 * 8192.0 / (c.tflops * 1e12) * 1e6;
  const double mem_us = 6.0 * 8192.0 * 8192.0 / (c.tbps * 1e12) * 1e6;
  ASSERT_GT(math_us, mem_us);
  EXPECT_NEAR(roofline_us(s), math_us, math_us * 1e-12);
  EXPECT_NEAR(roofline_us(s, {c.tflops / 2, c.tbps}), 2 * math_us, math_us * 1e-12);
  EXPECT_NEAR(roofline_us(s, {c.tflops, c.tbps * 100}), math_us, math_us * 1e-12);
}

TEST(RooflineTime, IsTheMaxOfBothBounds) {
  const Ceilings c{100.0, 1.0};
  for (const Shape& s :
       {Shape{1, 1, 1}, Shape{64, 4096, 4096}, Shape{4096, 4096, 4096}, Shape{16384, 64, 64}, Shape{1000, 1000, 500}}) {
    const double math_us = flops(s) / (c.tflops * 1e12) * 1e6;
    const double mem_us = min_bytes(s) / (c.tbps * 1e12) * 1e6;
    EXPECT_NEAR(roofline_us(s, c), std::max(math_us, mem_us), std::max(math_us, mem_us) * 1e-12) << s.str();
  }
}

TEST(RooflineTime, DefaultCeilingsAreH100Class) {
  // The header documents ~800 TFLOP/s and ~3 TB/s; a unit mix-up (e.g. GB/s) would be off by 1000.
  const Ceilings c;
  EXPECT_GT(c.tflops, 100);
  EXPECT_LT(c.tflops, 5000);
  EXPECT_GT(c.tbps, 0.5);
  EXPECT_LT(c.tbps, 20);
}

TEST(RooflineTflops, ByHand) {
  EXPECT_NEAR(tflops_at({1000, 1000, 500}, 1.0), 1000.0, 1e-9);  // 1e9 flop in 1 us = 1e15 flop/s
  EXPECT_NEAR(tflops_at({1000, 1000, 500}, 1000.0), 1.0, 1e-12);
  EXPECT_NEAR(tflops_at({2, 3, 4}, 1e-6), 48.0, 1e-9);  // 48 flop in 1 ps
}

TEST(RooflineTflops, AtRooflineTimeOfComputeBoundShapeIsPeak) {
  const Ceilings c;
  const Shape s{8192, 8192, 8192};
  EXPECT_NEAR(tflops_at(s, roofline_us(s, c)), c.tflops, c.tflops * 1e-12);
  // Memory-bound shape: achieved at the roofline time is below peak.
  const Shape t{64, 64, 64};
  EXPECT_LT(tflops_at(t, roofline_us(t, c)), c.tflops);
}

TEST(RooflineTflops, InverselyProportionalToTime) {
  const Shape s{4096, 4096, 4096};
  EXPECT_NEAR(tflops_at(s, 100) / tflops_at(s, 200), 2.0, 1e-12);
}

TEST(RooflineTflops, NonPositiveTimeIsNotInfinite) {
  // A zero time (timer failure) must not turn into Inf/NaN in a report.
  EXPECT_TRUE(std::isfinite(tflops_at({64, 64, 64}, 0.0)));
  EXPECT_TRUE(std::isfinite(tflops_at({64, 64, 64}, -1.0)));
}

TEST(RooflineClassify, SmallBoundary) {
  // 2MNK = 1e9 exactly at 1000x1000x500.
  EXPECT_EQ(classify({1000, 1000, 499}), ShapeClass::Small);   // 9.98e8
  EXPECT_EQ(classify({1000, 1000, 500}), ShapeClass::Medium);  // 1e9: not small
  EXPECT_EQ(classify({1000, 1000, 501}), ShapeClass::Medium);
  EXPECT_EQ(classify({1, 1, 1}), ShapeClass::Small);
  EXPECT_EQ(classify({64, 64, 64}), ShapeClass::Small);
}

TEST(RooflineClassify, SkinnyBoundary) {
  // Well above 1e9 and below 1e11 so that only min(M, N) decides.
  EXPECT_EQ(classify({256, 4096, 4096}), ShapeClass::Skinny);
  EXPECT_EQ(classify({257, 4096, 4096}), ShapeClass::Medium);
  EXPECT_EQ(classify({4096, 256, 4096}), ShapeClass::Skinny);
  EXPECT_EQ(classify({4096, 257, 4096}), ShapeClass::Medium);
  // K small does not make a shape skinny.
  EXPECT_EQ(classify({4096, 4096, 64}), ShapeClass::Medium);  // 2.1e9
}

TEST(RooflineClassify, LargeBoundary) {
  // 2MNK = 1e11 exactly at 5000x5000x2000.
  EXPECT_EQ(classify({5000, 5000, 2000}), ShapeClass::Large);
  EXPECT_EQ(classify({5000, 5000, 1999}), ShapeClass::Medium);
  EXPECT_EQ(classify({8192, 8192, 8192}), ShapeClass::Large);
  EXPECT_EQ(classify({16384, 16384, 16384}), ShapeClass::Large);
}

TEST(RooflineClassify, Precedence) {
  // small before skinny: 2*256*1000*1000 = 5.12e8
  EXPECT_EQ(classify({256, 1000, 1000}), ShapeClass::Small);
  // skinny before large: 2*256*16384*16384 = 1.37e11
  EXPECT_EQ(classify({256, 16384, 16384}), ShapeClass::Skinny);
  EXPECT_EQ(classify({16384, 64, 16384}), ShapeClass::Skinny);
}

TEST(RooflineClassify, NamesAreDistinctReportLabels) {
  std::set<std::string> names;
  for (auto c : {ShapeClass::Small, ShapeClass::Skinny, ShapeClass::Medium, ShapeClass::Large})
    names.insert(std::string(to_string(c)));
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(to_string(ShapeClass::Small), "small");
  EXPECT_EQ(to_string(ShapeClass::Skinny), "skinny");
  EXPECT_EQ(to_string(ShapeClass::Medium), "medium");
  EXPECT_EQ(to_string(ShapeClass::Large), "large");
}

}  // namespace
}  // namespace cudal2

// Merged from core_test.cpp (one unit-test file per area); its own namespace keeps its
// helpers apart from this file's.
namespace cudal2 {
namespace core_roofline_cases {

TEST(Roofline, FlopsBytesAndBound) {
  const Shape t{64, 64, 64};
  EXPECT_DOUBLE_EQ(flops(t), 2.0 * 64 * 64 * 64);
  EXPECT_DOUBLE_EQ(min_bytes(t), 2.0 * 3 * 64 * 64);
  // 64^3: memory-bound (24 KiB at 3 TB/s = 8.2 ns > 0.66 ns of math)
  EXPECT_NEAR(roofline_us(t), 2.0 * 3 * 64 * 64 / 3.0e12 * 1e6, 1e-12);
  // 8192^3: compute-bound, 1.1e12 FLOP at 800 TFLOP/s = 1374 us
  const Shape b{8192, 8192, 8192};
  EXPECT_NEAR(roofline_us(b), flops(b) / 800e12 * 1e6, 1e-6);
  EXPECT_NEAR(roofline_us(b, {400, 3.0}), 2 * roofline_us(b), 1e-6);
  EXPECT_NEAR(tflops_at(b, 1374.389534720), 800.0, 1e-3);
  EXPECT_EQ(tflops_at(b, 0), 0.0);
}

TEST(Roofline, ClassBoundaries) {
  EXPECT_EQ(classify({512, 512, 1024}), ShapeClass::Small);    // 2MNK = 5.4e8
  EXPECT_EQ(classify({1000, 1000, 500}), ShapeClass::Medium);  // exactly 1e9: not small
  EXPECT_EQ(classify({256, 4096, 4096}), ShapeClass::Skinny);  // min(M,N) = 256
  EXPECT_EQ(classify({257, 4096, 4096}), ShapeClass::Medium);
  EXPECT_EQ(classify({5000, 5000, 2000}), ShapeClass::Large);  // exactly 1e11
  EXPECT_EQ(classify({5000, 5000, 1999}), ShapeClass::Medium);
  EXPECT_EQ(classify({16384, 64, 16384}), ShapeClass::Skinny);  // skinny wins over large
  EXPECT_EQ(to_string(ShapeClass::Skinny), "skinny");
}

TEST(Roofline, ReadLimitIsOperandBytesAtTheMeasuredRatePlusTheColdFloor) {
  ReadLimit none;
  EXPECT_EQ(none.limit_us({1, 4096, 4096}, false), 0.0) << "not measured: no limit";
  EXPECT_FALSE(none.bandwidth_bound({1, 4096, 4096}, {}));
  ReadLimit r;
  r.measured = true, r.warm_tbps = 4.0, r.cold_floor_us = 5.0;
  const Shape decode{1, 4096, 4096};  // 2 * (4096 + 4096^2 + 4096) bytes
  const double us = min_bytes(decode) / 4e12 * 1e6;
  EXPECT_NEAR(r.limit_us(decode, false), us, 1e-9);
  EXPECT_NEAR(r.limit_us(decode, true), us + 5.0, 1e-9);
  EXPECT_TRUE(r.bandwidth_bound(decode, {}));
  EXPECT_FALSE(r.bandwidth_bound({8192, 8192, 8192}, {})) << "compute-bound";
}

}  // namespace core_roofline_cases
}  // namespace cudal2
