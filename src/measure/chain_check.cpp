#include "measure/chain_check.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "measure/interlude.hpp"

namespace cudal2 {

ChainChecker::ChainChecker(const Shape& s, Accum accum)
    : shape_(s),
      // The reference accumulates in fp32 like the one of every other check; fp16 accumulation
      // gets its wider tolerance (verify.hpp).
      tol_(element_tolerance(accum, s.k, kInterludeRms * kInterludeRms * std::sqrt(static_cast<double>(s.k)))) {}

namespace {
// Each call's A, B and reference start 16 bytes aligned: cuBLAS picks its kernel from the first
// batch's pointers and the strides, and packed odd strides (m * k not a multiple of 8, an odd
// shape) leave later batches misaligned (measured on an H200: misaligned-address faults and
// wrong references, charged to honest candidates, on 3x5003x4099 and 7x1001x12289).
int64_t padded(int64_t elements) { return (elements + 7) / 8 * 8; }
}  // namespace

void ChainChecker::reserve(int calls) {
  const size_t per_call =
      static_cast<size_t>(padded(shape_.m * shape_.k) + padded(shape_.k * shape_.n) + padded(shape_.m * shape_.n)) * 2;
  const int want = static_cast<int>(std::clamp<size_t>(kChainCheckScratch / per_call, 1, static_cast<size_t>(calls)));
  if (want <= chunk_) return;
  scratch_ = GuardedBuffer(per_call * static_cast<size_t>(want), 256);
  chunk_ = want;
}

CandidateFault ChainChecker::check(unsigned long long seed, int calls, const ChainOutputs& out, uint16_t poison,
                                   uint64_t key, DeviceChecker& chk, cudaStream_t st) {
  if (calls < 1) return {};
  reserve(calls);
  const int64_t m = shape_.m, n = shape_.n, k = shape_.k, mn = m * n;
  const int64_t sa = padded(m * k), sb = padded(k * n), sr = padded(mn);
  auto* base = static_cast<uint16_t*>(scratch_.data());
  uint16_t* A = base;
  uint16_t* B = A + static_cast<int64_t>(chunk_) * sa;
  uint16_t* R = B + static_cast<int64_t>(chunk_) * sb;
  for (int first = 0; first < calls; first += chunk_) {
    const int count = std::min(chunk_, calls - first);
    generate_call_inputs(seed, first, count, A, B, m, n, k, false, st, sa, sb);
    ref_.run(m, n, k, A, sa, B, sb, R, sr, count, st);
    // Calls first.. whose outputs sit in slots (all but the batch's last), then the last in C.
    const int in_slots = std::max(0, std::min(count, calls - 1 - first));
    auto report = [&](const OutputCheck& c, int call) -> CandidateFault {
      const int64_t at = c.first_bad % mn;
      const int bad_call = call + static_cast<int>(c.first_bad / mn);
      return {FailureKind::WrongResult,
              fmt::format("call {} of a batch of {} (each on inputs of its own): {} element(s) unwritten, {} NaN/Inf, "
                          "{} beyond tolerance; first C[{},{}] = {} want {}",
                          bad_call + 1, calls, c.unwritten, c.nonfinite, c.mismatched, at / n, at % n, c.first_got,
                          c.first_want)};
    };
    // The slots are packed (mn apart); the references are sr apart: one comparison for all when
    // those agree, else one a call.
    const auto* slots = static_cast<const uint16_t*>(out.slots) + first * mn;
    if (in_slots > 0 && sr == mn) {
      const auto c = chk.compare(slots, R, static_cast<size_t>(in_slots) * static_cast<size_t>(mn), tol_, poison, st);
      if (!c.ok()) return report(c, first);
    }
    for (int i = 0; sr != mn && i < in_slots; ++i) {
      const auto c = chk.compare(slots + i * mn, R + i * sr, static_cast<size_t>(mn), tol_, poison, st);
      if (!c.ok()) return report(c, first + i);
    }
    if (first + count == calls) {
      const auto c =
          chk.compare(out.C, R + static_cast<int64_t>(count - 1) * sr, static_cast<size_t>(mn), tol_, poison, st);
      if (!c.ok()) return report(c, calls - 1);
    }
  }
  // The inputs left behind are the last call's, in the candidate's layout.
  generate_call_inputs(seed, calls - 1, 1, A, B, m, n, k, out.b_col_major, st);
  const size_t a_bytes = static_cast<size_t>(m * k) * 2, b_bytes = static_cast<size_t>(k * n) * 2;
  if (chk.checksum(out.A, a_bytes, key, st) != chk.checksum(A, a_bytes, key, st) ||
      chk.checksum(out.B, b_bytes, key, st) != chk.checksum(B, b_bytes, key, st))
    return {FailureKind::InputModified, "the inputs after a batch are not the ones its last call was given"};
  return {};
}

}  // namespace cudal2
