#pragma once
// Problems, shape grids and input parsing. No CUDA here (docs/architecture.md: core must not touch CUDA).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cudal2 {

// Bad user input (shape, grid, file, option). The CLI prints what() on one line and exits 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// B's storage. NN: B row-major K x N. TN: B column-major K x N (i.e. B^T row-major), the
// cuBLAS "TN" call on row-major data. A is always row-major M x K and C row-major M x N.
enum class Layout { NN, TN };
// Accumulator type. F32 is the paper's default (fp16 in/out, fp32 accumulate); F16 is the
// "F16F16F16F16" variant (CUBLAS_COMPUTE_16F).
enum class Accum { F32, F16 };

std::string_view to_string(Layout l);
std::string_view to_string(Accum a);
Layout parse_layout(std::string_view s);
Accum parse_accum(std::string_view s);

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  friend bool operator==(const Shape& a, const Shape& b) { return a.m == b.m && a.n == b.n && a.k == b.k; }
  std::string str() const;  // "MxNxK"
};

struct Problem {
  Shape shape;
  Layout layout = Layout::NN;
  Accum accum = Accum::F32;
};

// Largest size accepted in any dimension: cuBLAS takes 32-bit m, n, k and leading dimensions.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

// "M,N,K" (also "MxNxK"); throws InputError naming what is wrong.
Shape parse_shape(std::string_view text);
// The lines of a list file (shapes, specs): '#' starts a comment, each line trimmed, blank lines
// skipped; each kept line with its 1-based number, so errors can name it.
struct ListedLine {
  int number = 0;
  std::string text;
};
std::vector<ListedLine> listed_lines(std::string_view text);

// One shape a line (listed_lines). Errors name file and line.
std::vector<Shape> read_shapes_file(const std::string& path);
std::vector<Shape> parse_shapes_text(std::string_view text, const std::string& origin);

// The paper's sizes: M, N, K each in this set.
const std::vector<int64_t>& paper_sizes();
// "paper" (1000 shapes) or "sample" (16 shapes spanning tiny, skinny, square, huge).
std::vector<Shape> grid(std::string_view name);

// Keep shapes whose index i satisfies i % count == index. "I/N" form, 0 <= I < N.
struct Shard {
  int index = 0, count = 1;
};
Shard parse_shard(std::string_view text);
std::vector<Shape> apply_shard(const std::vector<Shape>& shapes, Shard shard);

// Remove repeats, keep first-seen order.
std::vector<Shape> unique_shapes(const std::vector<Shape>& shapes);

}  // namespace cudal2
