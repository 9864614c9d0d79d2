// The Judge's checks (judge/judge.hpp).
#include "judge/judge.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace cudal2 {

Judge::Judge(ShapeBuffers& buf, const JobSecrets& sec, cudaStream_t st)
    : buf_(buf), sec_(sec), st_(st), ref_out_(buf.C.bytes()) {
  if (buf.seed.data()) chain_ = std::make_unique<ChainChecker>(buf.shape, Accum::F32);
}

void Judge::fresh_inputs(const InputDistribution& d, uint64_t seed) {
  dist_ = &d, seed_ = seed;
  buf_.fill_from(d, seed, st_);
  ref_.run(buf_.shape.m, buf_.shape.n, buf_.shape.k, buf_.A.data(), 0, buf_.Bn.data(), 0, ref_out_.data(), 0, 1, st_);
  tol_ = element_tolerance(accum_, buf_.shape.k, d.scale(buf_.shape.k));
  sums_ = checksums();
}

void Judge::snapshot() { sums_ = checksums(); }

bool Judge::inputs_intact() { return checksums() == sums_; }

void Judge::set_accum(Accum a) {
  accum_ = a;
  if (chain_) chain_ = std::make_unique<ChainChecker>(buf_.shape, a);
}

void Judge::arm(Method& r) {
  fill_u16(buf_.C.data(), buf_.C.bytes() / 2, sec_.poison, st_);
  for (auto* b : buf_.all()) b->reset_guards(st_);
  for (auto& [name, b] : r.private_buffers()) b->reset_guards(st_);
  CUDAL2_CUDA(cudaStreamSynchronize(st_));
}

void Judge::arm_chain(Method& r, unsigned long long seed) {
  seed_value_ = seed;
  buf_.set_seed(seed, st_);
  fill_u16(buf_.slots.data(), buf_.slots.bytes() / 2, sec_.poison, st_);
  arm(r);
  const GuardedBuffer& other = r.layout() == Layout::NN ? buf_.Bt : buf_.Bn;
  other_b_ = chk_.checksum(other.data(), other.bytes(), sec_.checksum_key, st_);
}

CandidateFault Judge::check_chain(Method& r, int calls) {
  if (CandidateFault f = guards(r)) return f;
  const bool nn = r.layout() == Layout::NN;
  const GuardedBuffer& other = nn ? buf_.Bt : buf_.Bn;
  const GuardedBuffer& mine = nn ? buf_.Bn : buf_.Bt;
  CandidateFault f;
  if (chk_.checksum(other.data(), other.bytes(), sec_.checksum_key, st_) != other_b_)
    f = {FailureKind::InputModified, "the candidate changed an operand it was not given"};
  else
    f = chain_->check(seed_value_, calls, {buf_.C.data(), buf_.slots.data(), buf_.A.data(), mine.data(), !nn},
                      sec_.poison, sec_.checksum_key, chk_, st_);
  // (Every later check of this candidate starts from fresh_inputs or arm_chain again.)
  return f;
}

CandidateFault Judge::check(Method& r) {
  if (CandidateFault f = guards(r)) return f;
  if (checksums() != sums_) {
    // Put them back, or every method after this one would be judged on corrupted inputs.
    if (dist_) fresh_inputs(*dist_, seed_);
    return {FailureKind::InputModified, "the candidate changed its input operands"};
  }
  const auto c = chk_.compare(buf_.C.data(), ref_out_.data(), buf_.C.bytes() / 2, tol_, sec_.poison, st_);
  if (!c.ok()) {
    const int64_t n = buf_.shape.n;
    return {FailureKind::WrongResult,
            fmt::format("against the GPU reference, {} element(s) unwritten, {} NaN/Inf, {} beyond tolerance "
                        "(|c-r| <= {:.3g}|r| + {:.3g}); first C[{},{}] = {} want {}",
                        c.unwritten, c.nonfinite, c.mismatched, tol_.rel, tol_.abs, c.first_bad / n, c.first_bad % n,
                        c.first_got, c.first_want)};
  }
  return {};
}

CandidateFault Judge::guards(Method& r) {
  std::vector<std::pair<std::string, GuardedBuffer*>> guarded{
      {"A", &buf_.A}, {"B(nn)", &buf_.Bn}, {"B(tn)", &buf_.Bt}, {"C", &buf_.C}, {"workspace", &buf_.W}};
  if (buf_.slots.data()) guarded.emplace_back("output slots", &buf_.slots);
  for (const auto& p : r.private_buffers()) guarded.push_back(p);
  for (auto& [name, b] : guarded)
    if (const int64_t d = chk_.guard_damage(*b, st_))
      return {FailureKind::OutOfBounds, fmt::format("{} bytes of the guard bands of {} changed", d, name)};
  return {};
}

std::array<uint64_t, 3> Judge::checksums() {
  return {chk_.checksum(buf_.A.data(), buf_.A.bytes(), sec_.checksum_key, st_),
          chk_.checksum(buf_.Bn.data(), buf_.Bn.bytes(), sec_.checksum_key, st_),
          chk_.checksum(buf_.Bt.data(), buf_.Bt.bytes(), sec_.checksum_key, st_)};
}

}  // namespace cudal2
