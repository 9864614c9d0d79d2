#include "judge/classic_checks.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "measure/device.hpp"

namespace cudal2 {

void verify_once(Method& r, ShapeBuffers& buf, const Reference& ref, bool exact, Accum accum, uint16_t poison,
                 DeviceChecker& chk, cudaStream_t st, Verdict& v) {
  const Shape& s = buf.shape;
  fill_u16(buf.C.data(), buf.C.bytes() / 2, poison, st);
  std::vector<std::pair<std::string, GuardedBuffer*>> guarded{
      {"A", &buf.A}, {"B(nn)", &buf.Bn}, {"B(tn)", &buf.Bt}, {"C", &buf.C}, {"workspace", &buf.W}};
  for (const auto& p : r.private_buffers()) guarded.push_back(p);
  for (auto& [name, b] : guarded) b->reset_guards(st);
  CUDAL2_CUDA(cudaStreamSynchronize(st));
  r.run(st);
  CUDAL2_CUDA(cudaStreamSynchronize(st));
  CUDAL2_CUDA(cudaGetLastError());
  for (auto& [name, b] : guarded) {
    const auto d = b->guard_damage(st);
    if (d.before || d.after)
      v.fail(FailureKind::OutOfBoundsWrite,
             fmt::format("{} guard bands changed: {} bytes before, {} after", name, d.before, d.after));
  }
  // The whole output is scanned in place; only the elements the reference compares come back.
  const auto scan = chk.scan(buf.C.data(), buf.C.bytes() / 2, poison, st);
  const SampledOutput C = chk.gather(buf.C.data(), s, ref.sampling, st);
  if (scan.unwritten)
    v.fail(FailureKind::UnwrittenOutput,
           fmt::format("{} of {} outputs never written (first at row {}, col {})", scan.unwritten, buf.C.bytes() / 2,
                       scan.first_unwritten / s.n, scan.first_unwritten % s.n));
  if (scan.nonfinite)
    v.fail(FailureKind::NanInf, fmt::format("{} outputs are NaN or Inf (first at row {}, col {})", scan.nonfinite,
                                            scan.first_nonfinite / s.n, scan.first_nonfinite % s.n));
  v.sampled = !ref.sampling.full;
  if (exact) {
    const auto ex = compare_exact(s, C, ref);
    v.exact_checked = ex.checked;
    v.exact_mismatches = ex.mismatches;
    if (ex.mismatches)
      v.fail(FailureKind::ExactMismatch,
             fmt::format("{} of {} exact elements differ (first C[{},{}] = {} want {})", ex.mismatches, ex.checked,
                         ex.first_i, ex.first_j, ex.first_got, ex.first_want));
  } else {
    v.rel_err = relative_frobenius(s, C, ref);
    v.tol = normal_tolerance(accum, s.k);
    if (!(v.rel_err <= v.tol))
      v.fail(FailureKind::NormalError,
             fmt::format("relative Frobenius error {:.3g} > tolerance {:.3g}", v.rel_err, v.tol));
  }
}

Reference host_reference(ShapeBuffers& buf, double budget, uint64_t sampling_seed) {
  const auto A = to_host_u16(buf.A.data(), buf.A.bytes() / 2);
  const auto B = to_host_u16(buf.Bn.data(), buf.Bn.bytes() / 2);
  return compute_reference(buf.shape, A, B, plan_sampling(buf.shape, budget, sampling_seed));
}

}  // namespace cudal2
