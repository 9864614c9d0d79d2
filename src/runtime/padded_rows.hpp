#pragma once
// Output rows off 16 bytes (TN, N % 8 != 0): cuBLASLt's kernels for 2-byte-aligned C ran 2.5-6x
// its aligned kernels' time (H200, e.g. 2048x4101x4096 555 us against 94 for 2048x4104x4096;
// bench/results/h200/odd-rows/), so the runtime has cuBLASLt write C into its workspace with the
// row stride rounded up to 8 elements (TMA and 16-byte stores allowed) and copies the rows into
// the caller's C (runtime/padded_rows.cu).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudal2::rt {

// The padded row stride (in elements) for a TN problem whose C rows are off 16 bytes while A's and
// B's rows are not (K % 8 == 0), else 0 (no padding).
inline int64_t padded_ldc(bool tn, int64_t n, int64_t k) { return tn && n % 8 != 0 && k % 8 == 0 ? (n + 7) / 8 * 8 : 0; }

// Bytes of workspace the padded C of an M-row problem takes (a multiple of 256).
inline size_t padded_c_bytes(int64_t m, int64_t ldc) { return (static_cast<size_t>(m * ldc) * 2 + 255) / 256 * 256; }

// C (m x n fp16, rows packed) from src (m rows of ldc >= n elements), on stream s.
cudaError_t copy_padded_rows(const void* src, int64_t ldc, void* C, int64_t m, int64_t n, cudaStream_t s);

}  // namespace cudal2::rt
