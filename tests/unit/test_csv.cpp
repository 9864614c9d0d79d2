// core/csv: escaping, splitting, the writer (comments, header, append) and the reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <set>
#include "core/csv.hpp"
#include "core/problem.hpp"
#include "core/roofline.hpp"
#include "core/stats.hpp"

namespace cudal2 {
namespace {

std::string join_escaped(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_escape(fields[i]);
  }
  return line;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---------------------------------------------------------------- escape / split

TEST(CsvText, PlainFieldsAreNotQuoted) {
  EXPECT_EQ(csv_escape("abc"), "abc");
  EXPECT_EQ(csv_escape(""), "");
  EXPECT_EQ(csv_escape("1.25e-3"), "1.25e-3");
  EXPECT_EQ(csv_escape("with space"), "with space");
}

TEST(CsvText, SpecialFieldsAreQuoted) {
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");  // RFC 4180: quotes doubled
  EXPECT_EQ(csv_escape("\""), "\"\"\"\"");
  // A line break inside a field is quoted, never written bare.
  const auto nl = csv_escape("a\nb");
  EXPECT_EQ(nl.front(), '"');
  EXPECT_EQ(nl.back(), '"');
}

TEST(CsvText, SplitBasics) {
  EXPECT_EQ(csv_split("a,b,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(csv_split("a,,c"), (std::vector<std::string>{"a", "", "c"}));
  EXPECT_EQ(csv_split(""), (std::vector<std::string>{""}));
  EXPECT_EQ(csv_split(","), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(csv_split("a,"), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(csv_split("\"a,b\",c"), (std::vector<std::string>{"a,b", "c"}));
  EXPECT_EQ(csv_split("\"\"\"\""), (std::vector<std::string>{"\""}));
  EXPECT_EQ(csv_split("\"\""), (std::vector<std::string>{""}));
}

TEST(CsvText, SplitDropsCarriageReturnOfCrLfFiles) {
  EXPECT_EQ(csv_split("a,b\r"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(csv_split("\"x\",y\r"), (std::vector<std::string>{"x", "y"}));
}

TEST(CsvText, RoundTripTrickyFields) {
  const std::vector<std::string> fields{"plain",
                                        "",
                                        "with,comma",
                                        ",",
                                        ",,",
                                        "\"",
                                        "\"\"",
                                        "say \"hi\"",
                                        "\"quoted,comma\"",
                                        " leading and trailing ",
                                        "{\"json\":[1,2,{\"k\":\"v,w\"}]}",
                                        "a\"b,c\"d",
                                        "x"};
  EXPECT_EQ(csv_split(join_escaped(fields)), fields);
  for (const auto& f : fields) EXPECT_EQ(csv_split(csv_escape(f)), (std::vector<std::string>{f})) << f;
}

TEST(CsvText, RoundTripRandomRecords) {
  std::mt19937 rng(17);
  const std::string alphabet = "ab ,\"\"x;'#\t";
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1), len(0, 8), count(1, 7);
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::string> fields(count(rng));
    for (auto& f : fields) {
      const size_t n = len(rng);
      for (size_t i = 0; i < n; ++i) f += alphabet[pick(rng)];
    }
    const auto line = join_escaped(fields);
    ASSERT_EQ(csv_split(line), fields) << line;
  }
}

TEST(CsvText, UnterminatedQuoteThrows) {
  EXPECT_THROW(csv_split("\"abc"), InputError);
  EXPECT_THROW(csv_split("a,\"b"), InputError);
  EXPECT_THROW(csv_split("\"a\"\""), InputError);  // an escaped quote, then no closing one
  EXPECT_THROW(csv_split("\""), InputError);
  EXPECT_NO_THROW(csv_split("\"a\"\"\""));
}

// ---------------------------------------------------------------- files

class CsvFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_test_csv_" + std::to_string(::getpid()) + "_" +
                                                     std::to_string(counter++) + "_" + std::to_string(rd()));
    ASSERT_TRUE(std::filesystem::create_directories(dir_));
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CsvFiles, WriterWritesCommentsHeaderAndRows) {
  const auto p = path("out.csv");
  {
    CsvWriter w(p, {"shape", "method", "note"}, false, {"command: cudal2 bench", "gpu: none"});
    EXPECT_EQ(w.columns(), (std::vector<std::string>{"shape", "method", "note"}));
    w.row({"64x64x64", "cublas-nn", "plain"});
    w.row({"1x2x3", "x", "has,comma and \"quote\""});
  }
  EXPECT_EQ(slurp(p),
            "# command: cudal2 bench\n"
            "# gpu: none\n"
            "shape,method,note\n"
            "64x64x64,cublas-nn,plain\n"
            "1x2x3,x,\"has,comma and \"\"quote\"\"\"\n");
}

TEST_F(CsvFiles, RowsAreOnDiskBeforeTheWriterCloses) {
  const auto p = path("live.csv");
  CsvWriter w(p, {"a"}, false);
  w.row({"1"});
  EXPECT_EQ(slurp(p), "a\n1\n");
  w.row({"2"});
  EXPECT_EQ(read_csv(p).size(), 2u);
}

TEST_F(CsvFiles, AppendDoesNotRepeatHeaderOrComments) {
  const auto p = path("append.csv");
  {
    CsvWriter w(p, {"a", "b"}, false, {"first run"});
    w.row({"1", "x"});
  }
  {
    CsvWriter w(p, {"a", "b"}, true, {"second run"});
    w.row({"2", "y"});
  }
  EXPECT_EQ(slurp(p), "# first run\na,b\n1,x\n2,y\n");
  const auto rows = read_csv(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("a"), "1");
  EXPECT_EQ(rows[1].at("a"), "2");
  EXPECT_EQ(rows[1].at("b"), "y");
}

// Rows under another header would leave a file read_csv refuses: the writer refuses to append,
// and the file keeps what it had.
TEST_F(CsvFiles, AppendRefusesAFileWithOtherColumns) {
  const auto p = path("other.csv");
  {
    CsvWriter w(p, {"a", "b"}, false, {"an older run"});
    w.row({"1", "x"});
  }
  const std::string before = slurp(p);
  try {
    CsvWriter w(p, {"a", "b", "c"}, true);
    FAIL() << "appended under another header";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("its columns (a,b) are not these (a,b,c)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(p), before);
  // comments only (a run killed before its header): the header follows them
  const auto c = path("comments.csv");
  std::ofstream(c) << "# started\n";
  {
    CsvWriter w(c, {"a"}, true, {"not repeated"});
    w.row({"1"});
  }
  EXPECT_EQ(slurp(c), "# started\na\n1\n");
}

TEST_F(CsvFiles, AppendToMissingOrEmptyFileWritesHeader) {
  const auto missing = path("new.csv");
  {
    CsvWriter w(missing, {"a"}, true, {"c"});
    w.row({"1"});
  }
  EXPECT_EQ(slurp(missing), "# c\na\n1\n");
  const auto empty = path("empty.csv");
  std::ofstream(empty).close();
  ASSERT_TRUE(std::filesystem::exists(empty));
  {
    CsvWriter w(empty, {"a"}, true);
    w.row({"1"});
  }
  EXPECT_EQ(slurp(empty), "a\n1\n");
}

TEST_F(CsvFiles, NoAppendTruncates) {
  const auto p = path("trunc.csv");
  {
    CsvWriter w(p, {"a"}, false);
    w.row({"old"});
  }
  {
    CsvWriter w(p, {"a"}, false);
    w.row({"new"});
  }
  EXPECT_EQ(slurp(p), "a\nnew\n");
}

TEST_F(CsvFiles, UnwritablePathIsInputError) {
  EXPECT_THROW(CsvWriter((dir_ / "no" / "such" / "dir.csv").string(), {"a"}, false), InputError);
}

TEST_F(CsvFiles, ReadReturnsMapsAndSkipsComments) {
  const auto p = path("read.csv");
  {
    CsvWriter w(p, {"shape", "us", "detail"}, false, {"meta 1", "meta 2"});
    w.row({"64x64x64", "1.5", "ok"});
    w.row({"128x128x128", "", "a,b \"c\""});
  }
  const auto rows = read_csv(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].size(), 3u);
  EXPECT_EQ(rows[0].at("shape"), "64x64x64");
  EXPECT_EQ(rows[0].at("us"), "1.5");
  EXPECT_EQ(rows[0].at("detail"), "ok");
  EXPECT_EQ(rows[1].at("shape"), "128x128x128");
  EXPECT_EQ(rows[1].at("us"), "");
  EXPECT_EQ(rows[1].at("detail"), "a,b \"c\"");
}

TEST_F(CsvFiles, ReadHandWrittenFile) {
  const auto p = path("hand.csv");
  std::ofstream(p) << "# comment\n\nx,y\n1,2\n# mid comment\n\n3,\"4,5\"\n";
  const auto rows = read_csv(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("x"), "1");
  EXPECT_EQ(rows[0].at("y"), "2");
  EXPECT_EQ(rows[1].at("x"), "3");
  EXPECT_EQ(rows[1].at("y"), "4,5");
}

TEST_F(CsvFiles, ReadHeaderOnlyOrEmptyFileGivesNoRows) {
  const auto h = path("header.csv");
  std::ofstream(h) << "# c\na,b\n";
  EXPECT_TRUE(read_csv(h).empty());
  const auto e = path("empty.csv");
  std::ofstream(e).close();
  EXPECT_TRUE(read_csv(e).empty());
}

TEST_F(CsvFiles, ReadRejectsWrongFieldCountNamingFileAndLine) {
  const auto p = path("bad.csv");
  std::ofstream(p) << "# c\na,b\n1,2\n3,4,5\n";
  try {
    read_csv(p);
    FAIL() << "no error for a row with 3 fields under a 2-column header";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p + ":4"), std::string::npos) << msg;
  }
  const auto few = path("few.csv");
  std::ofstream(few) << "a,b,c\n1,2\n";
  EXPECT_THROW(read_csv(few), InputError);
}

TEST_F(CsvFiles, ReadRejectsUnterminatedQuote) {
  const auto p = path("quote.csv");
  std::ofstream(p) << "a,b\n1,\"2\n";
  EXPECT_THROW(read_csv(p), InputError);
}

TEST_F(CsvFiles, ReadMissingFileIsInputError) {
  const auto p = path("missing.csv");
  try {
    read_csv(p);
    FAIL() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cudal2

// Merged from core_test.cpp (one unit-test file per area); its own namespace keeps its
// helpers apart from this file's.
namespace cudal2 {
namespace core_csv_cases {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
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

}  // namespace core_csv_cases
}  // namespace cudal2
