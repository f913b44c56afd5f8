"""cffi support (Numba's ``numba.core.typing.cffi_utils``): functions of an out-of-line
cffi module become callable from jitted code once the module is registered; functions
of ``ffi.dlopen`` libraries need nothing."""

from ._cinterop import register_module

__all__ = ["register_module"]
