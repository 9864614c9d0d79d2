#include "codegen/spec.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <map>
#include <sstream>
#include <tuple>

#include "codegen/family_cublaslt.hpp"
#include "codegen/family_wgmma.hpp"
#include "kernels/mma_plan.h"

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

constexpr std::string_view kSm90 = "sm90_cutlass", kMma = "mma", kTiny = "tiny";

// The fields each family's text has, in canonical order (runtime knobs last).
const std::vector<std::string>& family_fields(std::string_view family) {
  static const std::vector<std::string> sm90{"tile",   "cluster", "mainloop",      "epilogue", "scheduler",
                                             "stages", "raster",  "decomposition", "swizzle",  "splits"};
  static const std::vector<std::string> mma{"tile", "warps", "stages", "splits"};
  static const std::vector<std::string> tiny{"tile", "warps", "kwarps", "splits"};
  if (family == kCublasLtFamily) return cublaslt_fields();
  if (family == kWgmmaFamily) return wgmma_fields();
  return family == kMma ? mma : family == kTiny ? tiny : sm90;
}

bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// The runtime knobs mma and tiny take: splits only; the others must stay at their defaults.
std::string own_knobs_reason(const KernelSpec& s) {
  if (s.raster != Raster::Heuristic || s.swizzle != 1 || s.decomposition != Decomposition::Heuristic)
    return fmt::format("{} takes no raster, swizzle or decomposition knobs", s.family);
  return "";
}

std::string invalid_reason_sm90(const KernelSpec& s);

std::string invalid_reason_mma(const KernelSpec& s) {
  namespace plan = cudal2_plan;
  if (s.tile_m != 16 && s.tile_m != 32 && s.tile_m != 64 && s.tile_m != 128)
    return fmt::format("tile M {} not in {{16,32,64,128}}", s.tile_m);
  if (!is_pow2(s.tile_n) || s.tile_n < 16 || s.tile_n > 256)
    return fmt::format("tile N {} not in {{16,32,64,128,256}}", s.tile_n);
  if (s.tile_k != 32 && s.tile_k != 64) return fmt::format("tile K {} not in {{32,64}}", s.tile_k);
  if (!is_pow2(s.warps_m) || !is_pow2(s.warps_n) || s.warps_m * s.warps_n > 8)
    return fmt::format("warps {}x{}: powers of two, at most 8 warps", s.warps_m, s.warps_n);
  // ldmatrix.x4 feeds 16 rows of A and two n8 tiles of B: warp tiles in units of 16x16.
  const int wtm = s.tile_m / s.warps_m, wtn = s.tile_n / s.warps_n;
  if (wtm < 16 || wtn < 16) return fmt::format("warp tile {}x{} below 16x16", wtm, wtn);
  // fp32 accumulators of a 64x32 warp tile are 64 registers a thread; ptxas spilled 64x64 ones.
  if (plan::acc_floats_per_thread(wtm, wtn) > plan::kMaxAccFloats)
    return fmt::format("warp tile {}x{} over 64x32 elements (accumulator registers)", wtm, wtn);
  if (s.stages < 2 || s.stages > 8) return "stages must be 2..8";
  const int smem = plan::mma_smem_bytes(s.tile_m, s.tile_n, s.tile_k, s.stages, s.layout == Layout::TN);
  // 1 KB left for the kernel's static shared memory (the split-K flag, alignment).
  if (smem + 1024 > plan::kSmemBudget)
    return fmt::format("{} stages need {} KB of shared memory, over the 227 KB budget", s.stages, smem / 1024);
  if (auto why = own_knobs_reason(s); !why.empty()) return why;
  if (s.splits < 1 || s.splits > plan::kMaxSplits) return "splits must be 1..64";
  return "";
}

std::string invalid_reason_tiny(const KernelSpec& s) {
  namespace plan = cudal2_plan;
  if (!is_pow2(s.warps_m) || !is_pow2(s.warps_n) || !is_pow2(s.warps_k) || s.warps_m * s.warps_n * s.warps_k > 8)
    return fmt::format("warps {}x{} kwarps {}: powers of two, at most 8 warps", s.warps_m, s.warps_n, s.warps_k);
  if (s.tile_m % s.warps_m || s.tile_n % s.warps_n) return "tile not divisible by the warps";
  const int wtm = s.tile_m / s.warps_m, wtn = s.tile_n / s.warps_n;
  // Fragments come straight from global memory into registers: small warp tiles only.
  if (wtm != 16 && wtm != 32) return fmt::format("warp tile M {} not 16 or 32", wtm);
  if (wtn != 8 && wtn != 16 && wtn != 32) return fmt::format("warp tile N {} not 8, 16 or 32", wtn);
  // A k-block is 32 wide: one 16-byte load per row and lane feeds two k16 steps.
  if (s.tile_k != 32 && s.tile_k != 64 && s.tile_k != 128)
    return fmt::format("tile K {} not in {{32,64,128}}", s.tile_k);
  if (plan::tiny_fragment_regs(wtm, wtn, s.tile_k) > plan::kMaxTinyFragmentRegs)
    return fmt::format("tile K {} with a {}x{} warp tile: over {} fragment registers per k-block", s.tile_k, wtm, wtn,
                       plan::kMaxTinyFragmentRegs);
  if (plan::tiny_smem_bytes(s.tile_m, s.tile_n, s.warps_k) > plan::kStaticSmemBudget)
    return "kwarps reduction buffer over 48 KB of static shared memory";
  if (auto why = own_knobs_reason(s); !why.empty()) return why;
  if (s.splits != 1) return "tiny takes splits=1 only (K is split across a CTA's warps: kwarps)";
  return "";
}

// mma's warp layout for a CTA tile: about one 32x32 warp tile per 1024 outputs (at most 8
// warps), split between M and N to keep warp tiles square (ties: more warps along N).
std::pair<int, int> mma_warps_for(int bm, int bn) {
  const int nw = std::clamp(bm * bn / 1024, 1, 8);
  std::pair<int, int> best{0, 0};
  int best_skew = 1 << 30;
  for (int wm = 1; wm <= nw; wm *= 2) {
    const int wn = nw / wm, wtm = bm / wm, wtn = bn / wn;
    if (wtm < 16 || wtn < 16 || wtm % 16 || wtn % 16) continue;
    const int skew = std::abs(std::countr_zero(unsigned(wtm)) - std::countr_zero(unsigned(wtn)));
    if (skew < best_skew) best = {wm, wn}, best_skew = skew;
  }
  return best;
}

std::vector<KernelSpec> enumerate_mma(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int bm : {16, 32, 64, 128})
    for (int bn : {16, 32, 64, 128, 256})
      // Pipeline depth: skinny shapes stream one operand and are bound by the bytes in flight.
      for (auto [bk, stages] : std::vector<std::pair<int, int>>{{32, 4}, {64, 3}, {64, 5}}) {
        KernelSpec s = default_spec(kMma);
        s.layout = layout;
        s.accum = accum;
        s.tile_m = bm, s.tile_n = bn, s.tile_k = bk;
        std::tie(s.warps_m, s.warps_n) = mma_warps_for(bm, bn);
        s.stages = stages;
        if (!invalid_reason(s).empty()) continue;
        for (int sp : {1, 2, 4, 8, 16, 32}) {
          s.splits = sp;
          out.push_back(s);
          if (!with_runtime_knobs) break;
        }
      }
  return out;
}

std::vector<KernelSpec> enumerate_tiny(Layout layout, Accum accum) {
  std::vector<KernelSpec> out;
  const std::vector<std::tuple<int, int, int>> warps{{1, 1, 1}, {1, 1, 2}, {1, 1, 4}, {1, 1, 8}, {1, 2, 1}, {1, 2, 2},
                                                     {1, 2, 4}, {2, 1, 1}, {2, 1, 2}, {2, 1, 4}, {2, 2, 1}, {2, 2, 2}};
  for (auto [wtm, wtn] : std::vector<std::pair<int, int>>{{16, 16}, {16, 32}, {32, 16}, {32, 32}})
    for (auto [wm, wn, wk] : warps)
      for (int bk : {32, 64}) {
        KernelSpec s = default_spec(kTiny);
        s.layout = layout;
        s.accum = accum;
        s.tile_m = wtm * wm, s.tile_n = wtn * wn, s.tile_k = bk;
        s.warps_m = wm, s.warps_n = wn, s.warps_k = wk;
        if (invalid_reason(s).empty()) out.push_back(s);
      }
  return out;
}

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
  if (family == kWgmmaFamily) return wgmma_compile_text(*this);
  if (family == kCublasLtFamily) return cublaslt_compile_text(*this);
  if (family == kMma)
    return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} stages={}", family, to_string(layout), to_string(accum),
                       tile_m, tile_n, tile_k, warps_m, warps_n, stages);
  if (family == kTiny)
    return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} kwarps={}", family, to_string(layout), to_string(accum),
                       tile_m, tile_n, tile_k, warps_m, warps_n, warps_k);
  return fmt::format("{} {} {} tile={}x{}x{} cluster={}x{} mainloop={} epilogue={} scheduler={} stages={}", family,
                     to_string(layout), to_string(accum), tile_m, tile_n, tile_k, cluster_m, cluster_n,
                     to_string(mainloop), to_string(epilogue), to_string(scheduler),
                     stages ? std::to_string(stages) : "auto");
}

std::string KernelSpec::text() const {
  if (family == kWgmmaFamily) return wgmma_text(*this);
  if (family == kMma || family == kTiny || family == kCublasLtFamily)
    return fmt::format("{} | splits={}", compile_text(), splits);
  return fmt::format("{} | raster={} swizzle={} decomposition={} splits={}", compile_text(), to_string(raster), swizzle,
                     to_string(decomposition), splits);
}

std::string KernelSpec::hash() const { return fmt::format("{:016x}", fnv1a64(text())); }
std::string KernelSpec::compile_hash() const { return fmt::format("{:016x}", fnv1a64(compile_text())); }

std::vector<std::string> known_families() {
  return {std::string(kSm90), std::string(kMma), std::string(kTiny), std::string(kWgmmaFamily)};
}

KernelSpec default_spec(std::string_view family) {
  KernelSpec s;
  if (family == kSm90) return s;
  if (family == kWgmmaFamily) return default_wgmma_spec();
  s.family = std::string(family);
  s.tile_m = 64, s.tile_n = 64, s.tile_k = 32, s.warps_m = 2, s.warps_n = 2, s.stages = 3;
  if (family == kMma) return s;
  s.tile_m = 32, s.tile_n = 32, s.tile_k = 64, s.warps_m = 1, s.warps_n = 1, s.warps_k = 1, s.stages = 0;
  if (family == kTiny) return s;
  if (family == kCublasLtFamily) return default_cublaslt_spec();
  throw InputError(fmt::format("bad spec: unknown family '{}' (known: sm90_cutlass, mma, tiny)", family));
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
    const auto& fields = family_fields(s.family);
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string list;
      for (const auto& f : fields) list += (list.empty() ? "" : ", ") + f;
      throw InputError(fmt::format("bad spec: unknown field '{}' for family {} (its fields: {})", key, s.family, list));
    }
    if (seen[key]) throw InputError(fmt::format("bad spec: '{}' given twice", key));
    seen[key] = true;
    if (s.family == kCublasLtFamily && key != "splits") {
      parse_cublaslt_field(s, key, val);
      continue;
    }
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
    } else if (key == "mainloop") {
      s.mainloop = parse_enum(val, kMainloops, key);
    } else if (key == "epilogue") {
      s.epilogue = parse_enum(val, kEpilogues, key);
    } else if (key == "scheduler") {
      s.scheduler = parse_enum(val, kSchedulers, key);
    } else if (key == "stages") {
      s.stages = val == "auto" && s.family == kSm90 ? 0 : parse_int(val, key);
    } else if (key == "raster") {
      s.raster = parse_enum(val, kRasters, key);
    } else if (key == "swizzle") {
      s.swizzle = parse_int(val, key);
    } else if (key == "decomposition") {
      s.decomposition = parse_enum(val, kDecomps, key);
    } else if (key == "splits") {
      s.splits = val == "auto" && s.family == kWgmmaFamily ? 0 : parse_int(val, key);
    }
  }
  if (pos < 3)
    throw InputError(
        "bad spec: expected '<family> <nn|tn> <f32|f16> key=value ...' with family sm90_cutlass, mma or tiny");
  if (const auto why = invalid_reason(s); !why.empty()) throw InputError("invalid spec: " + why);
  return s;
}

int mainloop_smem_bytes(const KernelSpec& s, int stages) {
  // fp16 A and B tiles per stage, plus a pipeline barrier pair per stage.
  return stages * ((s.tile_m + s.tile_n) * s.tile_k * 2 + 16);
}

std::string invalid_reason(const KernelSpec& s) {
  if (s.family == kSm90) return invalid_reason_sm90(s);
  if (s.family == kMma) return invalid_reason_mma(s);
  if (s.family == kTiny) return invalid_reason_tiny(s);
  if (s.family == kWgmmaFamily) return invalid_reason_wgmma(s);
  if (s.family == kCublasLtFamily) return invalid_reason_cublaslt(s);
  return fmt::format("unknown family '{}'", s.family);
}

namespace {

std::string invalid_reason_sm90(const KernelSpec& s) {
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

}  // namespace

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

std::vector<KernelSpec> enumerate_specs(std::string_view family, Layout layout, Accum accum, bool with_runtime_knobs) {
  if (family == kSm90) return enumerate_sm90(layout, accum, with_runtime_knobs);
  if (family == kMma) return enumerate_mma(layout, accum, with_runtime_knobs);
  if (family == kTiny) return enumerate_tiny(layout, accum);
  if (family == kWgmmaFamily) return enumerate_wgmma(layout, accum, with_runtime_knobs);
  if (family == kCublasLtFamily)
    throw InputError(
        "the cublaslt family's space depends on the GPU and the shape: cublaslt_neighbourhood(), "
        "or `cudal2 lt-space --shape M,N,K`");
  throw InputError(fmt::format("unknown family '{}' (known: sm90_cutlass, mma, tiny)", family));
}

std::string shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (s.family == kWgmmaFamily) return wgmma_shape_refusal(s, shape);
  // cublaslt: cublasLtMatmulAlgoCheck decides, in the artifact's can_implement.
  if (s.family == kMma || s.family == kTiny || s.family == kCublasLtFamily)
    return "";  // any shape; unaligned ones on a checked path
  if (shape.k % 8 || shape.n % 8)
    return fmt::format("{} needs K and N to be multiples of 8 (16-byte rows for TMA); got {}", s.family, shape.str());
  return "";
}

}  // namespace cudal2
