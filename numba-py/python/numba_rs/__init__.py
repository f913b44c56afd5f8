"""numba-rs: Numba's JIT rebuilt in Rust. Use it as ``import numba_rs as numba``."""

from . import config, errors, types
from ._numba_rs import Dispatcher, typeof
from .decorators import jit, njit
from .types import *  # noqa: F401,F403  (type objects at top level, as in numba)

__all__ = ["jit", "njit", "errors", "types", "typeof", "config", "Dispatcher"] + list(
    types.__all__
)
__version__ = "0.1.0"
