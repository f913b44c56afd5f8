"""``njit`` and ``jit``: wrap a Python function in a compiling dispatcher."""

from ._numba_rs import Dispatcher

_SUPPORTED_OPTIONS = {"nopython", "cache", "nogil", "fastmath", "boundscheck", "error_model", "inline"}


def _signatures(sig):
    if sig is None:
        return None
    if isinstance(sig, str):
        return [sig]
    return [str(s) for s in sig]


def njit(*args, **options):
    """Compile a function in nopython mode: ``@njit``, ``@njit(...)`` or ``@njit("f8(f8)")``."""
    unknown = set(options) - _SUPPORTED_OPTIONS
    if unknown:
        raise TypeError(f"njit() got unsupported option(s): {', '.join(sorted(unknown))}")
    if options.get("nopython") is False:
        raise NotImplementedError("object mode is not supported by numba-rs")
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], (str, list, tuple)):
        return Dispatcher(args[0])
    sigs = _signatures(args[0]) if args else None

    def wrapper(func):
        return Dispatcher(func, sigs)

    return wrapper


def jit(*args, **options):
    """``@jit(nopython=True)``: the same as ``njit``. Object mode is not supported."""
    options.setdefault("nopython", True)
    return njit(*args, **options)
