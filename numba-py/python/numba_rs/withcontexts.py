"""Context managers the compiler implements by rewriting the ``with`` body
(``numba_ir::withlift``), as Numba's ``numba.core.withcontexts`` has them.

In Python they do nothing (``objmode``) or what their name says
(``parallel_chunksize``); in a jitted function the compiler reads them at compile time.
"""

from . import parallel as _parallel


class WithContext:
    """Base of the context managers jitted code may use in a ``with`` statement."""

    _numba_rs_with_context = None

    def __enter__(self):
        pass

    def __exit__(self, typ, val, tb):
        pass


class _ObjModeContextType(WithContext):
    """``with objmode(x='int64', y='float64[:]'):`` in a nopython function: the body
    runs in object mode (the interpreter's semantics, any Python code), and each
    variable it defines that is used afterwards must be annotated with its type, a
    string or a type object. On the way out the values are converted to those types as
    arguments of a jitted function are. Outside jitted code it has no effect."""

    _numba_rs_with_context = "objmode"

    def __call__(self, *args, **kwargs):
        return self


class _ParallelChunksize(WithContext):
    """``with parallel_chunksize(n):`` parallel loops started in the body use chunks of
    about ``n`` iterations; the previous chunk size comes back on exit."""

    _numba_rs_with_context = "parallel_chunksize"

    def __call__(self, *args, **kwargs):
        if len(args) != 1 or kwargs or not isinstance(args[0], int):
            raise ValueError("parallel_chunksize takes only a single integer argument.")
        self.chunksize = args[0]
        return self

    def __enter__(self):
        self.orig_chunksize = _parallel.get_parallel_chunksize()
        _parallel.set_parallel_chunksize(self.chunksize)

    def __exit__(self, typ, val, tb):
        _parallel.set_parallel_chunksize(self.orig_chunksize)


objmode = _ObjModeContextType()
parallel_chunksize = _ParallelChunksize()
