"""Configuration read from the environment, as ``numba.config`` exposes it."""

import os


def _flag(name):
    return os.environ.get(name, "0") not in ("", "0")


DUMP_IR = _flag("NUMBA_DUMP_IR")
DUMP_ANNOTATION = _flag("NUMBA_DUMP_ANNOTATION")
DUMP_LLVM = _flag("NUMBA_DUMP_LLVM")
DUMP_OPTIMIZED = _flag("NUMBA_DUMP_OPTIMIZED")
DEBUG_PRINT_AFTER = os.environ.get("NUMBA_DEBUG_PRINT_AFTER", "none")
DISABLE_JIT = _flag("NUMBA_DISABLE_JIT")
if DISABLE_JIT:
    import warnings

    from .errors import NumbaWarning

    warnings.warn("NUMBA_DISABLE_JIT is not supported by numba-rs yet", NumbaWarning)

from . import _numba_rs as _rt  # noqa: E402

# The pool's size: NUMBA_NUM_THREADS, or the CPUs this process may run on.
NUMBA_NUM_THREADS = _rt.config_num_threads()
NUMBA_DEFAULT_NUM_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
# numba-rs has one threading layer, its own pool, which is safe under nesting, concurrent
# use from several threads and fork: every layer Numba lets a user ask for by property
# ('default', 'safe', 'threadsafe', 'forksafe') is it.
THREADING_LAYER = os.environ.get("NUMBA_THREADING_LAYER", "default")
if THREADING_LAYER not in ("default", "safe", "threadsafe", "forksafe", "numba_rs"):
    import warnings as _w

    from .errors import NumbaWarning as _NW

    _w.warn(
        f"NUMBA_THREADING_LAYER={THREADING_LAYER!r}: numba-rs has no {THREADING_LAYER} layer; "
        "parallel code runs on its own thread pool",
        _NW,
    )
