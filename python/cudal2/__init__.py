"""cudal2 for PyTorch: ``cudal2.mm(a, b)`` and the custom op ``torch.ops.cudal2.mm``.

C = A @ B for fp16 CUDA tensors through libcudal2_runtime: the kernel tuned for the shape where the
runtime's table has one (or a near neighbour's), cuBLASLt elsewhere (docs/runtime.md).

Arguments (checked, with a ValueError/TypeError/RuntimeError that says what is wrong):
  a  (M, K) float16 on a CUDA device;
  b  (K, N) float16 on the same device: row-major (b.stride() == (N, 1): layout NN) or the
     transposed view of a contiguous (N, K) tensor (b.stride() == (1, K), e.g. ``w.t()``: layout TN);
  accum  "f32" (default) or "f16" accumulation.
Any other strides (or a base address that is not 16-byte aligned) are handled as torch.matmul
handles them: the operand is copied to a contiguous tensor first (an extra allocation and copy per
call). The result is a new contiguous (M, N) float16 tensor. M, N or K = 0 give an empty or zero
result without calling the runtime.

The op runs on ``torch.cuda.current_stream()``; it has a fake (meta) implementation, so it traces
under torch.compile(fullgraph=True) without graph breaks, and it is CUDA-graph capturable. It uses
one runtime handle per device (its workspace allocated once, by the runtime, on first use): make
one call per device before capturing a CUDA graph (or call ``cudal2.init()``), since creating the
handle synchronizes the device. The workspace serves one stream at a time, as docs/runtime.md says.
"""
import threading

import torch

from . import _lib

__all__ = ["mm", "init", "query", "layout_of"]
__version__ = "0.1.0"

_handles = {}
_handles_lock = threading.Lock()
_ACCUM = {"f32": _lib.ACCUM_F32, "f16": _lib.ACCUM_F16}


def _check(a, b, accum):
    """Argument checks shared by the real and the fake implementation (no device access)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"cudal2.mm: a and b must be tensors, got {type(a).__name__} and {type(b).__name__}")
    if accum not in _ACCUM:
        raise ValueError(f"cudal2.mm: accum must be 'f32' or 'f16', got {accum!r}")
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise TypeError(f"cudal2.mm: a and b must be torch.float16, got {a.dtype} and {b.dtype}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"cudal2.mm: a and b must be 2-D, got {a.dim()}-D and {b.dim()}-D "
                         f"(shapes {tuple(a.shape)} and {tuple(b.shape)})")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"cudal2.mm: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                         f"(a's K = {a.shape[1]} != b's K = {b.shape[0]})")
    # The fake implementation sees "meta" inputs when called on meta tensors directly.
    if a.device.type not in ("cuda", "meta") or b.device.type not in ("cuda", "meta"):
        raise RuntimeError(f"cudal2.mm: a and b must be CUDA tensors, got {a.device} and {b.device}")
    if a.device != b.device:
        raise RuntimeError(f"cudal2.mm: a and b must be on the same device, got {a.device} and {b.device}")


def layout_of(b):
    """'nn' if b (K x N) is row-major, 'tn' if it is the transpose of a contiguous N x K tensor,
    None if neither (cudal2.mm then copies it to row-major)."""
    k, n = b.shape
    s0, s1 = b.stride()
    if (s1 == 1 or n == 1) and (s0 == n or k == 1):
        return "nn"
    if (s0 == 1 or k == 1) and (s1 == k or n == 1):
        return "tn"
    return None


def _row_major(a):
    m, k = a.shape
    s0, s1 = a.stride()
    return (s1 == 1 or k == 1) and (s0 == k or m == 1)


def _handle(device):
    """The runtime handle of this CUDA device, created on first use (not during capture)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    h = _handles.get(idx)
    if h is not None:
        return h
    with _handles_lock:
        h = _handles.get(idx)
        if h is None:
            if torch.cuda.is_current_stream_capturing():
                raise RuntimeError("cudal2.mm: first call on this device while capturing a CUDA graph: "
                                   "call cudal2.init() (or cudal2.mm once) before capturing; creating "
                                   "the runtime handle allocates its workspace and synchronizes")
            with torch.cuda.device(idx):
                h = _lib.create_handle()
            _handles[idx] = h
    return h


def init(device=None):
    """Creates the runtime handle for `device` (default: the current one) ahead of the first call."""
    _handle(torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device))


def _mm_impl(a, b, accum):
    _check(a, b, accum)
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return torch.zeros((m, n), dtype=torch.float16, device=a.device)
    if not _row_major(a) or a.data_ptr() % 16:
        a = a.contiguous() if not _row_major(a) else a.clone()
    layout = layout_of(b)
    if layout is None or b.data_ptr() % 16:
        if layout is None:
            b = b.contiguous()
            layout = "nn"
        else:
            b = b.clone(memory_format=torch.preserve_format) if layout == "nn" else b.t().clone().t()
    c = torch.empty((m, n), dtype=torch.float16, device=a.device)
    lib = _lib.load()
    h = _handle(a.device)
    stream = torch.cuda.current_stream(a.device).cuda_stream
    with torch.cuda.device(a.device):
        st = lib.cudal2_gemm(h, _lib.LAYOUT_TN if layout == "tn" else _lib.LAYOUT_NN, _ACCUM[accum], m, n, k,
                             a.data_ptr(), b.data_ptr(), c.data_ptr(), None, 0, stream)
    if st != _lib.SUCCESS:
        raise RuntimeError(f"cudal2.mm({m}x{k} @ {k}x{n}, {layout}): " + _lib.error_text(lib, st))
    return c


@torch.library.custom_op("cudal2::mm", mutates_args=())
def _mm(a: torch.Tensor, b: torch.Tensor, accum: str = "f32") -> torch.Tensor:
    return _mm_impl(a, b, accum)


@_mm.register_fake
def _mm_fake(a, b, accum="f32"):
    _check(a, b, accum)
    return a.new_empty((a.shape[0], b.shape[1]))


def _plain_eager(a, b):
    """True when nothing would observe the op: no compiler tracing, no tensor subclass, no dispatch
    mode. Then the call skips torch.library's dispatch, which costs tens of microseconds per call
    in Python (measured on the H100: 65-140 us per eager call against 23 us for torch.matmul)."""
    if torch.compiler.is_compiling() or type(a) is not torch.Tensor or type(b) is not torch.Tensor:
        return False
    if not (a.is_cuda and b.is_cuda):  # meta, CPU: the op's fake implementation and error paths
        return False
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    return _get_current_dispatch_mode() is None


def mm(a, b, accum="f32"):
    """C = a @ b (fp16, CUDA) through libcudal2_runtime; see the module docstring. Eager calls on
    plain tensors run the implementation directly; under torch.compile, tracing or a dispatch mode
    it is torch.ops.cudal2.mm (the same code, behind its fake implementation)."""
    if _plain_eager(a, b):
        return _mm_impl(a, b, accum)
    return torch.ops.cudal2.mm(a, b, accum)


def query(m, n, k, layout="nn", accum="f32", device=None):
    """Where a call of this shape goes: dict(path, spec, table_shape, workspace_bytes)."""
    lib = _lib.load()
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    info = _lib.DispatchInfo()
    st = lib.cudal2_query(_handle(dev), _lib.LAYOUT_TN if layout == "tn" else _lib.LAYOUT_NN, _ACCUM[accum], m, n,
                          k, info)
    if st != _lib.SUCCESS:
        raise RuntimeError("cudal2_query: " + _lib.error_text(lib, st))
    return {"path": _lib.PATHS.get(info.path, str(info.path)), "spec": (info.spec or b"").decode(),
            "table_shape": (info.table_m, info.table_n, info.table_k), "workspace_bytes": info.workspace_bytes}
