/* C ABI of the torch.matmul plugin (libcudal2_torch.so). cudal2 dlopens it, so the main
 * library and CLI never link PyTorch. Return 0 on success; on failure write a message into err. */
#ifndef CUDAL2_TORCH_ABI_H
#define CUDAL2_TORCH_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAL2_TORCH_ABI_VERSION 1

int cudal2_torch_abi_version(void);
const char* cudal2_torch_version(void);
/* Wrap existing device buffers as tensors once. A row-major MxK, B KxN (row-major, or column-major
 * when b_col_major), C row-major MxN, all fp16 on the current device. *handle receives the binding. */
int cudal2_torch_bind(const void* A, const void* B, void* C, int64_t m, int64_t n, int64_t k, int b_col_major,
                      void** handle, char* err, size_t errlen);
/* C = torch.matmul(A, B) (at::mm_out into C: no allocation) on the given cudaStream_t. */
int cudal2_torch_run(void* handle, void* stream, char* err, size_t errlen);
void cudal2_torch_unbind(void* handle);

#ifdef __cplusplus
}
#endif
#endif
