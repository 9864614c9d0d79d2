"""ctypes binding of libcudal2_runtime's C API (include/cudal2/cudal2.h). No torch here."""
import ctypes
import os
import threading

SUCCESS = 0
LAYOUT_NN, LAYOUT_TN = 0, 1
ACCUM_F32, ACCUM_F16 = 0, 1
PATHS = {0: "table-kernel", 1: "neighbour-kernel", 2: "cublaslt", 3: "bucket-kernel"}

_HERE = os.path.dirname(os.path.abspath(__file__))
_lock = threading.Lock()
_lib = None
_path = None


class DispatchInfo(ctypes.Structure):
    _fields_ = [("path", ctypes.c_int), ("spec", ctypes.c_char_p), ("table_m", ctypes.c_int64),
                ("table_n", ctypes.c_int64), ("table_k", ctypes.c_int64), ("workspace_bytes", ctypes.c_size_t)]


def candidates():
    """Where the library is looked for, in order."""
    out = []
    env = os.environ.get("CUDAL2_RUNTIME_LIB")
    if env:
        out.append(env)
    out.append(os.path.join(_HERE, "lib", "libcudal2_runtime.so"))  # bundled by pip install
    out.append(os.path.join(_HERE, "..", "..", "build", "src", "runtime", "libcudal2_runtime.so"))  # source tree
    out.append("libcudal2_runtime.so.0")  # the dynamic linker's search path (cmake --install)
    return out


def path():
    """The file load() loaded (loading it if need be)."""
    load()
    return _path


def load():
    """The runtime library (loaded once); RuntimeError naming every place tried if none loads."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        for path in candidates():
            if os.sep in path and not os.path.exists(path):
                errors.append(f"{path}: no such file")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                errors.append(f"{path}: {e}")
                continue
            _declare(lib)
            _lib, _path = lib, path
            return lib
        raise RuntimeError("cudal2: cannot load libcudal2_runtime.so (build it with scripts/build.sh, "
                           "or set CUDAL2_RUNTIME_LIB):\n  " + "\n  ".join(errors))


def _declare(lib):
    h, vp, i64, sz = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t
    lib.cudal2_create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.cudal2_create.restype = ctypes.c_int
    lib.cudal2_destroy.argtypes = [h]
    lib.cudal2_destroy.restype = ctypes.c_int
    lib.cudal2_gemm.argtypes = [h, ctypes.c_int, ctypes.c_int, i64, i64, i64, vp, vp, vp, vp, sz, vp]
    lib.cudal2_gemm.restype = ctypes.c_int
    lib.cudal2_query.argtypes = [h, ctypes.c_int, ctypes.c_int, i64, i64, i64, ctypes.POINTER(DispatchInfo)]
    lib.cudal2_query.restype = ctypes.c_int
    lib.cudal2_status_string.argtypes = [ctypes.c_int]
    lib.cudal2_status_string.restype = ctypes.c_char_p
    lib.cudal2_last_error.argtypes = []
    lib.cudal2_last_error.restype = ctypes.c_char_p
    if hasattr(lib, "cudal2_tune_wait"):  # libraries before background tuning lack it
        lib.cudal2_tune_wait.argtypes = [h, ctypes.POINTER(ctypes.c_long)]
        lib.cudal2_tune_wait.restype = ctypes.c_int


def error_text(lib, status):
    name = lib.cudal2_status_string(status)
    msg = lib.cudal2_last_error()
    return f"{name.decode() if name else status}: {msg.decode() if msg else ''}"


def create_handle():
    """A handle on the current CUDA device (allocates and zeroes its workspace, synchronizes)."""
    lib = load()
    h = ctypes.c_void_p()
    st = lib.cudal2_create(ctypes.byref(h), None)
    if st != SUCCESS:
        raise RuntimeError("cudal2_create failed: " + error_text(lib, st))
    return h.value
