"""torch.ops.cudal2.mm as a Python custom op over the runtime's C API (ctypes): what the package
registers when its C++ op (csrc/op.cpp, built by pip against the installed PyTorch) is absent,
e.g. installed with build isolation or without a CUDA toolkit. Same arguments and results; an
eager call costs tens of microseconds more host time (torch.library's Python dispatch), and there
is no autograd formula."""
import threading

import torch

from . import _check, _lib

_handles = {}
_handles_lock = threading.Lock()
_ACCUM = {"f32": _lib.ACCUM_F32, "f16": _lib.ACCUM_F16}


def handle(idx):
    """The runtime handle of CUDA device idx, created on first use (not during capture)."""
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


def _row_major(a):
    m, k = a.shape
    s0, s1 = a.stride()
    return (s1 == 1 or k == 1) and (s0 == k or m == 1)


def mm_impl(a, b, accum):
    _check.check(a, b, accum)
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return torch.zeros((m, n), dtype=torch.float16, device=a.device)
    if not _row_major(a) or a.data_ptr() % 16:
        a = a.contiguous() if not _row_major(a) else a.clone()
    layout = _check.layout_of(b)
    if layout is None or b.data_ptr() % 16:
        if layout is None:
            b = b.contiguous()
            layout = "nn"
        else:
            b = b.clone(memory_format=torch.preserve_format) if layout == "nn" else b.t().clone().t()
    c = torch.empty((m, n), dtype=torch.float16, device=a.device)
    lib = _lib.load()
    idx = a.device.index if a.device.index is not None else torch.cuda.current_device()
    h = handle(idx)
    stream = torch.cuda.current_stream(a.device).cuda_stream
    with torch.cuda.device(a.device):
        st = lib.cudal2_gemm(h, _lib.LAYOUT_TN if layout == "tn" else _lib.LAYOUT_NN, _ACCUM[accum], m, n, k,
                             a.data_ptr(), b.data_ptr(), c.data_ptr(), None, 0, stream)
    if st != _lib.SUCCESS:
        raise RuntimeError(f"cudal2.mm({m}x{k} @ {k}x{n}, {layout}): " + _lib.error_text(lib, st))
    return c


def register():
    """Registers cudal2::mm (with its fake implementation) from Python."""

    @torch.library.custom_op("cudal2::mm", mutates_args=())
    def _mm(a: torch.Tensor, b: torch.Tensor, accum: str = "f32") -> torch.Tensor:
        return mm_impl(a, b, accum)

    return _mm
