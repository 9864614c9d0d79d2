"""cudal2 for PyTorch: ``cudal2.mm(a, b)``, the custom op ``torch.ops.cudal2.mm``, and
``cudal2.Linear`` / ``cudal2.patch(model)`` for nn.Linear layers.

C = A @ B for fp16 CUDA tensors through libcudal2_runtime: the kernel tuned for the shape where the
runtime's table (the one of this GPU) has one, cuBLASLt elsewhere (docs/runtime.md).

Arguments (checked, with a ValueError/TypeError/RuntimeError that says what is wrong):
  a  (M, K) float16 on a CUDA device;
  b  (K, N) float16 on the same device: row-major (b.stride() == (N, 1): layout NN) or the
     transposed view of a contiguous (N, K) tensor (b.stride() == (1, K), e.g. ``w.t()``: layout TN);
  accum  "f32" (default) or "f16" accumulation.
Any other strides (or a base address that is not 16-byte aligned) are handled as torch.matmul
handles them: the operand is copied to a contiguous tensor first (an extra allocation and copy per
call). The result is a new contiguous (M, N) float16 tensor. M, N or K = 0 give an empty or zero
result without calling the runtime.

The op is registered from C++ (csrc/op.cpp, built by ``pip install --no-build-isolation ./python``
against the installed PyTorch): an eager call goes through PyTorch's dispatcher once, as
torch.matmul's does. It has an autograd formula (dA = dC B^T, dB = A^T dC, through the same op),
a fake implementation (traces under torch.compile(fullgraph=True) without graph breaks), and is
CUDA-graph capturable. Without the compiled op (a build without PyTorch's headers or a CUDA
toolkit) the package registers the same op from Python instead (``cudal2.BACKEND`` says which):
slower to call eagerly and without autograd.

The op runs on ``torch.cuda.current_stream()`` and uses one runtime handle per device (its
workspace allocated once, by the runtime, on first use): make one call per device before capturing
a CUDA graph (or call ``cudal2.init()``), since creating the handle synchronizes the device. The
workspace serves one stream at a time, as docs/runtime.md says.
"""
import ctypes
import glob
import os

import torch

from . import _check, _lib
from ._check import layout_of

__all__ = ["mm", "init", "query", "tune_wait", "layout_of", "Linear", "patch", "BACKEND"]
__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_extension():
    """Loads the C++ op (cudal2/_C*.so) and hands it the runtime library; False if there is none
    (or CUDAL2_PYTHON_OP=1 asks for the Python op)."""
    if os.environ.get("CUDAL2_PYTHON_OP") == "1":
        return False
    found = sorted(glob.glob(os.path.join(_HERE, "_C*.so")))
    if not found:
        return False
    torch.ops.load_library(found[0])
    return True


if _load_extension():
    BACKEND = "c++"
    _runtime_set = False

    def _ensure_runtime():
        global _runtime_set
        if not _runtime_set:
            torch.ops.cudal2._set_runtime(_lib.path())
            _runtime_set = True

    def _handle(idx):
        _ensure_runtime()
        return torch.ops.cudal2._handle(idx)

    # The runtime is loaded at import where it can be (a CPU-only machine without a built library
    # still imports: meta tensors, tracing); a call without it says why.
    try:
        _ensure_runtime()
    except RuntimeError:
        pass
else:
    from . import _pyop

    BACKEND = "python"
    _pyop.register()
    _handle = _pyop.handle

_op = torch.ops.cudal2.mm.default


@torch.library.register_fake("cudal2::mm")
def _mm_fake(a, b, accum="f32"):
    _check.check(a, b, accum)
    return a.new_empty((a.shape[0], b.shape[1]))


def mm(a, b, accum="f32"):
    """C = a @ b (fp16, CUDA) through libcudal2_runtime; see the module docstring."""
    return _op(a, b, accum)


if BACKEND == "c++":
    # The op itself: no Python frame between the caller and the dispatcher.
    mm = _op  # noqa: F811


def _device_index(device):
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    return dev.index if dev.index is not None else torch.cuda.current_device()


def init(device=None):
    """Creates the runtime handle for `device` (default: the current one) ahead of the first call."""
    _handle(_device_index(device))


def query(m, n, k, layout="nn", accum="f32", device=None):
    """Where a call of this shape goes: dict(path, spec, table_shape, workspace_bytes)."""
    lib = _lib.load()
    info = _lib.DispatchInfo()
    st = lib.cudal2_query(_handle(_device_index(device)), _lib.LAYOUT_TN if layout == "tn" else _lib.LAYOUT_NN,
                          _lib.ACCUM_F16 if accum == "f16" else _lib.ACCUM_F32, m, n, k, info)
    if st != _lib.SUCCESS:
        raise RuntimeError("cudal2_query: " + _lib.error_text(lib, st))
    return {"path": _lib.PATHS.get(info.path, str(info.path)), "spec": (info.spec or b"").decode(),
            "table_shape": (info.table_m, info.table_n, info.table_k), "workspace_bytes": info.workspace_bytes}



def tune_wait(device=None):
    """Waits until the runtime has finished tuning, in the background, the shapes it has seen
    without a table entry (the default for such shapes; docs/runtime.md); returns how many it has
    tuned. Call it after a warm-up, before timing."""
    lib = _lib.load()
    if not hasattr(lib, "cudal2_tune_wait"):
        return 0
    tuned = ctypes.c_long(0)
    st = lib.cudal2_tune_wait(_handle(_device_index(device)), ctypes.byref(tuned))
    if st != _lib.SUCCESS:
        raise RuntimeError("cudal2_tune_wait: " + _lib.error_text(lib, st))
    return tuned.value


from .nn import Linear, patch  # noqa: E402
