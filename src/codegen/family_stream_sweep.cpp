// Family stream_sweep: decode GEMMs at the read-limit kernel's instruction count
// (src/kernels/stream_sweep_gemm.cuh): a warp's lanes load 16-byte runs of B's rows and the
// tokens that are mma.sync fragments as loaded, `stages` 32-wide K steps in flight before the
// first multiply, K split over the CTA's kwarps warps and over a thread-block cluster of CTAs
// (splits, a runtime knob: 1 lets the kernel pick the most that keep one wave, else 2, 4 or 8).
// TN or NN (B row-major: a warp's 16, 32 or 64 columns, 8 K rows a lane a step, paired into
// fragments by byte permutes), fp32 accumulation only; M up to the tile's tokens, K % 8 == 0 and,
// in NN, N % 8 == 0 (can_implement refuses the rest). With 16-64 tokens, warps=1xW gives each of a CTA's W warps rows
// of its own over the CTA's whole K range (the warps then read the same tokens, from L1 after the first).
//   "stream_sweep tn f32 tile=8x16x32 kwarps=8 stages=2 ctas=3 pipe=1 | splits=1"
// tile = tokens (8, 16, 32 or 64) x B rows a CTA (16 x row tiles) x 32 (the K step); ctas = CTAs an SM must
// hold at once (caps a thread's registers); pipe (always written: a text without it takes the
// default's, 1) = 1 loads a warp's next
// `stages` steps before it multiplies this batch (twice the registers; from DRAM and cold a warp
// then never waits with nothing in flight); pdl (written when not 0) = 1 lets the next kernel
// launch as soon as every CTA has started; keep (written when not 0) = 1 loads B without L1::no_allocate, so that
// weights the next call reads again stay in the L2 (with it they do not).
// No CUDA here: this file only writes and reads text.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "kernels/stream_sweep_plan.h"

namespace cudal2 {

namespace {

using cudal2_sweep_plan::kMaxCluster;
using cudal2_sweep_plan::kStepK;
// Registers besides the steps in flight and the accumulators (addresses, the loop, the
// reduction's indices): the configurations ptxas compiled without spilling at 3 CTAs an SM (80
// registers) and with a spill at 4 (64) bound it (ptxas -v, bench/results/h200/bandwidth/sweep/).
constexpr int kSweepOverheadRegs = 20;
// NN's K rows (8 a lane) and byte permutes cost more: its configurations with 24 registers spare
// spilled 16 bytes, those with 28 or more none.
constexpr int kSweepOverheadRegsNN = 28;

const std::vector<std::string>& sweep_fields() {
  static const std::vector<std::string> f{"tile", "warps", "kwarps", "stages", "ctas", "pipe", "pdl", "keep", "splits"};
  return f;
}

KernelSpec sweep_default_spec() {
  KernelSpec s;
  s.family = "stream_sweep";
  s.layout = Layout::TN;
  s.tile_m = 8, s.tile_n = 16, s.tile_k = kStepK, s.warps_m = 1, s.warps_n = 1, s.warps_k = 8, s.stages = 2;
  s.pipelined = 1, s.min_ctas = 3, s.pdl_mode = 0;
  return s;
}

// warps=1xW (written when W > 1): W warps a CTA, each over rows of its own and the CTA's whole K
// range (kwarps is then 1); otherwise kwarps warps split the CTA's K range.
std::string sweep_compile_text(const KernelSpec& s) {
  return fmt::format("{} {} {} tile={}x{}x{}{} kwarps={} stages={} ctas={} pipe={}{}{}", s.family, to_string(s.layout),
                     to_string(s.accum), s.tile_m, s.tile_n, s.tile_k,
                     s.warps_n > 1 ? fmt::format(" warps=1x{}", s.warps_n) : std::string(), s.warps_k, s.stages,
                     s.min_ctas, s.pipelined, s.pdl_mode == 0 ? std::string() : fmt::format(" pdl={}", s.pdl_mode),
                     s.l2_keep == 0 ? std::string() : fmt::format(" keep={}", s.l2_keep));
}

// 16-row tiles a warp covers.
int sweep_row_tiles(const KernelSpec& s) { return s.tile_n / 16 / std::max(1, s.warps_n); }

// Registers a thread's steps in flight and accumulators hold: per step 16 bytes of each row tile's
// two rows and of each token tile (4 registers each), twice when pipelined; 2 accumulator tiles of 4
// a (row, token) tile.
int sweep_regs(const KernelSpec& s) {
  const int mt = sweep_row_tiles(s), nt = s.tile_m / 8;
  return (s.pipelined ? 2 : 1) * s.stages * (2 * mt + nt) * 4 + mt * nt * 8;
}

std::string invalid_reason_sweep(const KernelSpec& s) {
  if (s.accum != Accum::F32) return "stream_sweep: fp32 accumulation only";
  if (s.tile_m != 8 && s.tile_m != 16 && s.tile_m != 32 && s.tile_m != 64)
    return fmt::format("tile M {} not 8, 16, 32 or 64 tokens", s.tile_m);
  if (s.tile_k != kStepK) return fmt::format("tile K {} is not the step's {}", s.tile_k, kStepK);
  if (s.warps_m != 1 || s.warps_n < 1 || s.warps_n > 16)
    return fmt::format("warps {}x{} not 1xW with W in 1..16", s.warps_m, s.warps_n);
  if (s.warps_n > 1 && s.warps_k != 1) return "stream_sweep: warps split rows (warps=1xW) or K (kwarps), not both";
  if (s.tile_n % (16 * s.warps_n) || sweep_row_tiles(s) < 1 || sweep_row_tiles(s) > 4)
    return fmt::format("tile N {} not 16, 32, 48 or 64 rows a warp over {} warps", s.tile_n, s.warps_n);
  // NN: a lane loads 2 x row tiles columns of a K row at once (4, 8 or 16 bytes).
  if (s.layout == Layout::NN && sweep_row_tiles(s) == 3)
    return fmt::format("stream_sweep nn: tile N {} not 16, 32 or 64 columns a warp", s.tile_n);
  if (s.warps_k < 1 || s.warps_k > 16) return fmt::format("kwarps {} not in 1..16", s.warps_k);
  if (s.stages < 1 || s.stages > 16) return fmt::format("stages {} not in 1..16", s.stages);
  const int warps = s.warps_n * s.warps_k, threads = 32 * warps;
  // Each warp's partial tiles (16 bytes a lane an MMA tile pair) go through static shared memory.
  if (const int bytes = warps * sweep_row_tiles(s) * (s.tile_m / 8) * 32 * 16; bytes > 48 * 1024)
    return fmt::format("the warps' partial tiles take {} bytes of shared memory, over 48 KiB", bytes);
  if (s.pipelined != 0 && s.pipelined != 1) return fmt::format("pipe {} not 0 or 1", s.pipelined);
  if (s.min_ctas < 1 || s.min_ctas * threads > 2048)
    return fmt::format("ctas {} not in 1..{} ({} threads a CTA, 2048 an SM)", s.min_ctas, 2048 / threads, threads);
  const int cap = std::min(255, 65536 / (threads * s.min_ctas) / 8 * 8);
  if (const int need = sweep_regs(s) + (s.layout == Layout::NN ? kSweepOverheadRegsNN : kSweepOverheadRegs); need > cap)
    return fmt::format("{} CTAs an SM leave {} registers a thread, under the {} the steps need", s.min_ctas, cap, need);
  if (s.pdl_mode != 0 && s.pdl_mode != 1) return fmt::format("pdl {} not 0 or 1", s.pdl_mode);
  if (s.l2_keep != 0 && s.l2_keep != 1)
    return fmt::format("keep {} not 0 (B read once) or 1 (B's lines stay in the L2)", s.l2_keep);
  if (s.splits != 1 && s.splits != 2 && s.splits != 4 && s.splits != kMaxCluster)
    return fmt::format("splits {} (CTAs a cluster) not 1 (the kernel's pick), 2, 4 or 8", s.splits);
  return splits_only_knobs_reason(s);
}

// Tokens 8, 16, 32, 64 x rows 16, 32 x kwarps 4, 8, 16 x stages 1, 2, 4, 8 x pipelined or not x CTAs an
// SM 1, 2, 3, 4, 6 where the registers allow, PDL off (measured slower back to back and no faster
// chained), x splits 1 (the kernel's pick), 2, 4, 8 with knobs. Warps over rows (warps=1xW) parse
// but are not enumerated: they measured 0.3-0.9 of auto-tuning at 16-64 tokens
// (bench/results/h200/bandwidth/tokens/). NN: tokens 8, 16 x columns 16, 32, 64 a warp (its lanes'
// loads of a K row are 4, 8 or 16 bytes), the rest alike.
std::vector<KernelSpec> enumerate_sweep(Layout layout, Accum accum, bool with_runtime_knobs) {
  std::vector<KernelSpec> out;
  if (accum != Accum::F32) return out;
  const bool nn = layout == Layout::NN;
  for (int toks : {8, 16, 32, 64})
    for (int rows : {16, 32, 64})
      for (int wk : {4, 8, 16})
        for (int stages : {1, 2, 4, 8})
          for (int pipe : {0, 1})
            for (int ctas : {1, 2, 3, 4, 6}) {
              if (nn ? toks > 16 : rows > 32) continue;
              KernelSpec s = sweep_default_spec();
              s.layout = layout;
              s.tile_m = toks, s.tile_n = rows, s.warps_k = wk, s.stages = stages, s.pipelined = pipe;
              s.min_ctas = ctas;
              if (!invalid_reason_sweep(s).empty()) continue;
              for (int sp : {1, 2, 4, kMaxCluster}) {
                s.splits = sp;
                out.push_back(s);
                if (!with_runtime_knobs) break;
              }
            }
  return out;
}

std::string sweep_shape_refusal(const KernelSpec& s, const Shape& shape) {
  if (shape.m > s.tile_m) return fmt::format("stream_sweep: M {} over the tile's {} tokens", shape.m, s.tile_m);
  if (shape.k % 8) return fmt::format("stream_sweep: K {} not a multiple of 8", shape.k);
  if (s.layout == Layout::NN && shape.n % 8)
    return fmt::format("stream_sweep nn: N {} not a multiple of 8 (B's rows 16-byte aligned)", shape.n);
  return "";
}

// The configuration as template arguments of cudal2_stream_sweep::Config (row tiles a warp, token
// tiles, warps, steps in flight, CTAs an SM, PDL, pipelined, warps over rows, NN).
std::string generate_sweep_source(const KernelSpec& s) {
  const bool warp_rows = s.warps_n > 1;
  return type_source(
      sweep_compile_text(s), "stream_sweep_gemm.cuh",
      fmt::format("cudal2_stream_sweep::Gemm<cudal2_stream_sweep::Config<{}, {}, {}, {}, {}, {}, {}, {}{}>>",
                  sweep_row_tiles(s), s.tile_m / 8, warp_rows ? s.warps_n : s.warps_k, s.stages, s.min_ctas, s.pdl_mode,
                  s.pipelined, warp_rows ? 1 : 0,
                  s.l2_keep != 0           ? fmt::format(", {}, {}", s.layout == Layout::NN ? 1 : 0, s.l2_keep)
                  : s.layout == Layout::NN ? ", 1"
                                           : ""));
}

}  // namespace

const Family& stream_sweep_family() {
  static const Family f{.name = "stream_sweep",
                        .fields = sweep_fields,
                        .default_spec = sweep_default_spec,
                        .parse_field = parse_common_field,
                        .compile_text = sweep_compile_text,
                        .text = splits_only_text,
                        .invalid_reason = invalid_reason_sweep,
                        .enumerate = enumerate_sweep,
                        .shape_refusal = sweep_shape_refusal,
                        .generate_source = generate_sweep_source};
  return f;
}

}  // namespace cudal2
