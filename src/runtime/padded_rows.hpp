#pragma once
// Output rows off 16 bytes (TN, N % 8 != 0): cuBLASLt's kernels for 2-byte-aligned C ran 2-6x its
// aligned kernels' time (H200: 2048x4101x4096 559 us against 94 for 2048x4104x4096, 8x50257x4096
// 256 against 103; bench/results/h200/odd-rows/), and its aligned kernels take neither such a C nor
// an odd width with a padded row stride. So the runtime has cuBLASLt's aligned kernels compute the
// first N rounded down to 8 columns of C into its workspace with the row stride rounded up to 8,
// computes the last few columns itself, and copies the rows into the caller's C
// (runtime/padded_rows.cu).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudal2::rt {

// The padded row stride (in elements) for a TN problem whose C rows are off 16 bytes while A's and
// B's rows are not (K % 8 == 0), at least 8 columns wide, else 0 (no padding).
inline int64_t padded_ldc(bool tn, int64_t n, int64_t k) {
  return tn && n % 8 != 0 && n >= 8 && k % 8 == 0 ? (n + 7) / 8 * 8 : 0;
}

// Bytes of workspace the padded C of an M-row problem takes (a multiple of 256).
inline size_t padded_c_bytes(int64_t m, int64_t ldc) { return (static_cast<size_t>(m * ldc) * 2 + 255) / 256 * 256; }

// Rows per call when the workspace cannot hold the whole padded C: the most, in multiples of 64,
// whose padded C takes at most half of `room` bytes (the other half is cuBLASLt's workspace); 0
// when fewer than 64 fit. The call then runs the rows in chunks of that many (the last chunk
// ending at M, overlapping the one before: one plan serves every chunk, and the rows computed
// twice get the same bits).
inline int64_t padded_chunk_rows(size_t room, int64_t ldc) {
  const int64_t r = static_cast<int64_t>(room / 2 / (static_cast<size_t>(ldc) * 2)) / 64 * 64;
  return r >= 64 ? r : 0;
}

// With the first n / 8 * 8 columns of rows row0..row0+rows-1 of C written into the padded C (rows
// of ldc elements), its last columns from A (those rows: rows x k, A pointing at the first) and B
// (TN: n x k, rows packed), fp32 accumulation; then those rows of C (m x n fp16, rows packed, C
// pointing at row 0) from the padded C. On stream s.
cudaError_t finish_padded_c(const void* A, const void* B, void* padded, int64_t ldc, void* C, int64_t row0,
                            int64_t rows, int64_t n, int64_t k, cudaStream_t s);

}  // namespace cudal2::rt
