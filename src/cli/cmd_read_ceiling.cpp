// `cudal2 read-ceiling [shapes] [--reps N] [--csv FILE]`: for each shape, the product's read kernel
// (measure/read_limit.hpp) over exactly the shape's weight bytes B (K x N fp16), back to back and
// cold: how fast a bandwidth-bound GEMM of that shape could at best stream its weights, with the
// ramp and tail of one launch of that size included. `cudal2 bench`'s limit_us puts the bytes
// against the whole-GPU rate, which amortizes those over a GiB; this is the per-shape ceiling to
// read the stream family's (docs/kernels-stream.md) and cuBLASLt's times against.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/shape_args.hpp"
#include "core/csv.hpp"
#include "core/problem.hpp"
#include "measure/device.hpp"
#include "measure/read_limit.hpp"

namespace cudal2::cli {

namespace {

struct ReadCeilingArgs {
  ShapeArgs shapes;
  int reps = 9;
  std::string csv;
};

}  // namespace

Run add_read_ceiling(CLI::App& app, const Context& ctx) {
  auto a = std::make_shared<ReadCeilingArgs>();
  a->shapes.add(&app);
  app.add_option("--reps", a->reps, "Replays a median is taken over, warm and cold each")->capture_default_str();
  app.add_option("--csv", a->csv, "Also write m,n,k,b_bytes,warm_us,warm_tbps,cold_us,cold_tbps rows here");
  return [a, &ctx] {
    // Every argument is checked before the GPU is asked for: bad input is exit 2 on any machine.
    if (a->reps < 1 || a->reps > 1000) throw InputError(fmt::format("--reps {}: must be in 1..1000", a->reps));
    const std::vector<Shape> shapes = a->shapes.resolve();
    require_gpu();
    const GpuInfo gpu = query_gpu();
    std::unique_ptr<CsvWriter> csv;
    if (!a->csv.empty())
      csv = std::make_unique<CsvWriter>(
          a->csv, std::vector<std::string>{"m", "n", "k", "b_bytes", "warm_us", "warm_tbps", "cold_us", "cold_tbps"},
          false,
          std::vector<std::string>{
              fmt::format("cudal2 {}", ctx.command_line),
              fmt::format("gpu={} sms={} l2_mb={:.0f}", gpu.name, gpu.sm_count, gpu.l2_bytes / 1e6)});
    cudaStream_t s = nullptr;
    CUDAL2_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    L2Flusher flusher(gpu.l2_bytes);
    std::printf("%-22s %10s %10s %10s %10s %10s\n", "shape", "B MB", "warm us", "warm TB/s", "cold us", "cold TB/s");
    int failed = 0;
    for (const Shape& sh : shapes) {
      const size_t bytes = static_cast<size_t>(sh.k) * static_cast<size_t>(sh.n) * 2;
      if (bytes < 16) {
        std::printf("%-22s %10s\n", sh.str().c_str(), "too small");
        continue;
      }
      const GuardedBuffer b(bytes);  // filled with the guard byte: what is read does not matter
      const ReadTime t = time_reads(b.data(), bytes, s, flusher, a->reps);
      if (!t.measured) {
        std::printf("%-22s %10s\n", sh.str().c_str(), "not measured");
        ++failed;
        continue;
      }
      const double wt = static_cast<double>(bytes) / t.warm_us * 1e-6,
                   ct = static_cast<double>(bytes) / t.cold_us * 1e-6;
      std::printf("%-22s %10.1f %10.2f %10.2f %10.2f %10.2f\n", sh.str().c_str(), bytes / 1e6, t.warm_us, wt, t.cold_us,
                  ct);
      if (csv)
        csv->row({std::to_string(sh.m), std::to_string(sh.n), std::to_string(sh.k), std::to_string(bytes),
                  fmt::format("{:.3f}", t.warm_us), fmt::format("{:.4f}", wt), fmt::format("{:.3f}", t.cold_us),
                  fmt::format("{:.4f}", ct)});
    }
    cudaStreamDestroy(s);
    return failed == 0 ? 0 : 1;
  };
}

}  // namespace cudal2::cli
