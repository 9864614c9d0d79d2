#pragma once
// The runtime's rule for bandwidth-bound shapes no table holds (decode and small batch: few
// tokens M against a wide weight operand B): which of the library's compiled `stream` kernels
// (runtime/stream_kernels.cu) runs the shape, and with how many K splits. Plain C++, no CUDA: the
// CPU tests check it, the library calls it once per shape.
//
// The class, as measured on an H200 (docs/kernels-stream.md; bench/results/h200/bandwidth/): nn.Linear's
// layout (TN), M <= 8 tokens, weights B of at least the GPU's L2 (so that even back-to-back calls
// stream them from DRAM), and few enough B-row tiles that the launch is one wave of resident CTAs.
// There, on held-out shapes, the kernels ran ahead of cuBLASLt auto-tuning with an unrelated kernel
// before every call (chain timer, 1.08-1.13) and cold (server mode, 1.05-1.07), and even with it
// replayed back to back (graph timer, 0.99-1.02, where cuBLASLt's heuristic, the runtime's fallback,
// ran 0.97-1.00) in two runs. So the rule is on by default (CUDAL2_STREAM=0 turns it off). At 16
// tokens the graph timer measured 0.97 against the heuristic's 0.97-0.99: CUDAL2_STREAM_MAX_M=16
// for those who run their decode step eagerly or cold. More tokens, weights that stay in L2
// between calls, or launches of more than one wave measured below auto-tuning under every timer (NN
// has bands of its own, nn_band below).
// The kernel: the first of the portfolio that holds M and runs the shape in one wave (16 tokens
// x 32 rows a CTA, then 8 x 64 for wider weights). The
// splits: as many as keep the launch within one wave (more split the same bytes over more partial
// sums; fewer leave SMs without loads).
//
// Below the class, the sweep band: TN with fp32 accumulation, 1-8 tokens, K % 8 == 0, weights from
// 1 MiB up to the class's floor (the L2; weights the handle has read recently only up to 40% of it
// above 4 tokens: kSweepWarmAllMaxM) and row tiles that one wave of the first sweep kernel's CTAs
// holds run the portfolio's stream_sweep kernels (kernels/stream_sweep_gemm.cuh: the read-limit
// kernel's loop with the MMAs folded in, the next steps' loads issued before this step's
// multiplies). Measured on an H200 against cuBLASLt auto-tuning (bench/results/h200/bandwidth/
// sweep/, pipelined/): weights the L2 keeps read at the L2's rate (held out, 14-18 MiB at 1-4
// tokens: 1.21-1.52 back to back, 1.25-1.44 with an unrelated kernel between calls). On 25-50 MiB
// called back to back the L2 keeps the weights in some replays and not in others; the first,
// unpipelined loop streamed them from DRAM at ~60% of the read limit (0.79-0.89 of auto-tuning). A
// second wave of CTAs cost it half its speed (7x6912x2560: 0.52). Beyond the L2 it ran level with
// the stream kernels, which keep the class.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "kernels/stream_sweep_plan.h"

namespace cudal2::rt {

// Whether the rule runs when CUDAL2_STREAM is unset (or empty); "1" turns it on, "0" off.
constexpr bool kStreamDefaultOn = true;

inline bool stream_enabled(const char* env) {
  if (env == nullptr || *env == '\0') return kStreamDefaultOn;
  return std::string_view(env) == "1";
}
// CUDAL2_STREAM takes "", "0" or "1": anything else is a typo worth an error, not a silent default.
inline bool stream_env_valid(const char* env) {
  return env == nullptr || *env == '\0' || std::string_view(env) == "0" || std::string_view(env) == "1";
}

// A whole decimal number in [lo, hi] (a bound's environment variable), or nothing.
inline std::optional<int64_t> parse_stream_bound(const char* text, int64_t lo, int64_t hi) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return static_cast<int64_t>(v);
}

// B's bytes from which a shape can be in the class, whatever the L2 (the device's L2 size raises it).
constexpr int64_t kStreamMinWeightBytes = int64_t(4) << 20;
constexpr int64_t kStreamMaxM = 8;
constexpr int kStreamMaxSplits = 64;
constexpr int kStreamStageK = 64;

// One compiled kernel of the portfolio, as the rule needs to know it.
struct StreamKernel {
  int layout, accum;    // CUDAL2_LAYOUT_*, CUDAL2_ACCUM_*
  int toks, rows;       // tokens (M) and B rows (N) one CTA covers
  int warps_k;          // warps splitting a CTA's K range
  int resident;         // CTAs one SM holds at once (the occupancy calculator's answer), >= 1
  bool sweep = false;   // a stream_sweep kernel: the sweep band's, never the class's or the cold band's
  int keep = 0;         // stream_sweep keep=1: B's lines stay in the L2 (kStreamKeep)
  int variant_of = -1;  // keep variants: the index of the same kernel without it, which the rule picks first
};

// The sweep band's reach: tokens, the weights' floor (smaller ones are launch-bound), and the
// share of the L2 up to which it takes warm weights (in percent; cold ones up to the class's
// floor): all of it up to kSweepWarmAllMaxM tokens since the kernel's loop is pipelined, 40% above.
// H200 (bench/results/h200/bandwidth/pipelined/), 25-54 MB at 1-4 tokens, called back to back:
// exploration layers 1.08 of auto-tuning (min 0.91), held-out decode layers ahead of cuBLASLt
// too; at 7-8 tokens the exploration layers were mixed (0.87-1.24) and three held-out off-grid
// layers of 34-41 MB ran 0.75-0.89 back to back (1.08-1.14 with a kernel between calls), so more
// tokens keep 40% warm.
constexpr int64_t kSweepMaxM = 8;
constexpr int64_t kSweepMinWeightBytes = int64_t(1) << 20;
constexpr int64_t kSweepWarmL2Percent = 40;
constexpr int64_t kSweepWarmAllMaxM = 4;
// How much less the busiest SM must stream under a later sweep kernel of the portfolio for it to
// run a shape instead of the first.
constexpr double kSweepBalanceMargin = 0.9;
// Above 8 tokens the band's kernels are the 16-, 32- and 64-token sweep tiles (a warp over 32
// rows, so that its token loads are at most half of its loads), and the band is narrower. H200,
// exploration shapes (bench/results/h200/bandwidth/tokens/):
//  - 9-16 tokens, weights up to 16 MiB: 16x1024x4096 and 16x2048x4096 at 1.04-1.22 of auto-tuning
//    back to back, chained and cold; from 24 MiB up it ran 0.69-0.93 back to back, and aligned rows
//    at 32 tokens 0.56-0.85.
//  - Output rows off 16 bytes (N % 8 != 0), 9-64 tokens, 16 MiB up to the L2: cuBLASLt's kernels
//    for them ran 1.4-2.8x the sweep tiles' time back to back and chained, 1.2-1.7x cold
//    (24x4101x4104 2.4-2.6 and 1.6; 64x4101x4104 1.95-2.2 and 1.47). At 9-16 tokens from 32 MiB the
//    class's stream kernel keeps them (odd_output_rows): it ran as fast warm and faster cold.
constexpr int64_t kSweepWideMaxM = 16;
constexpr int64_t kSweepWideMaxWeightBytes = int64_t(16) << 20;
constexpr int64_t kSweepOddMaxM = 64;
constexpr int64_t kSweepOddMinWeightBytes = int64_t(16) << 20;

// Weights below the class's floor (they fit the L2) and from this many bytes up, at up to
// kStreamColdMaxM tokens, form the cold band: the stream kernels run them only when the handle has not read them
// recently (runtime/weight_recency.hpp), as in a model's decode step, where every layer's weights come back only after
// all the others have passed through the L2. Measured on an H200 (held-out shapes, 1-16 tokens, 14-54 MB;
// bench/results/h200/bandwidth/cold/): cold (server mode) the stream kernels ran at 1.05-1.07 of cuBLASLt auto-tuning
// where cuBLASLt's heuristic ran 0.96-0.98, and a Llama-3-8B decode step under CUDA graphs gained 3% with them; warm
// (the same weights called back to back) they ran at 0.60-0.91, so recently read weights keep cuBLASLt.
constexpr int64_t kStreamColdMinWeightBytes = int64_t(8) << 20;
constexpr int64_t kStreamColdMaxM = 16;

// The sweep band's TN kernels load B as read-once data (L1::no_allocate), whose lines do not stay in
// the L2 for the next call. Measured on an H200 (bench/results/h200/bandwidth/keep/): 26-34 MB of
// weights called back to back ran at DRAM speed on every call (4x4096x4096 9.7 us alone), and at
// the L2's only right after another kernel had loaded the same weights (8.4 us after cuBLASLt's):
// bimodal in a bench that interleaves methods. The same kernel loading B without it (keep=1) keeps
// them (6.9 us, whatever ran before); so did the 16-token kernel's on 9-16 tokens (1.12 of auto-tuning back
// to back against 0.89 held out, as fast chained). So warm picks of the band (weights the next call reads again)
// take the portfolio's keep variant (kStreamKeep: CUDAL2_STREAM_KEEP=0 turns it off) up to
// kSweepKeepMaxL2Percent of the L2: 50 MB of weights with the chain timer's interlude between calls
// ran 18-21% slower with it (the L2 holds them only partly, and allocating them evicts the rest).
constexpr int kStreamKeep = 1;
constexpr int64_t kSweepKeepMaxL2Percent = 60;

// The class's bounds: the measured defaults, or CUDAL2_STREAM_MAX_M / CUDAL2_STREAM_MIN_MB for
// whoever measures another GPU or another portfolio.
struct StreamBounds {
  int64_t max_m = kStreamMaxM;
  int64_t min_weight_bytes = -1;       // -1: the device's L2 (and at least kStreamMinWeightBytes)
  int64_t cold_min_weight_bytes = -1;  // the cold band's floor; -1: kStreamColdMinWeightBytes
  int64_t cold_max_m = kStreamColdMaxM;
  int64_t sweep_max_m = kSweepMaxM;  // 0 turns the sweep band off
  // Share of the L2 up to which the band takes warm weights; -1: 100 up to kSweepWarmAllMaxM
  // tokens, kSweepWarmL2Percent above (CUDAL2_STREAM_SWEEP_WARM_PCT sets one for every M).
  int64_t sweep_warm_pct = -1;
  // Whether warm weights of the sweep band up to kSweepKeepMaxL2Percent of the L2 take the
  // portfolio's keep variant of their kernel (kStreamKeep; CUDAL2_STREAM_KEEP).
  int keep = kStreamKeep;
};

struct StreamPick {
  int kernel = -1;  // index into the portfolio; -1: not this class, or no kernel for it
  int splits = 1;
};

// Output rows that are not 16-byte aligned (N % 8 != 0) with aligned weight rows (K % 8 == 0):
// from 4 tokens on, cuBLASLt auto-tuning ran 1.5-3.1x the stream kernel's time on such shapes
// whatever the weights' size (H200, 33-235 MB, back to back, with a kernel between calls and cold:
// 8x4101x4104 29.9 us against 13.8; bench/results/h200/bandwidth/odd-n/), so they take the rule
// with weights in the L2 too. At one token cuBLASLt's kernels for them were as fast as the stream
// kernel's (0.85-0.98 below the L2), so one token keeps the class above. (K % 8 != 0 leaves the
// stream kernel's unaligned loads, which ran behind cuBLASLt.)
constexpr int64_t kStreamOddMinM = 4, kStreamOddMaxM = 16;
constexpr int64_t kStreamOddMinWeightBytes = int64_t(32) << 20;
inline bool odd_output_rows(int layout, int64_t m, int64_t n, int64_t k) {
  return layout == 1 && m >= kStreamOddMinM && m <= kStreamOddMaxM && n % 8 != 0 && k % 8 == 0 &&
         n * k * 2 >= kStreamOddMinWeightBytes;
}

// The class's floor for B's bytes.
inline int64_t stream_min_weight_bytes(int64_t l2_bytes, const StreamBounds& b) {
  return b.min_weight_bytes >= 0            ? b.min_weight_bytes
         : l2_bytes > kStreamMinWeightBytes ? l2_bytes
                                            : kStreamMinWeightBytes;
}

// l2_bytes: the device's L2 (0: unknown, kStreamMinWeightBytes alone).
inline bool in_stream_class(int layout, int64_t m, int64_t n, int64_t k, int64_t l2_bytes, const StreamBounds& b = {}) {
  return (layout == 1 && m >= 1 && m <= b.max_m && n * k * 2 >= stream_min_weight_bytes(l2_bytes, b)) ||
         odd_output_rows(layout, m, n, k);
}

// TN shapes with fp32 accumulation, up to sweep_max_m tokens and K % 8 == 0 (whole 16-byte runs of
// B's rows), whose weights lie between kSweepMinWeightBytes and the warm share of the L2 (cold, or
// a share that reaches it: the class's floor); while the band is on (sweep_max_m > 0), also 9-16
// tokens on up to kSweepWideMaxWeightBytes of weights and 9-64 tokens on odd output rows from
// kSweepOddMinWeightBytes up to the class's floor (but the class's own odd rows).
inline bool in_sweep_band(int layout, int accum, int64_t m, int64_t n, int64_t k, int64_t l2_bytes,
                          const StreamBounds& b = {}, bool cold = false) {
  const int64_t bytes = n * k * 2, floor = stream_min_weight_bytes(l2_bytes, b);
  if (layout != 1 || accum != 0 || m < 1 || k % 8 != 0 || bytes < kSweepMinWeightBytes || b.sweep_max_m < 1)
    return false;
  if (m > b.sweep_max_m) {
    if (m <= kSweepWideMaxM && bytes <= kSweepWideMaxWeightBytes && bytes < floor) return true;
    if (n % 8 == 0 || m > kSweepOddMaxM || bytes < kSweepOddMinWeightBytes || bytes >= floor) return false;
    return !odd_output_rows(layout, m, n, k);
  }
  const int64_t pct = b.sweep_warm_pct >= 0 ? b.sweep_warm_pct : m <= kSweepWarmAllMaxM ? 100 : kSweepWarmL2Percent;
  const int64_t warm_top = l2_bytes / 100 * pct;
  return bytes < (cold || warm_top > floor ? floor : warm_top);
}

// NN (B row-major K x N, N contiguous: GPT-2's Conv1D, x @ W), fp32 accumulation, 1-8 tokens, K % 8 == 0 and
// N % 8 == 0 (B's rows 16-byte aligned): the portfolio's NN stream_sweep kernels, on three bands. H200, exploration
// shapes against cuBLASLt auto-tuning (best of NN/TN; bench/results/h200/bandwidth/nn/):
//  - weights of 1-8 MiB (kNNSmallMaxWeightBytes) with K >= N, the kernel with the narrowest tiles (32 columns a
//    warp): 1.1-1.7 back to back and chained, 1.0-1.15 cold (1x1024x4096: 1.23 back to back, 1.21 chained, 1.09
//    cold). Where K < N cuBLASLt needs no split of K and runs near its launch floor: GPT-2's 768x2304 and 768x3072
//    (K x N) ran 0.82-0.89 on it, so those keep cuBLASLt;
//  - weights from the class's floor (the L2) up, one wave of the widest tiles (64 columns a warp): 0.95-1.08 back to
//    back, 1.08-1.35 chained, 1.06-1.11 cold (1x14336x4096: 1.04, 1.22, 1.07).
// Between them (25-50 MB called back to back) every NN configuration ran 0.6-0.94 of auto-tuning: cuBLASLt keeps
// them, unless the handle has not read them recently (the cold band, as for TN below): cold, the 64-column kernel ran
// 1.09-1.18 on 25-50 MB of exploration layers (0.97-1.02 on 16 and 33 MB), where cuBLASLt's heuristic ran 0.93-1.03,
// so from kNNColdMinWeightBytes up to the L2 the cold band runs it. CUDAL2_STREAM_SWEEP_MAX_M=0 turns the first band
// off, CUDAL2_STREAM_MAX_M (below the tokens) the second, CUDAL2_STREAM_COLD_MAX_M the cold one.
constexpr int64_t kNNMaxM = 8;
constexpr int64_t kNNSmallMaxWeightBytes = int64_t(8) << 20;
constexpr int64_t kNNColdMinWeightBytes = int64_t(24) << 20;

enum class NNBand { kNone, kSmall, kBeyondL2, kCold };

// cold: the band of a call whose weights the handle has not read recently (kCold), else the others.
inline NNBand nn_band(int layout, int accum, int64_t m, int64_t n, int64_t k, int64_t l2_bytes,
                      const StreamBounds& b = {}, bool cold = false) {
  const int64_t bytes = n * k * 2, floor = stream_min_weight_bytes(l2_bytes, b);
  if (layout != 0 || accum != 0 || m < 1 || m > kNNMaxM || k % 8 != 0 || n % 8 != 0) return NNBand::kNone;
  if (cold) return m <= b.cold_max_m && bytes >= kNNColdMinWeightBytes && bytes < floor ? NNBand::kCold : NNBand::kNone;
  if (m <= b.sweep_max_m && k >= n && bytes >= kSweepMinWeightBytes && bytes <= kNNSmallMaxWeightBytes)
    return NNBand::kSmall;
  if (m <= b.max_m && bytes >= floor) return NNBand::kBeyondL2;
  return NNBand::kNone;
}

// Whether the rule takes a shape (when its kernels can run it): the class, the sweep band or an NN band.
inline bool in_stream_rule(int layout, int accum, int64_t m, int64_t n, int64_t k, int64_t l2_bytes,
                           const StreamBounds& b = {}) {
  return in_stream_class(layout, m, n, k, l2_bytes, b) || in_sweep_band(layout, accum, m, n, k, l2_bytes, b) ||
         nn_band(layout, accum, m, n, k, l2_bytes, b) != NNBand::kNone;
}

// TN shapes of up to cold_max_m tokens whose weights lie between the cold band's floor and the
// class's (and are not in the class for their odd output rows); NN ones of NN's cold band.
inline bool in_cold_band(int layout, int accum, int64_t m, int64_t n, int64_t k, int64_t l2_bytes,
                         const StreamBounds& b = {}) {
  if (layout == 0) return nn_band(layout, accum, m, n, k, l2_bytes, b, /*cold=*/true) == NNBand::kCold;
  const int64_t floor = b.cold_min_weight_bytes >= 0 ? b.cold_min_weight_bytes : kStreamColdMinWeightBytes;
  const int64_t bytes = n * k * 2;
  return layout == 1 && m >= 1 && m <= b.cold_max_m && bytes >= floor && bytes < stream_min_weight_bytes(l2_bytes, b) &&
         !odd_output_rows(layout, m, n, k);
}

// Splits for `tiles` output tiles on `slots` resident CTAs (SMs x CTAs an SM holds): the most that
// keep the launch within one wave, at least 1, at most max_splits.
inline int stream_splits(int64_t tiles, int64_t slots, int max_splits) {
  int64_t s = tiles > 0 ? slots / tiles : 1;
  if (s < 1) s = 1;
  if (s > max_splits) s = max_splits;
  return static_cast<int>(s);
}

// The portfolio's variant of kernel i with `keep`, or i when it has none (or keep is 0).
inline int keep_variant(const std::vector<StreamKernel>& kernels, int i, int keep) {
  if (i < 0 || keep == 0) return i;
  for (int j = 0; j < static_cast<int>(kernels.size()); ++j)
    if (kernels[static_cast<size_t>(j)].variant_of == i && kernels[static_cast<size_t>(j)].keep == keep) return j;
  return i;
}

// The first kernel of the portfolio (listed in order of preference) that holds M and runs the
// shape in one wave: slots are sm_count x the kernel's resident CTAs, and a shape whose tiles
// exceed them for every kernel is out of the class (a second, partial wave measured 0.82-0.88 of
// auto-tuning).
// cold: pick for a shape of the cold band instead of the class. A shape of the sweep band (cold:
// its cold reach) takes the first stream_sweep kernel that holds M, if its row tiles fit one wave
// of it, unless a later one deals the tiles more evenly over the SMs (its busiest SM streams at
// most kSweepBalanceMargin of the first's bytes: 288 row tiles are 3 CTAs on some SMs and 2 on
// others at 3 CTAs an SM, 5 and 4 at 6). Row tiles that only a later kernel holds in one wave
// stay out (H200, 448-688 tiles of 30-45 MB at 1-8 tokens: 0.72-0.94 of auto-tuning back to back
// with the 6-CTA kernel; bench/results/h200/bandwidth/pipelined/). Splits 1: the kernel spreads K
// over a cluster of CTAs itself (stream_sweep_plan.h).
inline StreamPick pick_stream(const std::vector<StreamKernel>& kernels, int layout, int accum, int64_t m, int64_t n,
                              int64_t k, int sm_count, int64_t l2_bytes, const StreamBounds& bounds = {},
                              bool cold = false) {
  StreamPick p;
  // NN: its band's kernel (the narrowest NN tiles that hold M on the small band, the widest on the others), if one
  // wave holds its tiles; the kernel picks its cluster (splits 1).
  if (layout == 0) {
    const NNBand band = nn_band(layout, accum, m, n, k, l2_bytes, bounds, cold);
    if (band == NNBand::kNone || sm_count < 1) return p;
    for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
      const StreamKernel& c = kernels[static_cast<size_t>(i)];
      if (!c.sweep || c.keep != 0 || c.layout != 0 || c.accum != accum || c.toks < m) continue;
      const int chosen = p.kernel < 0 ? 0 : kernels[static_cast<size_t>(p.kernel)].rows;
      if (p.kernel < 0 || (band == NNBand::kSmall ? c.rows < chosen : c.rows > chosen)) p.kernel = i;
    }
    if (p.kernel >= 0) {
      const StreamKernel& c = kernels[static_cast<size_t>(p.kernel)];
      if ((n + c.rows - 1) / c.rows > int64_t(sm_count) * (c.resident > 0 ? c.resident : 1)) p.kernel = -1;
    }
    return p;
  }
  if (sm_count >= 1 && in_sweep_band(layout, accum, m, n, k, l2_bytes, bounds, cold)) {
    double best = 0;
    for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
      const StreamKernel& c = kernels[static_cast<size_t>(i)];
      const int64_t tiles = (n + c.rows - 1) / c.rows, slots = int64_t(sm_count) * (c.resident > 0 ? c.resident : 1);
      if (!c.sweep || c.keep != 0 || c.layout != layout || c.accum != accum || c.toks < m) continue;
      // Later kernels compete on balance only with the first's tile (their tiles count alike).
      if (p.kernel >= 0 && (c.toks != kernels[static_cast<size_t>(p.kernel)].toks ||
                            c.rows != kernels[static_cast<size_t>(p.kernel)].rows))
        continue;
      if (tiles > slots) {
        if (p.kernel < 0) break;  // the first cannot hold them in one wave: no sweep kernel does
        continue;
      }
      const int cl = cudal2_sweep_plan::cluster(tiles, slots, c.warps_k, k);
      const double busiest = cudal2_sweep_plan::busiest_sm_tiles(tiles, cl, sm_count);
      if (p.kernel < 0 || busiest < best * kSweepBalanceMargin) p.kernel = i, best = busiest;
    }
    if (p.kernel >= 0) {
      if (!cold && n * k * 2 <= l2_bytes / 100 * kSweepKeepMaxL2Percent)
        p.kernel = keep_variant(kernels, p.kernel, bounds.keep);
      return p;
    }
  }
  const bool in = cold ? in_cold_band(layout, accum, m, n, k, l2_bytes, bounds)
                       : in_stream_class(layout, m, n, k, l2_bytes, bounds);
  if (!in || sm_count < 1) return p;
  int64_t tiles = 0, slots = 0;
  for (int i = 0; i < static_cast<int>(kernels.size()) && p.kernel < 0; ++i) {
    const StreamKernel& c = kernels[static_cast<size_t>(i)];
    if (c.sweep || c.layout != layout || c.accum != accum || c.toks < m) continue;
    tiles = ((n + c.rows - 1) / c.rows) * ((m + c.toks - 1) / c.toks);
    slots = int64_t(sm_count) * (c.resident > 0 ? c.resident : 1);
    if (tiles <= slots) p.kernel = i;
  }
  if (p.kernel < 0) return p;
  const StreamKernel& c = kernels[static_cast<size_t>(p.kernel)];
  const int64_t stages = (k + kStreamStageK - 1) / kStreamStageK;
  int64_t max_s = stages / (c.warps_k > 0 ? c.warps_k : 1);
  if (max_s < 1) max_s = 1;
  if (max_s > kStreamMaxSplits) max_s = kStreamMaxSplits;
  p.splits = stream_splits(tiles, slots, static_cast<int>(max_s));
  return p;
}

}  // namespace cudal2::rt
