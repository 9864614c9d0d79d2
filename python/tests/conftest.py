import os
import sys

import pytest

# Run from the source tree too (PYTHONPATH unset): the package next to this folder.
_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("CUDAL2_TEST_INSTALLED") != "1" and _PKG_PARENT not in sys.path:
    sys.path.insert(0, _PKG_PARENT)


def _gpu_reason():
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_reason()
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
