"""nn.Linear through cudal2.mm, for inference: ``cudal2.Linear`` and ``cudal2.patch(model)``.

y = x W^T + bias with W the layer's (N, K) fp16 weight on a CUDA device: x is flattened to (M, K)
over its leading dimensions and multiplied by W.t() (layout TN, the nn.Linear case the runtime's
tables hold), the bias added in place. Gradients flow through cudal2.mm's autograd formula where
the compiled op is installed, but the layer is meant for inference (the backward pass is not tuned).
"""
import torch

from . import BACKEND as _BACKEND
from . import mm as _mm  # the package defines mm before importing this module

# torch.ops.cudal2.linear where the C++ op is loaded (it registers it), else the Python forward.
_linear = torch.ops.cudal2.linear.default if _BACKEND == "c++" else None


class Linear(torch.nn.Linear):
    """A drop-in nn.Linear whose forward runs cudal2.mm when its weight and input are fp16 CUDA
    tensors, and nn.Linear's own forward otherwise (other dtypes, CPU)."""

    def forward(self, x):
        if _linear is not None:
            # The C++ op: the checks, the flattening and the fallback to nn.Linear's product in
            # one dispatcher call (csrc/op.cpp).
            b = self.bias
            if b is None:
                return _linear(x, self.weight)
            if x.dtype != torch.float16 or not x.is_cuda:
                return torch.nn.functional.linear(x, self.weight, b)
            y = _linear(x, self.weight)
            return y.add_(b) if not torch.is_grad_enabled() else y + b
        w = self.weight
        if x.dtype != torch.float16 or w.dtype != torch.float16 or not x.is_cuda or not w.is_cuda:
            return super().forward(x)
        lead = x.shape[:-1]
        y = _mm(x.reshape(-1, x.shape[-1]), w.t())
        if self.bias is not None:
            y = y.add_(self.bias) if not torch.is_grad_enabled() else y + self.bias
        return y.reshape(*lead, w.shape[0])

    @classmethod
    def from_linear(cls, lin):
        """A cudal2.Linear sharing lin's parameters (no copy)."""
        new = cls.__new__(cls)
        torch.nn.Module.__init__(new)
        new.in_features, new.out_features = lin.in_features, lin.out_features
        new.weight = lin.weight
        new.bias = lin.bias
        return new


def patch(model, filter=None):
    """Replaces every nn.Linear of `model` in place with a cudal2.Linear sharing its parameters and
    returns the model (a bare nn.Linear is returned replaced). filter(name, module) -> bool, with
    the module's dotted name, limits which ones."""
    if type(model) is torch.nn.Linear:
        return Linear.from_linear(model) if filter is None or filter("", model) else model
    for name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if type(child) is torch.nn.Linear and (filter is None or filter(full, child)):
                setattr(mod, child_name, Linear.from_linear(child))
    return model
