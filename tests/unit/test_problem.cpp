// core/problem: shape parsing, shape files, grids, shards, de-duplication.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/csv.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "core/stats.hpp"
#include "temp_dir.hpp"

namespace cudal2 {
namespace {

// The InputError message of f(), or a failure if f() does not throw InputError.
std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than InputError: " << e.what();
    return "<wrong exception>";
  }
  ADD_FAILURE() << "did not throw";
  return "<no exception>";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::tuple<int64_t, int64_t, int64_t> key(const Shape& s) { return {s.m, s.n, s.k}; }

// A fresh directory under the system temp dir, removed when the test ends.
using cudal2::testing::TempDir;

// ---------------------------------------------------------------- parse_shape

TEST(ProblemParseShape, AcceptsCommaForm) {
  const Shape s = parse_shape("64,128,256");
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 128);
  EXPECT_EQ(s.k, 256);
}

TEST(ProblemParseShape, AcceptsXForm) {
  EXPECT_EQ(parse_shape("64x128x256"), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape("64X128X256"), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape("1x2x3"), (Shape{1, 2, 3}));
}

TEST(ProblemParseShape, AcceptsWhitespaceAroundFieldsAndWhole) {
  EXPECT_EQ(parse_shape(" 64 , 128 ,256 "), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape("\t64,\t128,256\r\n"), (Shape{64, 128, 256}));
  EXPECT_EQ(parse_shape("  64 x 128 x 256  "), (Shape{64, 128, 256}));
}

TEST(ProblemParseShape, KeepsFieldOrderDistinct) {
  // A permutation bug (e.g. K and N swapped) would show here.
  EXPECT_EQ(parse_shape("3,5,7"), (Shape{3, 5, 7}));
  EXPECT_EQ(parse_shape("7,5,3"), (Shape{7, 5, 3}));
  EXPECT_EQ(parse_shape("5x7x3"), (Shape{5, 7, 3}));
}

TEST(ProblemParseShape, AcceptsUpToMaxDim) {
  const std::string m = std::to_string(kMaxDim);
  const Shape s = parse_shape(m + "," + m + "," + m);
  EXPECT_EQ(s.m, kMaxDim);
  EXPECT_EQ(s.n, kMaxDim);
  EXPECT_EQ(s.k, kMaxDim);
  EXPECT_EQ(kMaxDim, 2147483647);  // cuBLAS takes int: INT_MAX is the limit
}

TEST(ProblemParseShape, StrRoundTrips) {
  const Shape s{12, 345, 6789};
  EXPECT_EQ(s.str(), "12x345x6789");
  EXPECT_EQ(parse_shape(s.str()), s);
}

TEST(ProblemParseShape, RejectsZeroNamingTheField) {
  EXPECT_TRUE(contains(input_error([] { parse_shape("0,4,5"); }), "M=0"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,0,5"); }), "N=0"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,5,0"); }), "K=0"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4x5x0"); }), "K=0"));
}

TEST(ProblemParseShape, RejectsNegativeNamingTheField) {
  EXPECT_TRUE(contains(input_error([] { parse_shape("-1,4,5"); }), "M=-1"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,-3,5"); }), "N=-3"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,5,-64"); }), "K=-64"));
}

TEST(ProblemParseShape, RejectsNonNumericNamingTheField) {
  EXPECT_TRUE(contains(input_error([] { parse_shape("abc,4,5"); }), "M='abc'"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,4,abc"); }), "K='abc'"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("1.5,1,1"); }), "M='1.5'"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("1,2e3,1"); }), "N='2e3'"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("1,2,3abc"); }), "K='3abc'"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("1,2 3,4"); }), "N='2 3'"));
}

TEST(ProblemParseShape, RejectsEmptyFieldNamingTheField) {
  EXPECT_TRUE(contains(input_error([] { parse_shape(",4,5"); }), "M is empty"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,,5"); }), "N is empty"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4,5,"); }), "K is empty"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4, ,5"); }), "N is empty"));
}

TEST(ProblemParseShape, RejectsWrongFieldCount) {
  const auto few = input_error([] { parse_shape("4,5"); });
  EXPECT_TRUE(contains(few, "three sizes")) << few;
  EXPECT_TRUE(contains(few, "got 2")) << few;
  const auto many = input_error([] { parse_shape("4,5,6,7"); });
  EXPECT_TRUE(contains(many, "got 4")) << many;
  EXPECT_TRUE(contains(input_error([] { parse_shape("4x5"); }), "got 2"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("4x5x6x7"); }), "got 4"));
  EXPECT_TRUE(contains(input_error([] { parse_shape("64"); }), "three sizes"));
  EXPECT_FALSE(input_error([] { parse_shape(""); }).empty());
  EXPECT_FALSE(input_error([] { parse_shape("   "); }).empty());
  EXPECT_FALSE(input_error([] { parse_shape("64x128,256"); }).empty());  // mixed separators
}

TEST(ProblemParseShape, RejectsAboveMaxDimNamingTheField) {
  const std::string over = std::to_string(kMaxDim + 1);
  const auto m = input_error([&] { parse_shape(over + ",1,1"); });
  EXPECT_TRUE(contains(m, "M=" + over)) << m;
  EXPECT_TRUE(contains(m, "too large")) << m;
  EXPECT_TRUE(contains(input_error([&] { parse_shape("1," + over + ",1"); }), "N=" + over));
  EXPECT_TRUE(contains(input_error([&] { parse_shape("1,1," + over); }), "K=" + over));
  // Beyond int64 too: still "too large" for the right field, not a generic parse error.
  const auto huge = input_error([] { parse_shape("1,1,99999999999999999999999"); });
  EXPECT_TRUE(contains(huge, "K=")) << huge;
  EXPECT_TRUE(contains(huge, "too large")) << huge;
}

TEST(ProblemParseShape, MessageQuotesTheInput) {
  const auto msg = input_error([] { parse_shape("7,0,9"); });
  EXPECT_TRUE(contains(msg, "7,0,9")) << msg;
}

TEST(ProblemParseShape, ErrorIsARuntimeError) {
  // The CLI catches InputError; it must also be a std::exception with a message.
  try {
    parse_shape("0,0,0");
    FAIL() << "did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()), "");
  }
}

// ---------------------------------------------------------------- layout / accum

TEST(ProblemEnums, LayoutAndAccumRoundTrip) {
  for (Layout l : {Layout::NN, Layout::TN}) EXPECT_EQ(parse_layout(to_string(l)), l);
  for (Accum a : {Accum::F32, Accum::F16}) EXPECT_EQ(parse_accum(to_string(a)), a);
  EXPECT_NE(to_string(Layout::NN), to_string(Layout::TN));
  EXPECT_NE(to_string(Accum::F32), to_string(Accum::F16));
  EXPECT_THROW(parse_layout("nt"), InputError);
  EXPECT_THROW(parse_layout(""), InputError);
  EXPECT_THROW(parse_accum("bf16"), InputError);
  EXPECT_THROW(parse_accum(""), InputError);
}

// ---------------------------------------------------------------- shapes text / files

TEST(ProblemShapesText, SkipsCommentsAndBlankLines) {
  const auto v = parse_shapes_text(
      "# header comment\n"
      "64,64,64\n"
      "\n"
      "   \n"
      "  128,256,512   # trailing comment\n"
      "#64,64,64\n"
      "\t1x2x3\n",
      "inline");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], (Shape{64, 64, 64}));
  EXPECT_EQ(v[1], (Shape{128, 256, 512}));
  EXPECT_EQ(v[2], (Shape{1, 2, 3}));
}

TEST(ProblemShapesText, HandlesCrLfAndNoTrailingNewline) {
  const auto v = parse_shapes_text("1,2,3\r\n# c\r\n\r\n4,5,6", "crlf");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], (Shape{1, 2, 3}));
  EXPECT_EQ(v[1], (Shape{4, 5, 6}));
}

TEST(ProblemShapesText, EmptyTextGivesNoShapes) {
  EXPECT_TRUE(parse_shapes_text("", "x").empty());
  EXPECT_TRUE(parse_shapes_text("# only\n\n", "x").empty());
}

TEST(ProblemShapesText, KeepsRepeatsAndOrder) {
  const auto v = parse_shapes_text("3,3,3\n1,1,1\n3,3,3\n", "x");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], (Shape{3, 3, 3}));
  EXPECT_EQ(v[1], (Shape{1, 1, 1}));
  EXPECT_EQ(v[2], (Shape{3, 3, 3}));
}

TEST(ProblemShapesText, ErrorNamesOriginLineAndField) {
  // Line numbers count comment and blank lines too.
  const auto msg = input_error([] { parse_shapes_text("64,64,64\n# c\n\n1,0,1\n", "shapes.txt"); });
  EXPECT_EQ(msg.rfind("shapes.txt:4:", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "N=0")) << msg;
  const auto first = input_error([] { parse_shapes_text("a,b,c\n", "f"); });
  EXPECT_EQ(first.rfind("f:1:", 0), 0u) << first;
  EXPECT_TRUE(contains(first, "M='a'")) << first;
}

TEST(ProblemShapesFile, ReadsShapes) {
  TempDir d;
  const auto p = d.file("good.txt", "# shapes\n1,2,3\n\n4x5x6  # c\n");
  const auto v = read_shapes_file(p);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], (Shape{1, 2, 3}));
  EXPECT_EQ(v[1], (Shape{4, 5, 6}));
}

TEST(ProblemShapesFile, ErrorNamesFileAndLine) {
  TempDir d;
  const auto p = d.file("bad.txt", "1,2,3\n# comment\n4,5\n");
  const auto msg = input_error([&] { read_shapes_file(p); });
  EXPECT_EQ(msg.rfind(p + ":3:", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "got 2")) << msg;
}

TEST(ProblemShapesFile, MissingFileIsInputError) {
  TempDir d;
  const auto p = (d.path() / "does_not_exist.txt").string();
  const auto msg = input_error([&] { read_shapes_file(p); });
  EXPECT_TRUE(contains(msg, p)) << msg;
  EXPECT_THROW(read_shapes_file("/nonexistent/dir/shapes.txt"), InputError);
}

TEST(ProblemShapesFile, EmptyFileIsInputError) {
  TempDir d;
  const auto empty = d.file("empty.txt", "");
  const auto msg = input_error([&] { read_shapes_file(empty); });
  EXPECT_TRUE(contains(msg, empty)) << msg;
  const auto comments = d.file("comments.txt", "# nothing here\n\n   # still nothing\n");
  EXPECT_TRUE(contains(input_error([&] { read_shapes_file(comments); }), comments));
}

// ---------------------------------------------------------------- grids

TEST(ProblemGrid, PaperSizesAreDistinctAndValid) {
  const auto& sizes = paper_sizes();
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(std::set<int64_t>(sizes.begin(), sizes.end()).size(), sizes.size());
  for (auto s : sizes) {
    EXPECT_GT(s, 0);
    EXPECT_LE(s, kMaxDim);
  }
}

TEST(ProblemGrid, PaperHasThousandUniqueShapesFromPaperSizes) {
  const auto g = grid("paper");
  ASSERT_EQ(g.size(), 1000u);
  const auto& sizes = paper_sizes();
  const std::set<int64_t> allowed(sizes.begin(), sizes.end());
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (const auto& s : g) {
    EXPECT_TRUE(allowed.count(s.m)) << s.str();
    EXPECT_TRUE(allowed.count(s.n)) << s.str();
    EXPECT_TRUE(allowed.count(s.k)) << s.str();
    seen.insert(key(s));
  }
  EXPECT_EQ(seen.size(), 1000u);
  // 1000 distinct triples over the size set is the full cartesian product.
  EXPECT_EQ(allowed.size() * allowed.size() * allowed.size(), 1000u);
}

TEST(ProblemGrid, SampleHasSixteenUniquePaperShapesCoveringClasses) {
  const auto s = grid("sample");
  ASSERT_EQ(s.size(), 16u);
  const auto p = grid("paper");
  std::set<std::tuple<int64_t, int64_t, int64_t>> paper;
  for (const auto& x : p) paper.insert(key(x));
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  std::set<ShapeClass> classes;
  for (const auto& x : s) {
    EXPECT_TRUE(paper.count(key(x))) << x.str() << " is not in the paper grid";
    seen.insert(key(x));
    classes.insert(classify(x));
  }
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_TRUE(classes.count(ShapeClass::Small));
  EXPECT_TRUE(classes.count(ShapeClass::Skinny));
  EXPECT_TRUE(classes.count(ShapeClass::Large));
}

TEST(ProblemGrid, IsDeterministic) {
  const auto a = grid("sample"), b = grid("sample");
  EXPECT_EQ(a, b);
  EXPECT_EQ(grid("paper"), grid("paper"));
}

TEST(ProblemGrid, UnknownGridThrowsNamingIt) {
  EXPECT_TRUE(contains(input_error([] { grid("nope"); }), "nope"));
  EXPECT_THROW(grid(""), InputError);
  EXPECT_THROW(grid("papers"), InputError);
}

// ---------------------------------------------------------------- shards

TEST(ProblemShard, ParsesGoodShards) {
  const Shard s = parse_shard("1/4");
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 4);
  const Shard z = parse_shard("0/1");
  EXPECT_EQ(z.index, 0);
  EXPECT_EQ(z.count, 1);
  const Shard l = parse_shard("6/7");
  EXPECT_EQ(l.index, 6);
  EXPECT_EQ(l.count, 7);
  const Shard big = parse_shard("12/100");
  EXPECT_EQ(big.index, 12);
  EXPECT_EQ(big.count, 100);
}

TEST(ProblemShard, RejectsBadShards) {
  for (const char* bad : {"4/4", "5/4", "-1/2", "a/b", "3", "1/0", "0/0", "0/-1", "", "/", "1/", "/2", "1/2/3", "1/2x",
                          "x1/2", "1.0/2", "1,2"}) {
    const auto msg = input_error([&] { parse_shard(bad); });
    EXPECT_TRUE(contains(msg, std::string("'") + bad + "'")) << bad << ": " << msg;
  }
}

TEST(ProblemShard, ApplyShardPartitionsTheList) {
  const auto g = grid("paper");
  constexpr int N = 7;
  std::vector<int> hits(g.size(), 0);
  size_t total = 0;
  for (int i = 0; i < N; ++i) {
    const auto part = apply_shard(g, {i, N});
    total += part.size();
    // sizes differ by at most one between shards
    EXPECT_GE(part.size(), g.size() / N);
    EXPECT_LE(part.size(), g.size() / N + 1);
    size_t last_pos = 0;
    bool first = true;
    for (const auto& s : part) {
      const auto pos = static_cast<size_t>(std::find(g.begin(), g.end(), s) - g.begin());
      ASSERT_LT(pos, g.size());
      EXPECT_EQ(static_cast<int>(pos % N), i) << s.str();  // documented rule: index % N == I
      if (!first) {
        EXPECT_GT(pos, last_pos) << "shard does not keep the list order";
      }
      last_pos = pos;
      first = false;
      ++hits[pos];
    }
  }
  EXPECT_EQ(total, g.size());
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i], 1) << "shape " << g[i].str();
}

TEST(ProblemShard, ShortListsAndSingleShard) {
  const std::vector<Shape> three{{1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
  EXPECT_EQ(apply_shard(three, {0, 1}), three);
  EXPECT_EQ(apply_shard(three, {0, 5}), (std::vector<Shape>{{1, 1, 1}}));
  EXPECT_EQ(apply_shard(three, {2, 5}), (std::vector<Shape>{{3, 3, 3}}));
  EXPECT_TRUE(apply_shard(three, {4, 5}).empty());
  EXPECT_TRUE(apply_shard({}, {0, 3}).empty());
}

// ---------------------------------------------------------------- unique_shapes

TEST(ProblemUnique, KeepsFirstSeenOrder) {
  const auto u = unique_shapes({{3, 3, 3}, {1, 1, 1}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {3, 3, 3}});
  EXPECT_EQ(u, (std::vector<Shape>{{3, 3, 3}, {1, 1, 1}, {2, 2, 2}}));
}

TEST(ProblemUnique, DistinguishesPermutations) {
  const std::vector<Shape> v{{1, 2, 3}, {3, 2, 1}, {2, 1, 3}, {1, 2, 3}};
  EXPECT_EQ(unique_shapes(v), (std::vector<Shape>{{1, 2, 3}, {3, 2, 1}, {2, 1, 3}}));
}

TEST(ProblemUnique, EmptyAndAlreadyUnique) {
  EXPECT_TRUE(unique_shapes({}).empty());
  const auto s = grid("sample");
  EXPECT_EQ(unique_shapes(s), s);
  auto doubled = s;
  doubled.insert(doubled.end(), s.rbegin(), s.rend());
  EXPECT_EQ(unique_shapes(doubled), s);
}

}  // namespace
}  // namespace cudal2

// Merged from core_test.cpp (one unit-test file per area); its own namespace keeps its
// helpers apart from this file's.
namespace cudal2 {
namespace core_test_cases {

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

}  // namespace core_test_cases
}  // namespace cudal2
