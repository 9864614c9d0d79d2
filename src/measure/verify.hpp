#pragma once
// Host-side verification: references and the checks a runner's output must pass.
// Everything here works on host buffers (fp16 as uint16_t bits) so it is unit-tested on the CPU;
// the judge's bench (judge/classic_checks.cpp) copies device buffers back and calls these.
#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "protocol/outcome.hpp"

namespace cudal2 {

// Output poison: a NaN with a payload no arithmetic produces (hardware NaNs are 0x7FFF/0x7E00),
// so "still poison" means "never written" and any other NaN means "computed a NaN".
inline constexpr uint16_t kPoison = 0x7DA5;
// Guard band fill byte, before and after every buffer a kernel gets.
inline constexpr uint8_t kGuardByte = 0xA5;
// fp16 represents every integer up to 2048 exactly: the paper's exact check compares there.
inline constexpr double kExactLimit = 2047;

// Which elements of C are compared against the CPU reference. Full when M*N*K fits the
// multiply-add budget; otherwise whole rows and whole columns, the first and last of each always
// included (tile edges are where indexing bugs live), the rest spread evenly.
struct Sampling {
  bool full = true;
  std::vector<int64_t> rows;  // checked completely (all N columns)
  std::vector<int64_t> cols;  // checked completely (all M rows)
  int64_t elements(const Shape& s) const;
};
// seed != 0: besides the first and last, the rows and columns are drawn at random from that seed
// (the judge draws a secret seed per job, so a candidate cannot know which ones are checked).
Sampling plan_sampling(const Shape& s, double mac_budget, uint64_t seed = 0);

// fp64 reference C = A*B for the sampled elements. A: row-major MxK fp16 bits; B: row-major KxN.
// Exact for the {0,1} inputs (integer sums < 2^53).
struct Reference {
  Sampling sampling;
  std::vector<double> row_vals;  // rows.size() x N
  std::vector<double> col_vals;  // cols.size() x M (col-major per sampled column)
};
Reference compute_reference(const Shape& s, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B_rowmajor,
                            const Sampling& sampling, int threads = 0);

struct OutputScan {
  int64_t unwritten = 0;  // still kPoison
  int64_t nonfinite = 0;  // NaN or Inf that is not the poison
  int64_t first_unwritten = -1, first_nonfinite = -1;
};
OutputScan scan_output(const uint16_t* C, size_t n, uint16_t poison = kPoison);

// Bytes in a guard band that no longer hold kGuardByte.
int64_t count_guard_damage(const uint8_t* guard, size_t n, uint8_t fill = kGuardByte);

struct ExactCompare {
  int64_t checked = 0, masked = 0, mismatches = 0;
  int64_t first_i = -1, first_j = -1;
  double first_got = 0, first_want = 0;
};
ExactCompare compare_exact(const Shape& s, const uint16_t* C, const Reference& ref);

// Only the elements of C a sampled reference compares: its rows (all N columns), then its columns
// (all M rows), copied from the device without the rest, so a large output costs the judge a
// small copy and not a host copy of all of C (checks.hpp gathers it).
struct SampledOutput {
  std::vector<uint16_t> rows;  // ref.sampling.rows.size() x N
  std::vector<uint16_t> cols;  // ref.sampling.cols.size() x M, one sampled column after another
};
// The same checks on those elements alone; they give the same results as on the whole of C.
ExactCompare compare_exact(const Shape& s, const SampledOutput& C, const Reference& ref);

// ||C - ref||_F / ||ref||_F over the sampled elements (row elements, then column elements not
// already in a sampled row).
double relative_frobenius(const Shape& s, const uint16_t* C, const Reference& ref);
double relative_frobenius(const Shape& s, const SampledOutput& C, const Reference& ref);

// Tolerance of the random-normal check. fp32 accumulation: the only sizable error is rounding
// the output to fp16, at most u = 2^-11 (4.9e-4) relative per element and so in Frobenius norm
// (typically ~2e-4); 6e-4 leaves room for fp32 summation error and nothing else. fp16
// accumulation rounds every partial sum, an error that grows like sqrt(K): several times larger
// at large K (docs/verification.md has the measured values).
double normal_tolerance(Accum accum, int64_t k);

// Values the judge draws afresh for every job, so that no candidate can recognise them: the output
// poison (a NaN whose payload no arithmetic produces), the guard-band byte (every choice makes each
// fp16 pair of guard bytes a NaN, so a read past an input turns the outputs it feeds into NaN), the
// key of the input checksums, and the seed of the sampled rows and columns.
struct JobSecrets {
  uint16_t poison = kPoison;
  uint8_t guard_byte = kGuardByte;
  uint64_t checksum_key = 0x9E3779B97F4A7C15ull;
  uint64_t sampling_seed = 0;
  static JobSecrets draw();  // from std::random_device
};
bool is_nan_guard_byte(uint8_t b);  // 0x7C..0x7F or 0xFC..0xFF

// Input distributions the judge verifies on, each on fresh values: a candidate must compute the
// same function on all of them. scale() is the typical |C| the distribution gives at depth K.
struct InputDistribution {
  const char* name;
  enum class Kind { Normal, Uniform, Binary } kind;
  double a_mean, a_sigma, b_mean, b_sigma;  // Normal: mean, sigma; Uniform: [mean-sigma, mean+sigma]
  bool fp16_range = false;                  // sigma scaled so |C| sits near 4096 at this K
  double a_rms(int64_t k) const;
  double b_rms(int64_t k) const;
  double sigma_scale(int64_t k) const;  // multiplies a_sigma and b_sigma
  double scale(int64_t k) const;        // rms(A) * rms(B) * sqrt(K)
};
const std::vector<InputDistribution>& verification_distributions();

// Per-element tolerance of the GPU comparison against the cuBLAS reference (fp32 accumulation,
// fp16 output, same inputs): |c - r| <= rel * |r| + abs. fp32 accumulation: both results are
// rounded to fp16 (2^-11 relative each) after fp32 sums that differ only in order, so rel = 2^-9,
// abs = 2^-10 * scale covers rounding near zero with room. fp16 accumulation rounds every partial
// sum: an error growing like sqrt(K), so both terms grow with sqrt(K) (docs/verification.md).
struct ElementTolerance {
  double rel = 0, abs = 0;
};
ElementTolerance element_tolerance(Accum accum, int64_t k, double scale);

// What verifying one method on one shape found, with the numbers behind it.
struct Verdict {
  bool ok = true;
  // None, or the first failed check: a classic check (out-of-bounds write, unwritten output,
  // NaN/Inf, exact mismatch, normal error), a finding of the judge or a fault (protocol/outcome.hpp).
  FailureKind failure = FailureKind::None;
  std::string detail;  // one line for humans
  bool sampled = false;
  int64_t exact_checked = 0, exact_mismatches = 0;
  double rel_err = -1, tol = 0;
  // The first failure names the verdict; later ones add their reason to the detail.
  void fail(FailureKind kind, std::string why);
};

}  // namespace cudal2
