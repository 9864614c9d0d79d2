#include "codegen/spec.hpp"

#include <fmt/format.h>
#include <array>
#include <charconv>
#include <map>
#include <sstream>

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

int parse_int(std::string_view v, std::string_view field) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size())
    throw InputError(fmt::format("bad spec: {}='{}' is not a whole number", field, v));
  return x;
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

constexpr int kSmemBudget = 227 * 1024;  // H100 max dynamic shared memory per block

}  // namespace

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

std::string KernelSpec::compile_text() const {
  return fmt::format("{} {} {} tile={}x{}x{} cluster={}x{} mainloop={} epilogue={} scheduler={} stages={}", family,
                     to_string(layout), to_string(accum), tile_m, tile_n, tile_k, cluster_m, cluster_n,
                     to_string(mainloop), to_string(epilogue), to_string(scheduler),
                     stages ? std::to_string(stages) : "auto");
}

std::string KernelSpec::text() const {
  return fmt::format("{} | raster={} swizzle={} decomposition={} splits={}", compile_text(), to_string(raster), swizzle,
                     to_string(decomposition), splits);
}

std::string KernelSpec::hash() const { return fmt::format("{:016x}", fnv1a64(text())); }
std::string KernelSpec::compile_hash() const { return fmt::format("{:016x}", fnv1a64(compile_text())); }

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
        if (tok != "sm90_cutlass")
          throw InputError(fmt::format("bad spec: unknown family '{}' (known: sm90_cutlass)", tok));
        s.family = tok;
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
    const std::string key = tok.substr(0, eq);
    const std::string_view val = std::string_view(tok).substr(eq + 1);
    if (seen[key]) throw InputError(fmt::format("bad spec: '{}' given twice", key));
    seen[key] = true;
    if (key == "tile") {
      const auto d = parse_dims(val, 3, key);
      s.tile_m = d[0], s.tile_n = d[1], s.tile_k = d[2];
    } else if (key == "cluster") {
      const auto d = parse_dims(val, 2, key);
      s.cluster_m = d[0], s.cluster_n = d[1];
    } else if (key == "mainloop") {
      s.mainloop = parse_enum(val, kMainloops, key);
    } else if (key == "epilogue") {
      s.epilogue = parse_enum(val, kEpilogues, key);
    } else if (key == "scheduler") {
      s.scheduler = parse_enum(val, kSchedulers, key);
    } else if (key == "stages") {
      s.stages = val == "auto" ? 0 : parse_int(val, key);
    } else if (key == "raster") {
      s.raster = parse_enum(val, kRasters, key);
    } else if (key == "swizzle") {
      s.swizzle = parse_int(val, key);
    } else if (key == "decomposition") {
      s.decomposition = parse_enum(val, kDecomps, key);
    } else if (key == "splits") {
      s.splits = parse_int(val, key);
    } else {
      throw InputError(fmt::format("bad spec: unknown field '{}'", key));
    }
  }
  if (pos < 3) throw InputError("bad spec: expected 'sm90_cutlass <nn|tn> <f32|f16> key=value ...'");
  if (const auto why = invalid_reason(s); !why.empty()) throw InputError("invalid spec: " + why);
  return s;
}

int mainloop_smem_bytes(const KernelSpec& s, int stages) {
  // fp16 A and B tiles per stage, plus a pipeline barrier pair per stage.
  return stages * ((s.tile_m + s.tile_n) * s.tile_k * 2 + 16);
}

std::string invalid_reason(const KernelSpec& s) {
  if (s.family != "sm90_cutlass") return "unknown family";
  // WGMMA: M in units of 64 per warpgroup, N a multiple of 8 up to 256 (16 for our tiles);
  // K: 16 per instruction, 64 fp16 = one 128-byte swizzle row.
  if (s.tile_m != 64 && s.tile_m != 128 && s.tile_m != 256)
    return fmt::format("tile M {} not in {{64,128,256}}", s.tile_m);
  if (s.tile_n < 16 || s.tile_n > 256 || s.tile_n % 16)
    return fmt::format("tile N {} not a multiple of 16 in 16..256", s.tile_n);
  if (s.tile_k != 32 && s.tile_k != 64 && s.tile_k != 128)
    return fmt::format("tile K {} not in {{32,64,128}}", s.tile_k);
  if (s.cluster_m < 1 || s.cluster_n < 1 || s.cluster_m * s.cluster_n > 4 || (s.cluster_m & (s.cluster_m - 1)) ||
      (s.cluster_n & (s.cluster_n - 1)))
    return fmt::format("cluster {}x{} not one of 1x1, 2x1, 1x2, 2x2, 4x1, 1x4", s.cluster_m, s.cluster_n);
  // Cooperative splits the tile's M between two consumer warpgroups of 64 rows each.
  if (s.mainloop == Mainloop::Cooperative && s.tile_m < 128) return "cooperative mainloop needs tile M >= 128";
  // One consumer warpgroup holds the whole accumulator: 64xN or 128xN fp32 fits its registers.
  if (s.mainloop != Mainloop::Cooperative && s.tile_m == 256) return "tile M 256 needs the cooperative mainloop";
  if (s.mainloop != Mainloop::Cooperative && s.tile_m * s.tile_n > 128 * 256)
    return "accumulator tile too large for one warpgroup";
  if (s.scheduler == Scheduler::StreamK && s.mainloop != Mainloop::Cooperative)
    return "the stream-K scheduler needs the cooperative mainloop";
  if (s.epilogue == Epilogue::NoSmem && s.mainloop == Mainloop::Pingpong)
    return "nosmem epilogue with pingpong not used";
  if (s.stages != 0 && (s.stages < 2 || s.stages > 8)) return "stages must be auto or 2..8";
  const int stages = s.stages ? s.stages : 2;
  // Leave ~32 KB for the epilogue's staging buffer (TMA epilogue).
  const int epi = s.epilogue == Epilogue::Tma ? 32 * 1024 : 0;
  if (mainloop_smem_bytes(s, stages) + epi > kSmemBudget)
    return fmt::format("{} stage(s) need {} KB of shared memory, over the 227 KB budget", stages,
                       (mainloop_smem_bytes(s, stages) + epi) / 1024);
  if (s.swizzle != 1 && s.swizzle != 2 && s.swizzle != 4 && s.swizzle != 8) return "swizzle must be 1, 2, 4 or 8";
  if (s.splits < 1 || s.splits > 32) return "splits must be 1..32";
  if (s.scheduler != Scheduler::StreamK && (s.splits != 1 || s.decomposition != Decomposition::Heuristic))
    return "decomposition and splits need the stream-K scheduler";
  if (s.decomposition == Decomposition::SplitK && s.splits < 2) return "split-K decomposition needs splits >= 2";
  if (s.decomposition != Decomposition::SplitK && s.splits != 1) return "splits > 1 only with split-K decomposition";
  return "";
}

std::vector<KernelSpec> enumerate_sm90(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int tm : {64, 128, 256})
    for (int tn : {16, 32, 64, 128, 192, 256})
      for (int tk : {64, 128})
        for (auto [cm, cn] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}})
          for (auto ml : {Mainloop::WarpSpecialized, Mainloop::Cooperative, Mainloop::Pingpong})
            for (auto sc : {Scheduler::Persistent, Scheduler::StreamK}) {
              KernelSpec s;
              s.layout = layout;
              s.accum = accum;
              s.tile_m = tm, s.tile_n = tn, s.tile_k = tk;
              s.cluster_m = cm, s.cluster_n = cn;
              s.mainloop = ml;
              s.scheduler = sc;
              if (!invalid_reason(s).empty()) continue;
              if (!with_runtime_knobs) {
                out.push_back(s);
                continue;
              }
              for (int sw : {1, 2, 4, 8})
                for (auto r : {Raster::Heuristic, Raster::AlongM, Raster::AlongN}) {
                  s.swizzle = sw;
                  s.raster = r;
                  if (sc == Scheduler::Persistent) {
                    out.push_back(s);
                    continue;
                  }
                  for (auto d : {Decomposition::Heuristic, Decomposition::DataParallel, Decomposition::StreamK}) {
                    s.decomposition = d;
                    s.splits = 1;
                    out.push_back(s);
                  }
                  for (int sp : {2, 3, 4, 8}) {
                    s.decomposition = Decomposition::SplitK;
                    s.splits = sp;
                    out.push_back(s);
                  }
                  s.decomposition = Decomposition::Heuristic;
                  s.splits = 1;
                }
            }
  return out;
}

std::string shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (shape.k % 8 || shape.n % 8)
    return fmt::format("{} needs K and N to be multiples of 8 (16-byte rows for TMA); got {}", s.family, shape.str());
  return "";
}

}  // namespace cudal2
