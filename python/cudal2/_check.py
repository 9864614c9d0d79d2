"""Argument checks of cudal2.mm shared by the fake implementation and the Python fallback op (the
C++ op, csrc/op.cpp, makes the same checks with the same exception types). No device access."""
import torch

ACCUMS = ("f32", "f16")


def check(a, b, accum):
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"cudal2.mm: a and b must be tensors, got {type(a).__name__} and {type(b).__name__}")
    if accum not in ACCUMS:
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
