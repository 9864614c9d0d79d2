#include "codegen/spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <sstream>

#include "codegen/family.hpp"

namespace cudal2 {

namespace {

template <class E, size_t N>
E parse_enum(std::string_view v, const std::array<std::pair<std::string_view, E>, N>& names, std::string_view field) {
  for (const auto& [n, e] : names)
    if (n == v) return e;
  std::string known;
  for (const auto& [n, e] : names) known += (known.empty() ? "" : ", ") + std::string(n);
  throw InputError(fmt::format("bad spec: {}='{}' (expected one of {})", field, v, known));
}

constexpr std::array<std::pair<std::string_view, Mainloop>, 3> kMainloops{
    {{"warpspecialized", Mainloop::WarpSpecialized},
     {"cooperative", Mainloop::Cooperative},
     {"pingpong", Mainloop::Pingpong}}};
constexpr std::array<std::pair<std::string_view, Epilogue>, 2> kEpilogues{
    {{"tma", Epilogue::Tma}, {"nosmem", Epilogue::NoSmem}}};
constexpr std::array<std::pair<std::string_view, Scheduler>, 2> kSchedulers{
    {{"persistent", Scheduler::Persistent}, {"streamk", Scheduler::StreamK}}};
constexpr std::array<std::pair<std::string_view, Raster>, 3> kRasters{
    {{"heuristic", Raster::Heuristic}, {"along_m", Raster::AlongM}, {"along_n", Raster::AlongN}}};
constexpr std::array<std::pair<std::string_view, Decomposition>, 4> kDecomps{
    {{"heuristic", Decomposition::Heuristic},
     {"dataparallel", Decomposition::DataParallel},
     {"splitk", Decomposition::SplitK},
     {"streamk", Decomposition::StreamK}}};

template <class E, size_t N>
std::string_view name_of(E e, const std::array<std::pair<std::string_view, E>, N>& names) {
  for (const auto& [n, v] : names)
    if (v == e) return n;
  return "?";
}

}  // namespace

std::optional<int> whole_number(std::string_view v) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return x;
}

int parse_int(std::string_view v, std::string_view field) {
  if (const auto x = whole_number(v)) return *x;
  throw InputError(fmt::format("bad spec: {}='{}' is not a whole number", field, v));
}

std::vector<int> parse_dims(std::string_view v, size_t count, std::string_view field) {
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    const auto x = v.find('x', start);
    out.push_back(parse_int(v.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start), field));
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  if (out.size() != count) throw InputError(fmt::format("bad spec: {}='{}' needs {} sizes", field, v, count));
  return out;
}

void parse_common_field(KernelSpec& s, std::string_view key, std::string_view val) {
  if (key == "tile") {
    const auto d = parse_dims(val, 3, key);
    s.tile_m = d[0], s.tile_n = d[1], s.tile_k = d[2];
  } else if (key == "cluster") {
    const auto d = parse_dims(val, 2, key);
    s.cluster_m = d[0], s.cluster_n = d[1];
  } else if (key == "warps") {
    const auto d = parse_dims(val, 2, key);
    s.warps_m = d[0], s.warps_n = d[1];
  } else if (key == "kwarps") {
    s.warps_k = parse_int(val, key);
  } else if (key == "ctas") {
    s.min_ctas = parse_int(val, key);
  } else if (key == "ahead") {
    s.prefetch_ahead = parse_int(val, key);
  } else if (key == "pdl") {
    s.pdl_mode = parse_int(val, key);
  } else if (key == "order") {
    s.split_order = parse_int(val, key);
  } else if (key == "pipe") {
    s.pipelined = parse_int(val, key);
  } else if (key == "keep") {
    s.l2_keep = parse_int(val, key);
  } else if (key == "mainloop") {
    s.mainloop = parse_enum(val, kMainloops, key);
  } else if (key == "epilogue") {
    s.epilogue = parse_enum(val, kEpilogues, key);
  } else if (key == "scheduler") {
    s.scheduler = parse_enum(val, kSchedulers, key);
  } else if (key == "stages") {
    s.stages = parse_int(val, key);
  } else if (key == "raster") {
    s.raster = parse_enum(val, kRasters, key);
  } else if (key == "swizzle") {
    s.swizzle = parse_int(val, key);
  } else if (key == "decomposition") {
    s.decomposition = parse_enum(val, kDecomps, key);
  } else if (key == "splits") {
    s.splits = parse_int(val, key);
  }
}

bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

std::string splits_only_knobs_reason(const KernelSpec& s) {
  if (s.raster != Raster::Heuristic || s.swizzle != 1 || s.decomposition != Decomposition::Heuristic)
    return fmt::format("{} takes no raster, swizzle or decomposition knobs", s.family);
  return "";
}

std::string splits_only_text(const KernelSpec& s) { return fmt::format("{} | splits={}", s.compile_text(), s.splits); }

std::string_view to_string(Mainloop v) { return name_of(v, kMainloops); }
std::string_view to_string(Epilogue v) { return name_of(v, kEpilogues); }
std::string_view to_string(Scheduler v) { return name_of(v, kSchedulers); }
std::string_view to_string(Raster v) { return name_of(v, kRasters); }
std::string_view to_string(Decomposition v) { return name_of(v, kDecomps); }

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string KernelSpec::compile_text() const { return family_of(*this).compile_text(*this); }

std::string KernelSpec::text() const { return family_of(*this).text(*this); }

std::string KernelSpec::hash() const { return fmt::format("{:016x}", fnv1a64(text())); }
std::string KernelSpec::compile_hash() const { return fmt::format("{:016x}", fnv1a64(compile_text())); }

std::vector<std::string> known_families() {
  std::vector<std::string> out;
  for (const Family* f : all_families())
    if (f->listed) out.emplace_back(f->name);
  return out;
}

KernelSpec default_spec(std::string_view family) {
  if (const Family* f = find_family(family)) return f->default_spec();
  throw InputError(
      fmt::format("bad spec: unknown family '{}' (known: {}, cublaslt)", family, fmt::join(known_families(), ", ")));
}

KernelSpec parse_spec(std::string_view text) {
  KernelSpec s;
  std::istringstream in{std::string(text)};
  std::string tok;
  int pos = 0;
  std::map<std::string, bool> seen;
  while (in >> tok) {
    if (tok == "|") continue;
    const auto eq = tok.find('=');
    if (eq == std::string::npos) {
      // positional: family, layout, accumulator
      if (pos == 0) {
        s = default_spec(tok);
      } else if (pos == 1) {
        s.layout = parse_layout(tok);
      } else if (pos == 2) {
        s.accum = parse_accum(tok);
      } else {
        throw InputError(fmt::format("bad spec: unexpected word '{}'", tok));
      }
      ++pos;
      continue;
    }
    if (pos < 3) break;  // key=value before the family, layout and accumulator
    const std::string key = tok.substr(0, eq);
    const std::string_view val = std::string_view(tok).substr(eq + 1);
    const Family& family = family_of(s);  // known: default_spec threw for an unknown family
    const auto& fields = family.fields();
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string list;
      for (const auto& f : fields) list += (list.empty() ? "" : ", ") + f;
      throw InputError(fmt::format("bad spec: unknown field '{}' for family {} (its fields: {})", key, s.family, list));
    }
    if (seen[key]) throw InputError(fmt::format("bad spec: '{}' given twice", key));
    seen[key] = true;
    family.parse_field(s, key, val);
  }
  if (pos < 3)
    throw InputError(
        "bad spec: expected '<family> <nn|tn> <f32|f16> key=value ...' with family sm90_cutlass, mma or tiny");
  if (const auto why = invalid_reason(s); !why.empty()) throw InputError("invalid spec: " + why);
  return s;
}

std::string invalid_reason(const KernelSpec& s) {
  if (const Family* f = find_family(s.family)) return f->invalid_reason(s);
  return fmt::format("unknown family '{}'", s.family);
}

std::vector<KernelSpec> enumerate_specs(std::string_view family, Layout layout, Accum accum, bool with_runtime_knobs) {
  if (const Family* f = find_family(family)) return f->enumerate(layout, accum, with_runtime_knobs);
  throw InputError(fmt::format("unknown family '{}' (known: {})", family, fmt::join(known_families(), ", ")));
}

std::string shape_refusal(const KernelSpec& s, const Shape& shape) { return family_of(s).shape_refusal(s, shape); }

}  // namespace cudal2
