#pragma once
// NVIDIA's libraries behind the Method interface.
#include <string>
#include <vector>

#include "measure/method.hpp"

namespace cudal2 {

// All baseline names, in report order: cublas-nn, cublas-tn, cublaslt-heuristic-{nn,tn},
// cublaslt-autotune-{nn,tn}, torch-matmul: what cudal2 is measured against.
const std::vector<std::string>& baseline_names();
// `cudal2 bench`'s default ("all"): the baselines and the product beside them, runtime-nn and
// runtime-tn, so the first table a user sees has cudal2's own rows.
const std::vector<std::string>& default_method_names();
// runtime-nn, runtime-tn: libcudal2_runtime itself (src/baselines/runtime.cpp), measured like the
// baselines; never a reference of the ratios unless --reference names it.
// runtime-b-{nn,tn}, runtime-c-{nn,tn}: two more builds of it ($CUDAL2_RUNTIME_LIB_B, _C), so that
// tables are compared with each other in one process, on the same inputs.
const std::vector<std::string>& runtime_method_names();
// The runtime method of a slot ("", "b" or "c") and layout: runtime-nn, runtime-b-tn, ...
std::string runtime_method_name(const std::string& slot, Layout layout);
// A name of either list.
bool is_baseline(const std::string& name);
// Throws InputError for an unknown name.
MethodPtr make_baseline(const std::string& name, Accum accum);

// How many algorithms cuBLASLt auto-tuning asks the heuristic for (the paper's 100).
inline constexpr int kAutotuneRequest = 100;
// Rankings of auto-tuning's candidates (src/baselines/cublaslt.cpp), the last deciding.
inline constexpr int kAutotunePasses = 2;
// Workspace handed to cuBLAS/cuBLASLt (NVIDIA recommends 32 MiB on Hopper).
inline constexpr size_t kLibraryWorkspace = size_t{32} << 20;

MethodPtr make_cublas(Layout layout, Accum accum);
MethodPtr make_cublaslt(Layout layout, Accum accum, bool autotune);
// torch.matmul through the optional plugin (libcudal2_torch.so); prepare() throws MethodUnsupported
// with the reason when the plugin or PyTorch is missing.
MethodPtr make_torch(Accum accum);
// libcudal2_runtime (cudal2_gemm, the handle's own workspace), dlopen'ed at run time (never linked);
// prepare() throws MethodUnsupported with the reason when the library is missing or cannot make a handle.
// slot "" is the library under test ($CUDAL2_RUNTIME_LIB or the usual places), "b" and "c" the
// builds named by $CUDAL2_RUNTIME_LIB_B and $CUDAL2_RUNTIME_LIB_C.
MethodPtr make_runtime(Layout layout, Accum accum, const std::string& slot = "");

}  // namespace cudal2
