// Family stream: our weight-streaming kernel for bandwidth-bound problems (decode and small
// batch: few tokens M against a wide B; src/kernels/stream_gemm.cuh): swap-AB mma.sync with B
// straight from global memory into registers, K split across a CTA's warps (kwarps) and across
// CTAs (splits, a runtime knob up to 64) with one in-launch, split-ordered reduction; PDL; runs
// any shape.
//   "stream tn f32 tile=8x64x64 warps=1x2 kwarps=4 stages=2 | splits=8"
// tile = tokens (8 x token tiles) x B rows per CTA (16 x row tiles x warps) x 64 (the K stage);
// warps = 1 x warps along B's rows; kwarps = warps along K; stages = K stages in flight per warp;
// ctas (written when not 1) = CTAs an SM must hold at once, which caps a thread's registers so
// that more warps stream at once; ahead (written when not 0) = stages each warp asks L2 to fetch
// ahead of the one it loads; pdl (written when not 1) = when the next kernel may launch: 1 once
// every CTA has started, 2 once every CTA has left its mainloop, 0 without PDL; order (written
// when not 0) = how splits share K: 0 contiguous ranges, 1 interleaved stages:
//   "stream tn f32 tile=8x32x64 warps=1x2 kwarps=4 stages=1 ctas=4 ahead=2 pdl=2 order=1 | splits=4"
// A tile K over 64 selects the bulk pipeline (src/kernels/stream_bulk_gemm.cuh, TN): TMA boxes
// stream stages of tile N (16, 32, 64) rows x tile K into a shared-memory ring `stages` deep, kwarps =
// tile K / 64 consumer warps multiply them, each CTA takes a contiguous share of every tile's K
// chunks; the split knob is the CTAs per SM (each its own producer and ring).
//   "stream tn f32 tile=8x64x256 warps=1x1 kwarps=4 stages=5"
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "kernels/stream_plan.h"

namespace cudal2 {

namespace {

namespace plan = cudal2_stream_plan;

// Register budget of a thread (of 255) for the stages in flight and the accumulators; ptxas
// gets the rest for addresses.
constexpr int kMaxStreamRegs = 200;
// Registers besides the stages and accumulators (addresses, indices, the loop): measured with
// ptxas -v on configurations compiled for 2-4 CTAs an SM, where ptxas keeps them tight.
constexpr int kStreamOverheadRegs = 16;

const std::vector<std::string>& stream_fields() {
  static const std::vector<std::string> f{"tile",  "warps", "kwarps", "stages", "ctas",
                                          "ahead", "pdl",   "order",  "splits"};
  return f;
}

KernelSpec stream_default_spec() {
  KernelSpec s;
  s.family = "stream";
  s.tile_m = 8, s.tile_n = 64, s.tile_k = plan::kStageK, s.warps_m = 1, s.warps_n = 2, s.warps_k = 4, s.stages = 2;
  return s;
}

// ctas=1, ahead=0, pdl=1 and order=0 are left out, so that the texts (and hashes) of every kernel
// measured before those fields existed stay what they were.
std::string stream_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{} warps={}x{} kwarps={} stages={}{}{}{}{}", s.family, to_string(s.layout),
                     to_string(s.accum), s.tile_m, s.tile_n, s.tile_k, s.warps_m, s.warps_n, s.warps_k, s.stages,
                     s.min_ctas == 1 ? std::string() : fmt::format(" ctas={}", s.min_ctas),
                     s.prefetch_ahead == 0 ? std::string() : fmt::format(" ahead={}", s.prefetch_ahead),
                     s.pdl_mode == 1 ? std::string() : fmt::format(" pdl={}", s.pdl_mode),
                     s.split_order == 0 ? std::string() : fmt::format(" order={}", s.split_order));
}

// Row tiles (16 rows of B) each warp covers; 0 when the tile does not divide.
int row_tiles(const KernelSpec& s) {
  return s.warps_n > 0 && s.tile_n % (16 * s.warps_n) == 0 ? s.tile_n / (16 * s.warps_n) : 0;
}

// Registers one stage in flight holds: B's 64 K-elements of the warp's rows (2 bytes each, 16
// rows a tile, over 32 lanes) and the tokens' (8 per token tile).
int stage_regs(const KernelSpec& s) { return 16 * row_tiles(s) + 8 * (s.tile_m / 8); }

bool is_bulk(const KernelSpec& s) { return s.tile_k > plan::kStageK; }

// The bulk pipeline's shared memory: the ring (per stage, tile K / 64 boxes of B's 64 rows and of
// the tokens, 128 bytes a row), the consumers' reduction, the barriers and the ring's 1024-byte
// alignment (src/kernels/stream_bulk_gemm.cuh, Config::kSmem).
int bulk_smem_bytes(const KernelSpec& s) {
  const int consumers = s.tile_k / plan::kStageK;
  const int red = (consumers > 1 ? consumers - 1 : 1) * (s.tile_n / 16) * (s.tile_m / 8) * 32 * 16;
  return s.stages * consumers * (s.tile_n + s.tile_m) * 128 + red + 16 * s.stages + 1024;
}

std::string invalid_reason_bulk(const KernelSpec& s) {
  if (s.layout != Layout::TN) return "stream bulk (tile K over 64): tn only";
  if (s.min_ctas != 1 || s.prefetch_ahead != 0 || s.pdl_mode != 1 || s.split_order != 0)
    return "stream bulk: ctas, ahead, pdl and order are the register kernel's (the bulk pipeline's CTAs per SM are "
           "splits)";
  if (s.tile_k % plan::kStageK || s.tile_k > 8 * plan::kStageK)
    return fmt::format("tile K {}: a multiple of {} up to {}", s.tile_k, plan::kStageK, 8 * plan::kStageK);
  // 64 tokens' accumulators and fragments spill (255 registers, measured with ptxas).
  if (s.tile_m != 8 && s.tile_m != 16 && s.tile_m != 32) return fmt::format("tile M {} not one of 8, 16, 32", s.tile_m);
  if ((s.tile_n != 16 && s.tile_n != 32 && s.tile_n != 64) || s.warps_m != 1 || s.warps_n != 1)
    return "stream bulk: tile N 16, 32 or 64 and warps 1x1";
  if (s.warps_k != s.tile_k / plan::kStageK)
    return fmt::format("stream bulk: kwarps {} must be tile K / {} = {}", s.warps_k, plan::kStageK,
                       s.tile_k / plan::kStageK);
  if (s.stages < 2 || s.stages > 12) return fmt::format("stages {} not in 2..12", s.stages);
  if (const int b = bulk_smem_bytes(s); b > 227 * 1024)
    return fmt::format("{} stages take {} bytes of shared memory, over 227 KB", s.stages, b);
  // splits: CTAs per SM, each with its own ring (1 KB of every CTA's shared memory is the system's).
  if (s.splits < 1 || s.splits > 4) return fmt::format("stream bulk: splits (CTAs per SM) {} not in 1..4", s.splits);
  if (const int b = s.splits * (bulk_smem_bytes(s) + 1024); b > 228 * 1024)
    return fmt::format("{} CTAs per SM take {} bytes of shared memory, over an SM's 228 KB", s.splits, b);
  return splits_only_knobs_reason(s);
}

std::string invalid_reason_stream(const KernelSpec& s) {
  if (is_bulk(s)) return invalid_reason_bulk(s);
  if (s.tile_k != plan::kStageK) return fmt::format("tile K {} is not the stage's {}", s.tile_k, plan::kStageK);
  if (s.tile_m % 8 || s.tile_m < 8 || s.tile_m > 64)
    return fmt::format("tile M {} not a multiple of 8 in 8..64", s.tile_m);
  if (s.warps_m != 1) return "stream: warps must be 1xR (warps along B's rows only)";
  if (!is_pow2(s.warps_n) || !is_pow2(s.warps_k) || s.warps_n * s.warps_k > 16)
    return fmt::format("warps 1x{} kwarps {}: powers of two, at most 16 warps", s.warps_n, s.warps_k);
  const int mt = row_tiles(s);
  if (mt < 1 || mt > 4)
    return fmt::format("tile N {} over {} warps: not 16, 32, 48 or 64 rows a warp", s.tile_n, s.warps_n);
  if (s.layout == Layout::NN && mt != 2 && mt != 4) return "stream nn: 32 or 64 rows a warp (8- or 16-byte loads of B)";
  if (s.stages < 1 || s.stages > 6) return fmt::format("stages {} not in 1..6", s.stages);
  const int regs = s.stages * stage_regs(s) + 4 * mt * (s.tile_m / 8);
  if (regs > kMaxStreamRegs)
    return fmt::format("{} stages and the accumulators hold {} registers, over {}", s.stages, regs, kMaxStreamRegs);
  if (s.prefetch_ahead < 0 || s.prefetch_ahead > 8) return fmt::format("ahead {} not in 0..8", s.prefetch_ahead);
  if (s.pdl_mode < 0 || s.pdl_mode > 2) return fmt::format("pdl {} not 0, 1 or 2", s.pdl_mode);
  if (s.split_order != 0 && s.split_order != 1) return fmt::format("order {} not 0 or 1", s.split_order);
  const int threads = 32 * s.warps_n * s.warps_k;
  if (s.min_ctas < 1 || s.min_ctas * threads > 2048)
    return fmt::format("ctas {} not in 1..{} ({} threads a CTA, 2048 an SM)", s.min_ctas, 2048 / threads, threads);
  // What ptxas may give a thread when an SM holds min_ctas CTAs (in units of 8), against the
  // stages' and accumulators' registers plus the addresses and loop state (kStreamOverheadRegs):
  // a configuration that would spill its ring to local memory is not one.
  if (s.min_ctas > 1) {
    const int cap = std::min(255, 65536 / (threads * s.min_ctas) / 8 * 8);
    if (regs + kStreamOverheadRegs > cap)
      return fmt::format("{} CTAs an SM leave {} registers a thread, under the {} the stages need", s.min_ctas, cap,
                         regs + kStreamOverheadRegs);
  }
  const int red = (s.warps_k > 1 ? s.warps_k - 1 : 1) * s.warps_n * mt * (s.tile_m / 8) * 32 * 16;
  if (red > 48 * 1024) return "k-warp reduction over 48 KB of shared memory";
  if (s.splits < 1 || s.splits > plan::kMaxSplits)
    return fmt::format("splits {} not in 1..{}", s.splits, plan::kMaxSplits);
  return splits_only_knobs_reason(s);
}

// Token tiles 1, 2, 4, 8 x rows per warp x warps (1..8 along rows, 1..8 along K, at most 16) x
// stages 1..4 x CTAs an SM 1..4 where the registers allow x 0 or 4 stages fetched ahead x split order 0 or 1, x
// split counts {1, 2, 4, 8, 16, 32} with knobs (order 1 only where it splits).
std::vector<KernelSpec> enumerate_stream(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  for (int toks : {8, 16, 32, 64})
    for (int mt : {1, 2, 4})
      for (int wr : {1, 2, 4, 8})
        for (int wk : {1, 2, 4, 8})
          for (int stages : {1, 2, 3, 4}) {
            KernelSpec s = stream_default_spec();
            s.layout = layout, s.accum = accum;
            s.tile_m = toks, s.tile_n = 16 * mt * wr, s.warps_n = wr, s.warps_k = wk, s.stages = stages;
            for (int ctas : {1, 2, 3, 4})
              for (int ahead : {0, 4})
                for (int order : {0, 1}) {
                  s.min_ctas = ctas, s.prefetch_ahead = ahead, s.split_order = order;
                  if (!invalid_reason_stream(s).empty()) continue;
                  for (int sp : {1, 2, 4, 8, 16, 32}) {
                    if (order == 1 && sp == 1 && with_runtime_knobs) continue;  // the same kernel as order 0
                    s.splits = sp;
                    out.push_back(s);
                    if (!with_runtime_knobs) break;
                  }
                }
          }
  // The bulk pipeline: tokens x rows x stage K x ring depth where shared memory holds it.
  for (int toks : {8, 16, 32})
    for (int rows : {16, 32, 64})
      for (int tk : {128, 256, 512})
        for (int stages : {3, 4, 5, 6, 8}) {
          KernelSpec s = stream_default_spec();
          s.layout = layout, s.accum = accum;
          s.tile_m = toks, s.tile_n = rows, s.tile_k = tk, s.warps_n = 1, s.warps_k = tk / plan::kStageK,
          s.stages = stages;
          for (int ctas : {1, 2, 3}) {
            s.splits = ctas;
            if (invalid_reason_stream(s).empty()) out.push_back(s);
            if (!with_runtime_knobs) break;
          }
        }
  return out;
}

std::string stream_shape_refusal(const KernelSpec&, const Shape&) { return ""; }  // any shape

// The configuration as template arguments of cudal2_stream::Config (src/kernels/stream_gemm.cuh),
// or of cudal2_stream_bulk::Config (src/kernels/stream_bulk_gemm.cuh).
std::string generate_stream_source(const KernelSpec& s) {
  if (is_bulk(s))
    return type_source(stream_compile_text(s), "stream_bulk_gemm.cuh",
                       fmt::format("cudal2_stream_bulk::Gemm<cudal2_stream_bulk::Config<{}, {}, {}, {}, {}>>",
                                   s.accum == Accum::F16, s.tile_m / 8, s.warps_k, s.stages, s.tile_n / 16));
  return type_source(
      stream_compile_text(s), "stream_gemm.cuh",
      fmt::format("cudal2_stream::Gemm<cudal2_stream::Config<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 0, {}>>",
                  s.layout == Layout::TN, s.accum == Accum::F16, s.tile_m / 8, row_tiles(s), s.warps_n, s.warps_k,
                  s.stages, s.min_ctas, s.prefetch_ahead, s.pdl_mode, s.split_order));
}

}  // namespace

const Family& stream_family() {
  static const Family f{.name = "stream",
                        .fields = stream_fields,
                        .default_spec = stream_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = stream_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_stream,
                        .enumerate = enumerate_stream,
                        .shape_refusal = stream_shape_refusal,
                        .generate_source = generate_stream_source};
  return f;
}

}  // namespace cudal2
