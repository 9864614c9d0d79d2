"""The cudal2 package's standard-library modules for the bench scripts, loaded from this source
tree without installing or importing the cudal2 package (whose __init__ needs torch):

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/
    from _analysis import gmean, load  # noqa: E402

Every name of python/cudal2/analysis.py's __all__ is re-exported here; python/cudal2/store_csv.py
(a store as CSV files and back) and python/cudal2/replay_judge.py (answers from recorded
measurements) are the modules `store_csv` and `replay_judge`.
"""
import importlib.util
import os
import sys

_PACKAGE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "cudal2"))


def _load(name):
    key = "cudal2_" + name
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, os.path.join(_PACKAGE, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


analysis = _load("analysis")
store_csv = analysis.store_csv  # the one analysis reads stores through (one StoreError class)
replay_judge = _load("replay_judge")
globals().update({name: getattr(analysis, name) for name in analysis.__all__})
__all__ = ["analysis", "store_csv", "replay_judge"] + list(analysis.__all__)
