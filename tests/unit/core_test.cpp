// Problems, grids, shards, statistics, roofline, CSV.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/csv.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "core/stats.hpp"

namespace cudal2 {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseShape, AcceptsCommaAndXForms) {
  EXPECT_EQ(parse_shape("64,128,256"), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape(" 64 , 128 ,256 "), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape("7x1x4097"), (Shape{7, 1, 4097}));
  EXPECT_EQ(parse_shape("2147483647,1,1").m, kMaxDim);
}

TEST(ParseShape, RejectsBadSizesNamingTheField) {
  EXPECT_NE(error_of([] { parse_shape("0,4,5"); }).find("M=0 must be positive"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("4,-3,5"); }).find("N=-3"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("4,4,abc"); }).find("K='abc'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("4,,5"); }).find("N is empty"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("4,5"); }).find("three sizes"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("4,5,6,7"); }).find("got 4"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("2147483648,1,1"); }).find("too large"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("99999999999999999999999,1,1"); }).find("too large"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("1.5,1,1"); }).find("not a whole number"), std::string::npos);
}

TEST(ShapesText, SkipsCommentsAndBlankLinesAndNamesTheLine) {
  const auto v = parse_shapes_text("# header\n64,64,64\n\n  128,256,512 # trailing\n", "f.txt");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], (Shape{128, 256, 512}));
  const auto msg = error_of([] { parse_shapes_text("64,64,64\n# c\n1,0,1\n", "shapes.txt"); });
  EXPECT_EQ(msg.rfind("shapes.txt:3: ", 0), 0u) << msg;
}

TEST(ShapesFile, ReadsFileAndRejectsMissingOrEmpty) {
  const auto dir = std::filesystem::temp_directory_path() / "cudal2_unit_shapes";
  std::filesystem::create_directories(dir);
  const auto good = (dir / "good.txt").string(), empty = (dir / "empty.txt").string();
  std::ofstream(good) << "1,2,3\n4x5x6\n";
  std::ofstream(empty) << "# nothing\n";
  EXPECT_EQ(read_shapes_file(good).size(), 2u);
  EXPECT_NE(error_of([&] { read_shapes_file(empty); }).find("holds no shapes"), std::string::npos);
  EXPECT_NE(error_of([&] { read_shapes_file((dir / "missing.txt").string()); }).find("cannot read"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Grids, PaperHasAllThousandCombinations) {
  const auto g = grid("paper");
  ASSERT_EQ(g.size(), 1000u);
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  const auto& sizes = paper_sizes();
  for (const auto& s : g) {
    seen.insert({s.m, s.n, s.k});
    for (auto d : {s.m, s.n, s.k}) EXPECT_NE(std::find(sizes.begin(), sizes.end(), d), sizes.end());
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Grids, SampleIsSixteenPaperShapesSpanningTheClasses) {
  const auto s = grid("sample");
  const auto p = grid("paper");
  ASSERT_EQ(s.size(), 16u);
  EXPECT_EQ(unique_shapes(s).size(), 16u);
  std::set<ShapeClass> classes;
  for (const auto& x : s) {
    EXPECT_NE(std::find(p.begin(), p.end(), x), p.end()) << x.str();
    classes.insert(classify(x));
  }
  EXPECT_TRUE(classes.count(ShapeClass::Small));
  EXPECT_TRUE(classes.count(ShapeClass::Skinny));
  EXPECT_TRUE(classes.count(ShapeClass::Large));
  EXPECT_TRUE(classes.count(ShapeClass::Medium));
  EXPECT_NE(error_of([] { grid("nope"); }).find("unknown grid 'nope'"), std::string::npos);
}

TEST(Shards, ParseAndPartition) {
  EXPECT_EQ(parse_shard("1/4").index, 1);
  EXPECT_EQ(parse_shard("1/4").count, 4);
  for (const char* bad : {"4/4", "-1/2", "a/b", "3", "1/0", "1/2x"}) EXPECT_THROW(parse_shard(bad), InputError) << bad;
  const auto g = grid("paper");
  std::vector<int> hits(g.size(), 0);
  size_t total = 0;
  for (int i = 0; i < 7; ++i) {
    const auto part = apply_shard(g, {i, 7});
    total += part.size();
    for (const auto& s : part) ++hits[std::find(g.begin(), g.end(), s) - g.begin()];
  }
  EXPECT_EQ(total, g.size());
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(Shapes, UniqueKeepsFirstSeenOrder) {
  const auto u = unique_shapes({{3, 3, 3}, {1, 1, 1}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}});
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (Shape{3, 3, 3}));
  EXPECT_EQ(u[1], (Shape{1, 1, 1}));
  EXPECT_EQ(u[2], (Shape{2, 2, 2}));
}

TEST(Stats, PercentilesInterpolateLinearly) {
  const std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 10), 1.3);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 90), 7);
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile(v, 101), std::invalid_argument);
}

TEST(Stats, SummaryAndGeometricMean) {
  const auto s = summarize({5, 1, 9, 3, 7});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.p10, 1.8);
  EXPECT_NEAR(geometric_mean({1, 4}), 2.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2, 8}), 2.0, 1e-12);
  EXPECT_THROW(geometric_mean({1, 0}), std::invalid_argument);
  EXPECT_THROW(geometric_mean({}), std::invalid_argument);
}

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

class CsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_unit_csv_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CsvTest, EscapeSplitRoundTrip) {
  const std::vector<std::string> fields{"plain", "with,comma", "with \"quotes\"", "", "{\"a\":[1,2]}"};
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_escape(fields[i]);
  EXPECT_EQ(csv_split(line), fields);
  EXPECT_EQ(csv_escape("x"), "x");
  EXPECT_THROW(csv_split("a,\"unterminated"), InputError);
}

TEST_F(CsvTest, WriterCommentsHeaderAppendAndReader) {
  const auto path = (dir_ / "r.csv").string();
  {
    CsvWriter w(path, {"a", "b"}, false, {"run metadata"});
    w.row({"1", "x,y"});
  }
  {
    CsvWriter w(path, {"a", "b"}, true, {"ignored when appending"});
    w.row({"2", "z"});
  }
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "# run metadata\na,b\n1,\"x,y\"\n2,z\n");
  const auto rows = read_csv(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("b"), "x,y");
  EXPECT_EQ(rows[1].at("a"), "2");
  {
    CsvWriter w(path, {"a", "b"}, false);  // not appending: starts over
  }
  EXPECT_TRUE(read_csv(path).empty());
}

TEST_F(CsvTest, ReaderRejectsMalformedAndMissing) {
  const auto path = (dir_ / "bad.csv").string();
  std::ofstream(path) << "a,b\n1,2\n3\n";
  EXPECT_NE(error_of([&] { read_csv(path); }).find("bad.csv:3"), std::string::npos);
  EXPECT_THROW(read_csv((dir_ / "none.csv").string()), InputError);
}

}  // namespace
}  // namespace cudal2
