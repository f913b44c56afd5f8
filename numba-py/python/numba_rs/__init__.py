"""numba-rs: Numba's JIT rebuilt in Rust. Use it as ``import numba_rs as numba``."""

from . import errors, types
from ._numba_rs import Dispatcher, typeof
from .decorators import jit, njit

__all__ = ["jit", "njit", "errors", "types", "typeof", "Dispatcher"]
__version__ = "0.1.0"
