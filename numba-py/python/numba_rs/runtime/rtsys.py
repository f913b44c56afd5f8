"""NRT allocation statistics, as ``numba.core.runtime.rtsys``."""

from collections import namedtuple

from .._numba_rs import allocation_stats as _stats

_nrt_mstats = namedtuple("_nrt_mstats", ["alloc", "free", "mi_alloc", "mi_free"])


def get_allocation_stats():
    """The NRT counters: a namedtuple ``(alloc, free, mi_alloc, mi_free)``."""
    return _nrt_mstats(*_stats())
