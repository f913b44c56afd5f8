"""numba-rs: Numba's JIT rebuilt in Rust. Use it as ``import numba_rs as numba``."""

from . import config, errors, extending, types
from .errors import (  # noqa: F401  (Numba's top level has its error classes)
    NumbaDeprecationWarning,
    NumbaError,
    NumbaParallelSafetyWarning,
    NumbaPerformanceWarning,
    NumbaTypeError,
    NumbaValueError,
    NumbaWarning,
    TypingError,
    UnsupportedError,
)
from . import _numba_rs
import atexit as _atexit
import os as _os
# A child made by fork must not inherit LLVM's warm-up thread half way.
_os.register_at_fork(before=_numba_rs._join_warm_up)
from ._numba_rs import Dispatcher, typeof
from .decorators import jit, njit
from .npyufunc import DUFunc, GUFunc, guvectorize, vectorize
from .cfunc import carray, cfunc, farray
from .parallel import (
    get_num_threads,
    get_parallel_chunksize,
    get_thread_id,
    pndindex,
    prange,
    set_num_threads,
    set_parallel_chunksize,
    threading_layer,
)
from .withcontexts import objmode, parallel_chunksize
from .stencils import stencil
from . import typed  # noqa: F401  (numba.typed)
from .dropin import install_as_numba
from .literal import literal_unroll, literally
from .types import *  # noqa: F401,F403  (type objects at top level, as in numba)

__all__ = ["jit", "njit", "vectorize", "guvectorize", "cfunc", "carray", "farray", "errors", "extending", "types", "typeof", "config", "Dispatcher", "prange", "pndindex", "set_num_threads", "get_num_threads",
           "get_thread_id", "set_parallel_chunksize", "get_parallel_chunksize", "objmode", "parallel_chunksize",
           "threading_layer", "stencil", "install_as_numba", "literal_unroll", "literally"] + list(
    types.__all__
)
__version__ = "0.1.0"


def _name_this_build():
    # Cache files name the build that wrote them: another build's are ignored.
    import os

    st = os.stat(_numba_rs.__file__)
    _numba_rs._set_cache_compiler(f"numba-rs {__version__} {st.st_mtime_ns} {st.st_size}")


_name_this_build()
del _name_this_build

# LLVM's one-time set-up runs on a thread of its own from the extension's import on
# (`NUMBA_RS_WARMUP=0` turns it off). A program that ends sooner waits for it: LLVM's
# static state must not be torn down under it.
_atexit.register(_numba_rs._join_warm_up)
