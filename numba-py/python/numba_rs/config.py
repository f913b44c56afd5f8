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
