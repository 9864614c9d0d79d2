#include "core/problem.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/input_file.hpp"

namespace cudal2 {

std::string_view to_string(Layout l) { return l == Layout::NN ? "nn" : "tn"; }
std::string_view to_string(Accum a) { return a == Accum::F32 ? "f32" : "f16"; }

Layout parse_layout(std::string_view s) {
  if (s == "nn" || s == "NN") return Layout::NN;
  if (s == "tn" || s == "TN") return Layout::TN;
  throw InputError(fmt::format("unknown layout '{}' (expected nn or tn)", s));
}

Accum parse_accum(std::string_view s) {
  if (s == "f32" || s == "fp32") return Accum::F32;
  if (s == "f16" || s == "fp16") return Accum::F16;
  throw InputError(fmt::format("unknown accumulator '{}' (expected f32 or f16)", s));
}

std::string Shape::str() const { return fmt::format("{}x{}x{}", m, n, k); }

namespace {

std::string_view trim(std::string_view s) {
  const auto ws = " \t\r\n";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

int64_t parse_dim(std::string_view field, char name, std::string_view whole) {
  field = trim(field);
  if (field.empty()) throw InputError(fmt::format("bad shape '{}': {} is empty", whole, name));
  int64_t v = 0;
  const auto* first = field.data();
  const auto* last = field.data() + field.size();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range)
    throw InputError(fmt::format("bad shape '{}': {}={} is too large (max {})", whole, name, excerpt(field), kMaxDim));
  if (ec != std::errc() || ptr != last)
    throw InputError(fmt::format("bad shape '{}': {}='{}' is not a whole number", whole, name, excerpt(field)));
  if (v <= 0) throw InputError(fmt::format("bad shape '{}': {}={} must be positive", whole, name, v));
  if (v > kMaxDim)
    throw InputError(fmt::format("bad shape '{}': {}={} is too large (max {})", whole, name, v, kMaxDim));
  return v;
}

}  // namespace

Shape parse_shape(std::string_view text) {
  // What messages show of the text: a bad line may be megabytes long.
  const std::string shown = excerpt(trim(text));
  const std::string_view whole = shown;
  std::string norm(trim(text));
  if (norm.find(',') == std::string::npos) {  // "MxNxK" form
    std::replace(norm.begin(), norm.end(), 'x', ',');
    std::replace(norm.begin(), norm.end(), 'X', ',');
  }
  std::vector<std::string_view> parts;
  std::string_view rest = norm;
  while (true) {
    const auto pos = rest.find(',');
    parts.push_back(rest.substr(0, pos));
    if (pos == std::string_view::npos) break;
    rest = rest.substr(pos + 1);
  }
  if (parts.size() != 3)
    throw InputError(fmt::format("bad shape '{}': expected M,N,K (three sizes), got {} field(s)", whole, parts.size()));
  return Shape{parse_dim(parts[0], 'M', whole), parse_dim(parts[1], 'N', whole), parse_dim(parts[2], 'K', whole)};
}

std::vector<ListedLine> listed_lines(std::string_view text) {
  std::vector<ListedLine> out;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view l = line;
    if (const auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    l = trim(l);
    if (!l.empty()) out.push_back({number, std::string(l)});
  }
  return out;
}

std::vector<Shape> parse_shapes_text(std::string_view text, const std::string& origin) {
  std::vector<Shape> out;
  for (const auto& l : listed_lines(text)) {
    try {
      out.push_back(parse_shape(l.text));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: {}", origin, l.number, e.what()));
    }
  }
  return out;
}

std::vector<Shape> read_shapes_file(const std::string& path) {
  auto shapes = parse_shapes_text(read_input_file(path, "shapes file"), path);
  if (shapes.empty()) throw InputError(fmt::format("shapes file '{}' holds no shapes", path));
  return shapes;
}

const std::vector<int64_t>& paper_sizes() {
  static const std::vector<int64_t> s{64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384};
  return s;
}

std::vector<Shape> grid(std::string_view name) {
  if (name == "paper") {
    std::vector<Shape> out;
    for (auto m : paper_sizes())
      for (auto n : paper_sizes())
        for (auto k : paper_sizes()) out.push_back({m, n, k});
    return out;
  }
  if (name == "sample") {
    // 16 shapes from the paper's grid, chosen to span its regimes (docs/grids.md):
    // tiny (launch-bound), small with deep K (split-K land), skinny both ways,
    // mid squares, and the large/huge compute-bound end.
    return {
        {64, 64, 64},       {128, 128, 128},    {256, 256, 256},     {512, 512, 512},
        {1024, 1024, 1024}, {64, 64, 16384},    {256, 256, 8192},    {64, 4096, 4096},
        {4096, 64, 4096},   {128, 16384, 1024}, {16384, 256, 12288}, {2048, 2048, 2048},
        {4096, 4096, 4096}, {16384, 4096, 512}, {8192, 8192, 8192},  {16384, 16384, 16384},
    };
  }
  throw InputError(fmt::format("unknown grid '{}' (expected paper or sample)", name));
}

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  auto bad = [&] { return InputError(fmt::format("bad shard '{}': expected I/N with 0 <= I < N", text)); };
  if (slash == std::string_view::npos) throw bad();
  Shard s;
  auto a = text.substr(0, slash), b = text.substr(slash + 1);
  auto [p1, e1] = std::from_chars(a.data(), a.data() + a.size(), s.index);
  auto [p2, e2] = std::from_chars(b.data(), b.data() + b.size(), s.count);
  if (e1 != std::errc() || e2 != std::errc() || p1 != a.data() + a.size() || p2 != b.data() + b.size()) throw bad();
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

std::vector<Shape> apply_shard(const std::vector<Shape>& shapes, Shard shard) {
  std::vector<Shape> out;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) == shard.index) out.push_back(shapes[i]);
  return out;
}

std::vector<Shape> unique_shapes(const std::vector<Shape>& shapes) {
  std::vector<Shape> out;
  for (const auto& s : shapes)
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

}  // namespace cudal2
