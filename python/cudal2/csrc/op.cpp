// torch.ops.cudal2.mm registered from C++ (TORCH_LIBRARY), built against the installed PyTorch by
// `pip install ./python` (setup.py). An eager call is then one trip through PyTorch's dispatcher,
// as torch.matmul's is, instead of torch.library's Python custom-op path (tens of microseconds
// of host time per call). Kernels:
//   CUDA      the call: argument checks, copies of operands the runtime cannot take as they are
//             (strides, alignment), cudal2_gemm on the current stream into a new tensor
//   CPU       the same checks, so a CPU tensor gets the error message of the Python API
//   Autograd  dC -> dA = dC B^T and dB = A^T dC, both through this op again
// The fake (meta) implementation is Python's (cudal2/__init__.py, torch.library.register_fake).
// The runtime library is the one cudal2/_lib.py found; Python hands its path to
// torch.ops.cudal2._set_runtime, which dlopens it (the same file: the same loaded copy).
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace {

// The C API of include/cudal2/cudal2.h, declared here because the package is built from python/
// alone (pip copies only this folder): status 0 = success, layout 0 = NN / 1 = TN, accum 0 = f32 /
// 1 = f16, the handle an opaque pointer.
using Handle = void*;
using CreateFn = int (*)(Handle*, const void*);
using GemmFn = int (*)(Handle, int, int, int64_t, int64_t, int64_t, const void*, const void*, void*, void*, size_t,
                       void*);
using StatusFn = const char* (*)(int);
using LastErrorFn = const char* (*)();

struct Runtime {
  CreateFn create = nullptr;
  GemmFn gemm = nullptr;
  StatusFn status_string = nullptr;
  LastErrorFn last_error = nullptr;
};

Runtime g_rt;
std::mutex g_mu;
constexpr int kMaxDevices = 64;
std::array<std::atomic<Handle>, kMaxDevices> g_handles{};

void set_runtime(const std::string& path) {
  const std::lock_guard<std::mutex> lock(g_mu);
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(lib, "cudal2: cannot load ", path, ": ", dlerror());
  Runtime r;
  r.create = reinterpret_cast<CreateFn>(dlsym(lib, "cudal2_create"));
  r.gemm = reinterpret_cast<GemmFn>(dlsym(lib, "cudal2_gemm"));
  r.status_string = reinterpret_cast<StatusFn>(dlsym(lib, "cudal2_status_string"));
  r.last_error = reinterpret_cast<LastErrorFn>(dlsym(lib, "cudal2_last_error"));
  TORCH_CHECK(r.create && r.gemm && r.status_string && r.last_error, "cudal2: ", path,
              " lacks the cudal2 C API (include/cudal2/cudal2.h)");
  g_rt = r;
}

// The runtime handle of a device, made by its first call (which allocates and zeroes the
// workspace and synchronizes: refused while the current stream is being captured).
Handle handle(int device) {
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "cudal2: device index ", device, " out of range");
  if (Handle h = g_handles[device].load(std::memory_order_acquire)) return h;
  const std::lock_guard<std::mutex> lock(g_mu);
  if (Handle h = g_handles[device].load(std::memory_order_relaxed)) return h;
  TORCH_CHECK(g_rt.create, "cudal2: the runtime library is not loaded (import cudal2 first)");
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  TORCH_CHECK(c10::cuda::currentStreamCaptureStatusMayInitCtx() == c10::cuda::CaptureStatus::None,
              "cudal2.mm: first call on this device while capturing a CUDA graph: call cudal2.init() (or "
              "cudal2.mm once) before capturing; creating the runtime handle allocates its workspace and "
              "synchronizes");
  Handle h = nullptr;
  const int st = g_rt.create(&h, nullptr);
  TORCH_CHECK(st == 0, "cudal2_create failed: ", g_rt.status_string(st), ": ", g_rt.last_error());
  g_handles[device].store(h, std::memory_order_release);
  return h;
}

int accum_id(c10::string_view accum) {
  TORCH_CHECK_VALUE(accum == "f32" || accum == "f16", "cudal2.mm: accum must be 'f32' or 'f16', got '",
                    std::string(accum), "'");
  return accum == "f32" ? 0 : 1;
}

// The checks of the Python API (cudal2/__init__.py: _check), with the same exception types.
void check(const at::Tensor& a, const at::Tensor& b, c10::string_view accum) {
  accum_id(accum);
  TORCH_CHECK_TYPE(a.scalar_type() == at::kHalf && b.scalar_type() == at::kHalf,
                   "cudal2.mm: a and b must be torch.float16, got ", a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2, "cudal2.mm: a and b must be 2-D, got ", a.dim(), "-D and ", b.dim(),
                    "-D (shapes ", a.sizes(), " and ", b.sizes(), ")");
  TORCH_CHECK_VALUE(a.size(1) == b.size(0), "cudal2.mm: shapes ", a.sizes(), " and ", b.sizes(),
                    " cannot be multiplied (a's K = ", a.size(1), " != b's K = ", b.size(0), ")");
  TORCH_CHECK(a.is_cuda() && b.is_cuda(), "cudal2.mm: a and b must be CUDA tensors, got ", a.device(), " and ",
              b.device());
  TORCH_CHECK(a.device() == b.device(), "cudal2.mm: a and b must be on the same device, got ", a.device(), " and ",
              b.device());
}

bool row_major(const at::Tensor& t) {
  return (t.stride(1) == 1 || t.size(1) == 1) && (t.stride(0) == t.size(1) || t.size(0) == 1);
}
bool col_major(const at::Tensor& t) {
  return (t.stride(0) == 1 || t.size(0) == 1) && (t.stride(1) == t.size(0) || t.size(1) == 1);
}
bool aligned(const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

at::Tensor mm_cuda(const at::Tensor& a_in, const at::Tensor& b_in, c10::string_view accum) {
  check(a_in, b_in, accum);
  const int64_t m = a_in.size(0), k = a_in.size(1), n = b_in.size(1);
  if (m == 0 || n == 0 || k == 0) return at::zeros({m, n}, a_in.options());
  // What the runtime takes: A row-major; B row-major (NN) or the transpose of a row-major N x K
  // (TN); all 16-byte aligned. Anything else is copied first, as torch.matmul would.
  at::Tensor a = a_in;
  if (!row_major(a)) a = a.contiguous();  // a fresh allocation: aligned
  if (!aligned(a)) a = a.clone(at::MemoryFormat::Contiguous);
  at::Tensor b = b_in;
  int layout = row_major(b) ? 0 : col_major(b) ? 1 : -1;
  if (layout < 0) b = b.contiguous(), layout = 0;
  if (!aligned(b))
    b = layout == 1 ? b.t().clone(at::MemoryFormat::Contiguous).t() : b.clone(at::MemoryFormat::Contiguous);
  const c10::cuda::CUDAGuard guard(a.device());
  at::Tensor c = at::empty({m, n}, a.options());
  const int device = a.device().index();
  const Handle h = handle(device);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  const int st =
      g_rt.gemm(h, layout, accum_id(accum), m, n, k, a.data_ptr(), b.data_ptr(), c.data_ptr(), nullptr, 0, stream);
  TORCH_CHECK(st == 0, "cudal2.mm(", m, "x", k, " @ ", k, "x", n, ", ", layout ? "tn" : "nn",
              "): ", g_rt.status_string(st), ": ", g_rt.last_error());
  return c;
}

// A CPU tensor: the Python API's message (checks first: a wrong dtype is still a TypeError).
at::Tensor mm_cpu(const at::Tensor& a, const at::Tensor& b, c10::string_view accum) {
  check(a, b, accum);  // throws: a CPU tensor is not a CUDA one
  return {};
}

const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view)>& mm_op() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("cudal2::mm", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view)>();
  return op;
}

class MmFunction : public torch::autograd::Function<MmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::string& accum) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["accum"] = accum;
    const at::AutoDispatchBelowADInplaceOrView below;
    return mm_op().call(a, b, accum);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1], &g = grads[0];
    const std::string accum = ctx->saved_data["accum"].toStringRef();
    at::Tensor ga, gb;
    // dA (M x K) = dC (M x N) B^T: B^T is N x K, a layout the op takes as it is (TN if B is NN).
    if (ctx->needs_input_grad(0)) ga = mm_op().call(g, b.t(), accum);
    if (ctx->needs_input_grad(1)) {
      // dB (K x N) = A^T dC. Where B is the transpose of an N x K weight (nn.Linear), compute
      // dB^T = dC^T A instead, so the weight's gradient comes out contiguous.
      gb = col_major(b) && !row_major(b) ? mm_op().call(g.t(), a, accum).t() : mm_op().call(a.t(), g, accum);
    }
    return {ga, gb, at::Tensor()};
  }
};

at::Tensor mm_autograd(const at::Tensor& a, const at::Tensor& b, c10::string_view accum) {
  // No gradient wanted: straight to the kernel below, without an autograd node.
  if (!at::GradMode::is_enabled() || (!a.requires_grad() && !b.requires_grad())) {
    const at::AutoDispatchBelowADInplaceOrView below;
    return mm_op().call(a, b, accum);
  }
  return MmFunction::apply(a, b, std::string(accum));
}

// nn.Linear's product y = x W^T for cudal2.Linear in one dispatcher call: x flattened to
// (M, K) over its leading dimensions, times W.t() (layout TN, what the runtime's tables hold).
// Everything that is not an fp16 CUDA pair goes to at::linear, as nn.Linear would. Composite
// (CompositeImplicitAutograd): autograd and tracing see the reshapes and cudal2::mm it is made of.
// One op instead of the half-dozen Python-level tensor calls of a Python forward: the host time
// of a layer is what decides small batches in eager mode.
at::Tensor linear(const at::Tensor& x, const at::Tensor& w) {
  if (x.scalar_type() != at::kHalf || w.scalar_type() != at::kHalf || !x.is_cuda() || !w.is_cuda() || x.dim() < 1 ||
      w.dim() != 2)
    return at::linear(x, w);
  const int64_t k = x.size(-1);
  const at::Tensor y = mm_op().call(x.dim() == 2 ? x : x.reshape({-1, k}), w.t(), "f32");
  if (x.dim() == 2) return y;
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  sizes.back() = w.size(0);
  return y.view(sizes);
}

// Configuration ops (Python calls them once): not for users.
void set_runtime_op(c10::string_view path) { set_runtime(std::string(path)); }
int64_t handle_op(int64_t device) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(handle(int(device)))); }

}  // namespace

TORCH_LIBRARY(cudal2, m) {
  m.def("mm(Tensor a, Tensor b, str accum='f32') -> Tensor");
  m.def("linear(Tensor x, Tensor w) -> Tensor");
  m.def("_set_runtime(str path) -> ()", &set_runtime_op);
  m.def("_handle(int device) -> int", &handle_op);
}

TORCH_LIBRARY_IMPL(cudal2, CUDA, m) { m.impl("mm", &mm_cuda); }
TORCH_LIBRARY_IMPL(cudal2, CPU, m) { m.impl("mm", &mm_cpu); }
TORCH_LIBRARY_IMPL(cudal2, Autograd, m) { m.impl("mm", &mm_autograd); }
TORCH_LIBRARY_IMPL(cudal2, CompositeImplicitAutograd, m) { m.impl("linear", &linear); }
