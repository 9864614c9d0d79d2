#include "measure/verify.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "measure/half.hpp"

namespace cudal2 {

namespace {

const std::array<float, 65536>& half_table() {
  static const auto table = [] {
    std::array<float, 65536> t{};
    for (uint32_t i = 0; i < 65536; ++i) t[i] = half_to_float(static_cast<uint16_t>(i));
    return t;
  }();
  return table;
}

// count indices spread over [0, n): first and last always, the rest evenly spaced.
std::vector<int64_t> spread(int64_t n, int64_t count) {
  count = std::clamp<int64_t>(count, 1, n);
  std::vector<int64_t> out;
  if (count == 1) return {0};
  for (int64_t i = 0; i < count; ++i) out.push_back(i * (n - 1) / (count - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

template <class F>
void parallel_for(int64_t n, int threads, F&& f) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<int64_t>(threads, std::max<int64_t>(n, 1)));
  if (threads <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int64_t i = t; i < n; i += threads) f(i);
    });
  for (auto& th : pool) th.join();
}

bool in_sorted(const std::vector<int64_t>& v, int64_t x) { return std::binary_search(v.begin(), v.end(), x); }

// Visit every sampled element once: f(i, j, reference value, its slot), where the slot numbers the
// sampled elements as SampledOutput stores them (rows first, then columns).
template <class F>
void for_each_checked(const Shape& s, const Reference& ref, F&& f) {
  const auto& sp = ref.sampling;
  for (size_t r = 0; r < sp.rows.size(); ++r)
    for (int64_t j = 0; j < s.n; ++j) f(sp.rows[r], j, ref.row_vals[r * s.n + j], r * s.n + j);
  const size_t row_part = sp.rows.size() * s.n;
  for (size_t c = 0; c < sp.cols.size(); ++c)
    for (int64_t i = 0; i < s.m; ++i)
      if (!in_sorted(sp.rows, i)) f(i, sp.cols[c], ref.col_vals[c * s.m + i], row_part + c * s.m + i);
}

// C's element (i, j) at a slot: read from the whole output, or from the sampled copy.
struct WholeOutput {
  const uint16_t* C;
  int64_t n;
  uint16_t operator()(int64_t i, int64_t j, size_t) const { return C[i * n + j]; }
};
struct SampledElements {
  const SampledOutput& C;
  size_t row_part;
  uint16_t operator()(int64_t, int64_t, size_t slot) const {
    return slot < row_part ? C.rows[slot] : C.cols[slot - row_part];
  }
};
SampledElements sampled_elements(const Shape& s, const SampledOutput& C, const Reference& ref) {
  const auto& sp = ref.sampling;
  if (C.rows.size() != sp.rows.size() * static_cast<size_t>(s.n) ||
      C.cols.size() != sp.cols.size() * static_cast<size_t>(s.m))
    throw std::invalid_argument("sampled output does not match the reference's sampling");
  return {C, sp.rows.size() * static_cast<size_t>(s.n)};
}

template <class Get>
ExactCompare exact_impl(const Shape& s, const Reference& ref, const Get& get) {
  ExactCompare r;
  for_each_checked(s, ref, [&](int64_t i, int64_t j, double want, size_t slot) {
    if (std::fabs(want) > kExactLimit) {
      ++r.masked;
      return;
    }
    ++r.checked;
    const double got = half_to_float(get(i, j, slot));
    if (got != want && r.mismatches++ == 0) {
      r.first_i = i;
      r.first_j = j;
      r.first_got = got;
      r.first_want = want;
    }
  });
  return r;
}

template <class Get>
double frobenius_impl(const Shape& s, const Reference& ref, const Get& get) {
  double num = 0, den = 0;
  for_each_checked(s, ref, [&](int64_t i, int64_t j, double want, size_t slot) {
    const double d = static_cast<double>(half_to_float(get(i, j, slot))) - want;
    num += d * d;
    den += want * want;
  });
  if (den == 0) return num == 0 ? 0.0 : INFINITY;
  return std::sqrt(num / den);
}

}  // namespace

int64_t Sampling::elements(const Shape& s) const {
  if (full) return s.m * s.n;
  return static_cast<int64_t>(rows.size()) * s.n + static_cast<int64_t>(cols.size()) * s.m -
         static_cast<int64_t>(rows.size() * cols.size());
}

namespace {
// count distinct indices in [0, n), sorted: 0 and n-1 always, the rest drawn from seed.
std::vector<int64_t> draw(int64_t n, int64_t count, uint64_t seed) {
  count = std::clamp<int64_t>(count, 1, n);
  if (count >= n) return spread(n, n);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::set<int64_t> out{0, n - 1};
  while (static_cast<int64_t>(out.size()) < count) out.insert(pick(rng));
  return {out.begin(), out.end()};
}
}  // namespace

Sampling plan_sampling(const Shape& s, double mac_budget, uint64_t seed) {
  Sampling sp;
  const double macs = static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  // Full when within budget, or when even the smallest sample (2 rows + 2 columns) costs more.
  if (macs <= mac_budget || 2.0 * static_cast<double>(s.m + s.n) * static_cast<double>(s.k) >= macs) {
    sp.full = true;
    for (int64_t i = 0; i < s.m; ++i) sp.rows.push_back(i);
    return sp;
  }
  sp.full = false;
  // r rows cost r*N*K, c columns c*M*K; take as many of each as the budget allows, at least
  // the first and last.
  const double per = static_cast<double>(s.m + s.n) * static_cast<double>(s.k);
  const auto count = std::max<int64_t>(2, static_cast<int64_t>(mac_budget / per));
  sp.rows = seed ? draw(s.m, count, seed) : spread(s.m, count);
  sp.cols = seed ? draw(s.n, count, seed ^ 0xC0150000ull) : spread(s.n, count);
  return sp;
}

Reference compute_reference(const Shape& s, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B,
                            const Sampling& sampling, int threads) {
  if (A.size() != static_cast<size_t>(s.m * s.k) || B.size() != static_cast<size_t>(s.k * s.n))
    throw std::invalid_argument("compute_reference: buffer sizes do not match the shape");
  const auto& lut = half_table();
  Reference ref;
  ref.sampling = sampling;
  const auto n_rows = static_cast<int64_t>(sampling.rows.size());
  ref.row_vals.assign(static_cast<size_t>(n_rows * s.n), 0.0);
  // Row i of C = sum_k A[i,k] * B[k,:]: streams B row by row, no transpose needed.
  parallel_for(n_rows, threads, [&](int64_t r) {
    const int64_t i = sampling.rows[r];
    double* acc = &ref.row_vals[r * s.n];
    const uint16_t* a = &A[i * s.k];
    for (int64_t k = 0; k < s.k; ++k) {
      const double av = lut[a[k]];
      if (av == 0.0) continue;
      const uint16_t* b = &B[k * s.n];
      for (int64_t j = 0; j < s.n; ++j) acc[j] += av * static_cast<double>(lut[b[j]]);
    }
  });
  const auto n_cols = static_cast<int64_t>(sampling.cols.size());
  ref.col_vals.assign(static_cast<size_t>(n_cols * s.m), 0.0);
  parallel_for(n_cols, threads, [&](int64_t c) {
    const int64_t j = sampling.cols[c];
    std::vector<double> bcol(static_cast<size_t>(s.k));
    for (int64_t k = 0; k < s.k; ++k) bcol[k] = lut[B[k * s.n + j]];
    for (int64_t i = 0; i < s.m; ++i) {
      const uint16_t* a = &A[i * s.k];
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += static_cast<double>(lut[a[k]]) * bcol[k];
      ref.col_vals[c * s.m + i] = acc;
    }
  });
  return ref;
}

OutputScan scan_output(const uint16_t* C, size_t n, uint16_t poison) {
  OutputScan r;
  for (size_t i = 0; i < n; ++i) {
    if (C[i] == poison) {
      if (r.unwritten++ == 0) r.first_unwritten = static_cast<int64_t>(i);
    } else if (!half_is_finite(C[i])) {
      if (r.nonfinite++ == 0) r.first_nonfinite = static_cast<int64_t>(i);
    }
  }
  return r;
}

int64_t count_guard_damage(const uint8_t* guard, size_t n, uint8_t fill) {
  int64_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += guard[i] != fill;
  return bad;
}

ExactCompare compare_exact(const Shape& s, const uint16_t* C, const Reference& ref) {
  return exact_impl(s, ref, WholeOutput{C, s.n});
}

ExactCompare compare_exact(const Shape& s, const SampledOutput& C, const Reference& ref) {
  return exact_impl(s, ref, sampled_elements(s, C, ref));
}

double relative_frobenius(const Shape& s, const uint16_t* C, const Reference& ref) {
  return frobenius_impl(s, ref, WholeOutput{C, s.n});
}

double relative_frobenius(const Shape& s, const SampledOutput& C, const Reference& ref) {
  return frobenius_impl(s, ref, sampled_elements(s, C, ref));
}

double normal_tolerance(Accum accum, int64_t k) {
  constexpr double f32 = 6e-4;
  if (accum == Accum::F32) return f32;
  return std::max(f32, 5e-4 * (1.0 + std::sqrt(static_cast<double>(k)) / 8.0));
}

bool is_nan_guard_byte(uint8_t b) { return (b & 0x7C) == 0x7C; }

JobSecrets JobSecrets::draw() {
  std::random_device rd;
  auto u64 = [&] { return (static_cast<uint64_t>(rd()) << 32) ^ rd(); };
  JobSecrets j;
  // A NaN payload that hardware never produces (its NaNs are 0x7E00, 0x7FFF and their negatives).
  do {
    j.poison = static_cast<uint16_t>(0x7C00 | (u64() & 0x83FF));
  } while ((j.poison & 0x03FF) == 0 || (j.poison & 0x7FFF) == 0x7E00 || (j.poison & 0x7FFF) == 0x7FFF);
  static constexpr uint8_t kNanBytes[] = {0x7C, 0x7D, 0x7E, 0x7F, 0xFC, 0xFD, 0xFE, 0xFF};
  j.guard_byte = kNanBytes[u64() % 8];
  j.checksum_key = u64() | 1;
  j.sampling_seed = u64() | 1;
  return j;
}

double InputDistribution::sigma_scale(int64_t k) const {
  if (!fp16_range) return 1.0;
  // |C| ~ sigma^2 sqrt(K): aim at 4096, a sixteenth of fp16's largest finite value.
  return std::sqrt(4096.0 / std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))));
}
double InputDistribution::a_rms(int64_t k) const {
  const double sd = a_sigma * sigma_scale(k) / (kind == Kind::Uniform ? std::sqrt(3.0) : 1.0);
  return kind == Kind::Binary ? std::sqrt(a_mean) : std::sqrt(a_mean * a_mean + sd * sd);
}
double InputDistribution::b_rms(int64_t k) const {
  const double sd = b_sigma * sigma_scale(k) / (kind == Kind::Uniform ? std::sqrt(3.0) : 1.0);
  return kind == Kind::Binary ? std::sqrt(b_mean) : std::sqrt(b_mean * b_mean + sd * sd);
}
double InputDistribution::scale(int64_t k) const {
  return a_rms(k) * b_rms(k) * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
}

const std::vector<InputDistribution>& verification_distributions() {
  using K = InputDistribution::Kind;
  static const std::vector<InputDistribution> d{
      {"normal", K::Normal, 0, 1, 0, 1},
      {"normal-small", K::Normal, 0, 0.03, 0, 0.03},
      {"uniform", K::Uniform, 0, 1, 0, 1},
      {"fp16-range", K::Normal, 0, 1, 0, 1, true},
      {"mostly-negative", K::Normal, -0.5, 0.5, 0.5, 0.5},
  };
  return d;
}

ElementTolerance element_tolerance(Accum accum, int64_t k, double scale) {
  const double u = std::ldexp(1.0, -11);  // fp16 unit roundoff
  if (accum == Accum::F32) return {4 * u, 2 * u * scale};
  const double g = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  return {4 * u + 4 * u * g, 2 * u * scale * (1 + 3 * g)};
}

void Verdict::fail(FailureKind kind, std::string why) {
  if (ok) {
    ok = false;
    failure = kind;
    detail = std::move(why);
  } else {
    detail += "; " + why;
  }
}

}  // namespace cudal2
