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
