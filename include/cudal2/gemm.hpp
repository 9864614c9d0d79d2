// C++ interface of the cudal2 runtime (include/cudal2/cudal2.h is the C API underneath).
//   cudal2::Handle h;                                   // once: workspace, cuBLASLt, caches
//   cudal2::gemm(h, CUDAL2_LAYOUT_TN, CUDAL2_ACCUM_F32, m, n, k, A, B, C, stream);  // throws
//   if (auto st = cudal2::try_gemm(...); st != CUDAL2_STATUS_SUCCESS) ...        // no throw
#pragma once
#include <cudal2/cudal2.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cudal2 {

class Error : public std::runtime_error {
 public:
  explicit Error(cudal2_status_t status)
      : std::runtime_error(std::string("cudal2: ") + cudal2_status_string(status) + ": " + cudal2_last_error()),
        status_(status) {}
  cudal2_status_t status() const noexcept { return status_; }

 private:
  cudal2_status_t status_;
};

inline void check(cudal2_status_t st) {
  if (st != CUDAL2_STATUS_SUCCESS) throw Error(st);
}

// Owns a cudal2_handle_t. Movable, not copyable.
class Handle {
 public:
  Handle() { check(cudal2_create(&h_, nullptr)); }
  explicit Handle(const cudal2_options& opt) { check(cudal2_create(&h_, &opt)); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      if (h_) cudal2_destroy(h_);
      h_ = o.h_;
      o.h_ = nullptr;
    }
    return *this;
  }
  ~Handle() {
    if (h_) cudal2_destroy(h_);
  }
  cudal2_handle_t get() const noexcept { return h_; }
  // Waits for the handle's background tuning (cudal2_tune_wait); returns the shapes tuned so far.
  long tune_wait() const {
    long tuned = 0;
    check(cudal2_tune_wait(h_, &tuned));
    return tuned;
  }

 private:
  cudal2_handle_t h_ = nullptr;
};

// Status-returning call (no exceptions).
inline cudal2_status_t try_gemm(const Handle& h, cudal2_layout_t layout, cudal2_accum_t accum, std::int64_t m,
                                std::int64_t n, std::int64_t k, const void* A, const void* B, void* C,
                                cudal2_stream_t stream = nullptr, void* workspace = nullptr,
                                std::size_t workspace_bytes = 0) noexcept {
  return cudal2_gemm(h.get(), layout, accum, m, n, k, A, B, C, workspace, workspace_bytes, stream);
}

// Throws cudal2::Error (status + message) on failure.
inline void gemm(const Handle& h, cudal2_layout_t layout, cudal2_accum_t accum, std::int64_t m, std::int64_t n,
                 std::int64_t k, const void* A, const void* B, void* C, cudal2_stream_t stream = nullptr,
                 void* workspace = nullptr, std::size_t workspace_bytes = 0) {
  check(try_gemm(h, layout, accum, m, n, k, A, B, C, stream, workspace, workspace_bytes));
}

// The process-wide default handle (created by the first call).
inline void gemm(cudal2_layout_t layout, cudal2_accum_t accum, std::int64_t m, std::int64_t n, std::int64_t k,
                 const void* A, const void* B, void* C, cudal2_stream_t stream = nullptr) {
  check(cudal2_gemm(nullptr, layout, accum, m, n, k, A, B, C, nullptr, 0, stream));
}

inline cudal2_dispatch_info query(const Handle& h, cudal2_layout_t layout, cudal2_accum_t accum, std::int64_t m,
                                  std::int64_t n, std::int64_t k) {
  cudal2_dispatch_info info{};
  check(cudal2_query(h.get(), layout, accum, m, n, k, &info));
  return info;
}

}  // namespace cudal2
