#include "core/roofline.hpp"

#include <algorithm>

namespace cudal2 {

double flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

double min_bytes(const Shape& s) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  return 2.0 * (m * k + k * n + m * n);
}

double roofline_us(const Shape& s, const Ceilings& c) {
  const double t_math = flops(s) / (c.tflops * 1e12);
  const double t_mem = min_bytes(s) / (c.tbps * 1e12);
  return std::max(t_math, t_mem) * 1e6;
}

double ReadLimit::limit_us(const Shape& s, bool server) const {
  if (!measured || warm_tbps <= 0) return 0.0;
  return min_bytes(s) / (warm_tbps * 1e12) * 1e6 + (server ? cold_floor_us : 0.0);
}

bool ReadLimit::bandwidth_bound(const Shape& s, const Ceilings& c) const {
  return measured && warm_tbps > 0 && min_bytes(s) / (warm_tbps * 1e12) > flops(s) / (c.tflops * 1e12);
}

double tflops_at(const Shape& s, double us) { return us > 0 ? flops(s) / (us * 1e-6) / 1e12 : 0.0; }

HardwarePeak hopper_peak(int sm_count, int sm_clock_mhz, int mem_clock_mhz, int mem_bus_bits, double l2_bytes) {
  HardwarePeak p;
  p.flops_per_s = static_cast<double>(sm_count) * sm_clock_mhz * 1e6 * 4096.0;
  p.bytes_per_s = 2.0 * mem_clock_mhz * 1e6 * mem_bus_bits / 8.0;
  p.l2_bytes = l2_bytes;
  return p;
}

double plausible_floor_us(const Shape& s, bool l2_warm, const HardwarePeak& hw) {
  constexpr double margin = 1.05;
  const double t_math = hw.flops_per_s > 0 ? flops(s) / (hw.flops_per_s * margin) : 0.0;
  const double from_memory = std::max(0.0, min_bytes(s) - (l2_warm ? hw.l2_bytes : 0.0));
  const double t_mem = hw.bytes_per_s > 0 ? from_memory / (hw.bytes_per_s * margin) : 0.0;
  return std::max(t_math, t_mem) * 1e6;
}

ShapeClass classify(const Shape& s) {
  const double f = flops(s);
  if (f < 1e9) return ShapeClass::Small;
  if (std::min(s.m, s.n) <= 256) return ShapeClass::Skinny;
  if (f >= 1e11) return ShapeClass::Large;
  return ShapeClass::Medium;
}

std::string_view to_string(ShapeClass c) {
  switch (c) {
    case ShapeClass::Small:
      return "small";
    case ShapeClass::Skinny:
      return "skinny";
    case ShapeClass::Medium:
      return "medium";
    case ShapeClass::Large:
      return "large";
  }
  return "?";
}

}  // namespace cudal2
