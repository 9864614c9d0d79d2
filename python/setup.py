"""Bundles the prebuilt runtime library into the package (a platform wheel).

`pip install ./python` after `bash scripts/build.sh`: the library is taken from
$CUDAL2_RUNTIME_LIB, else from the repository's build/src/runtime/. Without one the build fails
with a message saying so (set CUDAL2_RUNTIME_LIB=none to build a package that finds the library
at import time instead: $CUDAL2_RUNTIME_LIB or the dynamic linker's search path).
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


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
