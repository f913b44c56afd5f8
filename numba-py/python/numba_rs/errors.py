"""Exceptions and warnings raised by numba-rs, named as Numba names them."""


class NumbaError(Exception):
    """Base class of numba-rs compile errors."""


class TypingError(NumbaError):
    """A function cannot be typed: the message names the operation, types and line."""


class UnsupportedError(NumbaError):
    """A construct numba-rs does not support (yet): the message names it and the line."""


class NumbaWarning(Warning):
    """Base class of numba-rs warnings (an option not implemented yet, say)."""


NumbaTypeError = TypingError


class NumbaValueError(TypingError, ValueError):
    """Code Numba rejects with a ValueError at compile time (an accumulator of a parallel
    loop used other than by a supported reduction, say); catchable as either."""


class NumbaPerformanceWarning(NumbaWarning):
    """Code that compiles but will not run as fast as asked (Numba's category)."""


class NumbaParallelSafetyWarning(NumbaWarning):
    """A parallel loop whose result may depend on the order threads run in."""


class NumbaDeprecationWarning(NumbaWarning, DeprecationWarning):
    """A feature or option Numba deprecated (``nopython=False`` since 0.59)."""
