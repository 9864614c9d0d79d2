"""python/cudal2/analysis.py for the bench scripts, loaded from this source tree without installing
or importing the cudal2 package (whose __init__ needs torch):

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _analysis import gmean, load  # noqa: E402

Every name of the module's __all__ is re-exported here.
"""
import importlib.util
import os
import sys

_NAME = "cudal2_analysis"
if _NAME not in sys.modules:
    _path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "cudal2", "analysis.py")
    _spec = importlib.util.spec_from_file_location(_NAME, os.path.normpath(_path))
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _mod
    _spec.loader.exec_module(_mod)
analysis = sys.modules[_NAME]
globals().update({name: getattr(analysis, name) for name in analysis.__all__})
__all__ = ["analysis"] + list(analysis.__all__)
