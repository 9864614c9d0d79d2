#pragma once
// Roofline and shape classes. Ceilings are the ones measured on the device machine's H100
// (docs/measuring.md, "Roofline and ratios"): ~800 TFLOP/s dense fp16 tensor math, ~3.0 TB/s device memory.
#include <string_view>

#include "core/problem.hpp"

namespace cudal2 {

struct Ceilings {
  double tflops = 800.0;  // TFLOP/s
  double tbps = 3.0;      // TB/s
};

double flops(const Shape& s);      // 2MNK
double min_bytes(const Shape& s);  // 2(MK + KN + MN): fp16, each operand once
double roofline_us(const Shape& s, const Ceilings& c = {});
double tflops_at(const Shape& s, double us);  // achieved TFLOP/s for a time in microseconds

// What the chip can do at most, from its own properties (not measured, not datasheet): dense
// fp16 tensor rate = SMs x boost clock x 4096 flop/clock (Hopper), memory = 2 x memory clock x
// bus width. A time below plausible_floor_us is physically impossible: the judge fails it.
struct HardwarePeak {
  double flops_per_s = 0, bytes_per_s = 0, l2_bytes = 0;
};
HardwarePeak hopper_peak(int sm_count, int sm_clock_mhz, int mem_clock_mhz, int mem_bus_bits, double l2_bytes);
// max(2MNK / peak, bytes that must come from memory / bandwidth), with 5% margin. l2_warm
// (offline mode): the first L2-sized part of the operands may already sit in the cache.
double plausible_floor_us(const Shape& s, bool l2_warm, const HardwarePeak& hw);

// The GPU's read limit as the bench measured it (measure/read_limit.hpp): the streaming read rate
// of data beyond the L2, and the cold floor (an empty call after an L2 flush and an idle gap).
struct ReadLimit {
  bool measured = false;
  double warm_tbps = 0;  // TB/s
  double cold_floor_us = 0;
  double cold_64mb_us = 0;  // 64 MiB read cold, the launch included
  // The least time the shape's operand bytes (min_bytes) take at warm_tbps, plus the cold floor
  // when server (every call cold); 0 when not measured.
  double limit_us(const Shape& s, bool server) const;
  // Whether the shape is bandwidth-bound on this GPU: its bytes at warm_tbps take longer than its
  // arithmetic at the ceilings' rate.
  bool bandwidth_bound(const Shape& s, const Ceilings& c) const;
};

// The classes used in reports: small (2MNK < 1e9) first, then skinny (min(M,N) <= 256),
// then large (2MNK >= 1e11), else medium.
enum class ShapeClass { Small, Skinny, Medium, Large };
ShapeClass classify(const Shape& s);
std::string_view to_string(ShapeClass c);

}  // namespace cudal2
