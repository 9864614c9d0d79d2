"""Bundles the prebuilt runtime library into the package (a platform wheel) and compiles the C++ op
(cudal2/csrc/op.cpp) against the PyTorch installed in the building Python.

`pip install --no-build-isolation ./python` after `bash scripts/build.sh` (without
--no-build-isolation pip builds in a fresh environment that has no PyTorch, and the package falls
back to its Python op). The library is taken from $CUDAL2_RUNTIME_LIB, else from the repository's
build/src/runtime/. Without one the build fails with a message saying so (set
CUDAL2_RUNTIME_LIB=none to build a package that finds the library at import time instead:
$CUDAL2_RUNTIME_LIB or the dynamic linker's search path). CUDAL2_NO_EXTENSION=1 skips the C++ op.
"""
import os
import shutil
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LIBNAME = "libcudal2_runtime.so"


def find_runtime():
    env = os.environ.get("CUDAL2_RUNTIME_LIB")
    if env:
        if env == "none":
            return None
        if not os.path.isfile(env):
            sys.exit(f"cudal2 setup: CUDAL2_RUNTIME_LIB={env} is not a file")
        return env
    cand = os.path.join(HERE, "..", "build", "src", "runtime", LIBNAME)
    if os.path.isfile(cand):
        return cand
    sys.exit("cudal2 setup: libcudal2_runtime.so not found: build it first (bash scripts/build.sh) "
             "or set CUDAL2_RUNTIME_LIB=/path/to/libcudal2_runtime.so (or =none to load it at run time)")


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = find_runtime()
        if lib:
            dst = os.path.join(self.build_lib, "cudal2", "lib")
            os.makedirs(dst, exist_ok=True)
            # The real file, not the versioned symlink chain.
            shutil.copyfile(os.path.realpath(lib), os.path.join(dst, LIBNAME))
            print(f"cudal2 setup: bundled {os.path.realpath(lib)}")


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: platform-specific."""

    def has_ext_modules(self):
        return True


def extension():
    """The C++ op, built with PyTorch's own extension helper (its headers, flags and ABI), or None
    where that cannot be (no PyTorch in this Python, no CUDA toolkit, CUDAL2_NO_EXTENSION=1)."""
    if os.environ.get("CUDAL2_NO_EXTENSION") == "1":
        return None
    try:
        from torch.utils import cpp_extension
    except ImportError:
        print("cudal2 setup: PyTorch not importable here: no C++ op (the package registers its Python op)")
        return None
    if cpp_extension.CUDA_HOME is None:
        print("cudal2 setup: no CUDA toolkit found (CUDA_HOME): no C++ op (the package registers its Python op)")
        return None
    # Only host code: the op calls the runtime library; it needs CUDA's headers and c10_cuda.
    # -g0: Python's own CFLAGS (sysconfig) carry -g, and debug information for PyTorch's headers was
    # half of the op's compile time (70 s of CPU on 2 cores, 33 s without) and 96% of its object.
    ext = cpp_extension.CUDAExtension("cudal2._C", ["cudal2/csrc/op.cpp"], extra_compile_args={"cxx": ["-O2", "-g0"]},
                                      libraries=["dl"])
    return ext, cpp_extension.BuildExtension.with_options(use_ninja=False)


ext = extension()
cmdclass = {"build_py": BuildPy}
if ext:
    cmdclass["build_ext"] = ext[1]
setup(cmdclass=cmdclass, distclass=BinaryDistribution, ext_modules=[ext[0]] if ext else [])
