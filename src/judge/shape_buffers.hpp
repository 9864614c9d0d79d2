#pragma once
// The judge's device buffers for one shape of a bench (judge/bench.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "baselines/baselines.hpp"
#include "core/problem.hpp"
#include "measure/device.hpp"
#include "measure/interlude.hpp"
#include "measure/method.hpp"
#include "measure/verify.hpp"

namespace cudal2 {

// Outputs a chained batch keeps besides C (measure/interlude.hpp): as many as fit this many bytes,
// at least one, so a batch holds at most that many calls plus one.
constexpr size_t kSlotBytes = size_t{1} << 30;
inline int slot_count(const Shape& s) {
  return static_cast<int>(std::clamp<size_t>(kSlotBytes / (static_cast<size_t>(s.m * s.n) * 2), 1, 999));
}

// Operands of one shape: A, B in both layouts (same values), C and the library workspace, each
// inside guard bands; with chains, the slots that keep a batch's outputs and the seed word.
struct ShapeBuffers {
  Shape shape;
  GuardedBuffer A, Bn, Bt, C, W, slots, seed;
  ShapeBuffers(const Shape& s, bool chains)
      : shape(s),
        A(static_cast<size_t>(s.m * s.k) * 2),
        Bn(static_cast<size_t>(s.k * s.n) * 2),
        Bt(static_cast<size_t>(s.k * s.n) * 2),
        C(static_cast<size_t>(s.m * s.n) * 2),
        W(kLibraryWorkspace) {
    if (chains) {
      slots = GuardedBuffer(static_cast<size_t>(slot_count(s)) * static_cast<size_t>(s.m * s.n) * 2);
      seed = GuardedBuffer(sizeof(unsigned long long), 256);
      set_seed(0, nullptr);
    }
  }
  // Calls a chained batch may hold: one per slot, and the last in C.
  int chain_capacity() const { return slots.data() ? static_cast<int>(slots.bytes() / C.bytes()) + 1 : 0; }
  std::optional<InterludeArgs> interlude(Layout l) const {
    if (!seed.data()) return std::nullopt;
    InterludeArgs a;
    a.A = A.data(), a.B = l == Layout::NN ? Bn.data() : Bt.data(), a.C = C.data(), a.slots = slots.data();
    a.m = shape.m, a.n = shape.n, a.k = shape.k, a.b_col_major = l == Layout::TN;
    a.seed = static_cast<const unsigned long long*>(seed.data());
    return a;
  }
  void set_seed(unsigned long long v, cudaStream_t st) {
    CUDAL2_CUDA(cudaMemcpyAsync(seed.data(), &v, sizeof v, cudaMemcpyHostToDevice, st));
    CUDAL2_CUDA(cudaStreamSynchronize(st));
  }
  Operands operands(Layout l) const {
    Operands o{A.data(), l == Layout::NN ? Bn.data() : Bt.data(), C.data(), W.data(), W.bytes()};
    o.bufA = &A, o.bufB = l == Layout::NN ? &Bn : &Bt, o.bufC = &C;
    return o;
  }
  // Inputs drawn from d (fresh values from seed), B in both layouts.
  void fill_from(const InputDistribution& d, uint64_t seed, cudaStream_t st) {
    if (d.kind == InputDistribution::Kind::Binary) {
      fill(true, seed, st);
      return;
    }
    const double g = d.sigma_scale(shape.k);
    auto one = [&](GuardedBuffer& b, double mean, double sigma, uint64_t sd) {
      if (d.kind == InputDistribution::Kind::Normal)
        fill_normal_f16(b.data(), b.bytes() / 2, sd, st, static_cast<float>(mean), static_cast<float>(sigma * g));
      else
        fill_uniform_f16(b.data(), b.bytes() / 2, sd, static_cast<float>(mean - sigma * g),
                         static_cast<float>(mean + sigma * g), st);
    };
    one(A, d.a_mean, d.a_sigma, seed);
    one(Bn, d.b_mean, d.b_sigma, seed ^ 0x5bd1e995ull);
    transpose_f16(Bn.data(), Bt.data(), shape.k, shape.n, st);
  }
  // B is generated row-major and transposed, so NN and TN runners see identical values.
  void fill(bool binary, uint64_t seed, cudaStream_t st) {
    const int ones_every = std::max({shape.m, shape.n, shape.k}) > 8192 ? 3 : 2;
    if (binary) {
      fill_binary_f16(A.data(), A.bytes() / 2, seed, ones_every, st);
      fill_binary_f16(Bn.data(), Bn.bytes() / 2, seed ^ 0x5bd1e995ull, ones_every, st);
    } else {
      fill_normal_f16(A.data(), A.bytes() / 2, seed, st);
      fill_normal_f16(Bn.data(), Bn.bytes() / 2, seed ^ 0x5bd1e995ull, st);
    }
    transpose_f16(Bn.data(), Bt.data(), shape.k, shape.n, st);
    CUDAL2_CUDA(cudaStreamSynchronize(st));
  }
  std::vector<GuardedBuffer*> all() {
    std::vector<GuardedBuffer*> v{&A, &Bn, &Bt, &C, &W};
    if (slots.data()) v.push_back(&slots);
    return v;
  }
};

}  // namespace cudal2
