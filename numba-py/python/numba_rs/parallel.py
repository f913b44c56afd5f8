"""``parallel=True`` support: ``prange`` and the threading layer's API, as Numba has them.

``prange`` is ``range`` (``pndindex`` is ``np.ndindex``) when a function runs in Python or compiles without
``parallel=True``; with it, a ``prange`` loop becomes a parallel loop run on numba-rs's
thread pool (numba-nrt). ``set_num_threads`` and friends act on the calling thread, as in
Numba; ``get_num_threads``/``get_thread_id`` may also be called from jitted code.
"""

from . import _numba_rs as _rt


class prange:
    """Like ``range``; loops over it run in parallel under ``parallel=True``."""

    def __new__(cls, *args):
        return range(*args)


class pndindex:
    """Like ``np.ndindex``: the index tuples of a shape in C order; loops over it run
    in parallel under ``parallel=True``."""

    def __new__(cls, *args):
        import numpy as np

        return np.ndindex(*args)


def set_num_threads(n):
    """Use ``n`` threads (``1 <= n <= NUMBA_NUM_THREADS``) in parallel regions this thread
    starts."""
    _rt.set_num_threads(n)


def get_num_threads():
    """The number of threads parallel regions started on this thread use."""
    return _rt.get_num_threads()


def get_thread_id():
    """0 outside the thread pool, a distinct ``1..`` on each pool thread."""
    return _rt.get_thread_id()


def set_parallel_chunksize(n):
    """Split parallel loops into chunks of about ``n`` iterations (0: one per thread);
    returns the previous value."""
    return _rt.set_parallel_chunksize(n)


def get_parallel_chunksize():
    return _rt.get_parallel_chunksize()


def threading_layer():
    """The threading layer in use (``'numba_rs'``, once a parallel region has been compiled)."""
    return _rt.threading_layer()
