"""``cfunc``: a compiled function with the C ABI (Numba's ``cfunc``), callable from C
through ``address`` and from Python through ``ctypes``.

An exception the function raises cannot cross the C ABI: it is reported as unraisable
(``sys.unraisablehook``) and the caller gets zero, as with Numba.
"""

import ctypes

import numpy as np

from ._numba_rs import Dispatcher as _Dispatcher
from .npyufunc import _check_options, _py_func

_CTYPES = {
    "bool": ctypes.c_bool,
    "boolean": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "none": None,
}



def _ctype(t):
    """The ctypes type of a numba-rs type's C form (pointers included)."""
    name = str(t)
    if name in ("void*", "voidptr"):
        return ctypes.c_void_p
    if name.endswith("*"):
        return ctypes.POINTER(_ctype(name[:-1]))
    try:
        return _CTYPES[name]
    except KeyError:
        # Numba's message (ctypes has no complex type: call such a cfunc through its
        # `address` with a matching Structure, as C code would).
        raise TypeError(f"Cannot convert Numba type '{name}' to ctypes type") from None


_CFUNC_OPTIONS = {"nopython", "forceobj", "cache", "fastmath", "error_model", "boundscheck"}


class CFunc:
    """A C callback: ``address``, ``ctypes``, ``native_name``, ``inspect_llvm()``."""

    def __init__(self, func, sig, kws):
        from .decorators import _cache_site, _fastmath_bits, _locals_pairs, _signature_text

        func = _py_func(func)
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._pyfunc = func
        self._kernel = _Dispatcher(
            func,
            None,
            fastmath=_fastmath_bits(kws.get("fastmath", False)),
            error_model=kws.get("error_model", "python"),
            boundscheck=kws.get("boundscheck"),
            wrappers="cfunc",
            locals=_locals_pairs(kws["locals"]) if kws.get("locals") else None,
            cache=_cache_site(func, kws.get("cache")),
        )
        text = _signature_text(sig)
        if "(" not in text or text.startswith("("):
            raise TypeError(f"cfunc needs a signature with a return type, got {sig!r}")
        self._argtypes = self._kernel._compile_text(text)
        _, self.address, ret = self._kernel._wrapper_addresses(self._argtypes)
        from .types import Signature

        self._sig = Signature(ret, self._argtypes)
        meta = self._kernel.get_metadata(self._argtypes)
        self.native_name = meta["symbol"] + ".cfunc"
        self._ctypes = None

    @property
    def _numba_rs_kernel(self):
        return self._kernel

    @property
    def ctypes(self):
        """A ctypes function object over ``address``."""
        if self._ctypes is None:
            res = _ctype(self._sig.return_type)
            args = [_ctype(t) for t in self._sig.args]
            self._ctypes = ctypes.CFUNCTYPE(res, *args)(self.address)
        return self._ctypes

    @property
    def cffi(self):
        """The address as a cffi ``void *`` (needs the cffi package, as in Numba)."""
        import cffi

        return cffi.FFI().cast("void *", self.address)

    @property
    def cache_hits(self):
        """How many times the compiled code was loaded from the on-disk cache
        (``cache=True``) instead of compiled."""
        hits, _ = self._kernel._cache_stats()
        return sum(n for _, n in hits)

    def __call__(self, *args, **kws):
        """Run the Python function (as Numba's CFunc does: the compiled code is for C)."""
        return self._pyfunc(*args, **kws)

    def inspect_llvm(self):
        """The optimised LLVM IR of the module holding the function and its wrapper."""
        return self._kernel.inspect_llvm(self._argtypes)

    def __repr__(self):
        return f"<numba_rs.CFunc {self.__qualname__!r}>"


def cfunc(sig, locals=None, cache=False, pipeline_class=None, **options):
    """``@cfunc("float64(float64, float64)")``."""
    if pipeline_class is not None:
        raise NotImplementedError("cfunc(pipeline_class=...) is not supported by numba-rs")
    options["cache"] = cache
    _check_options(options, _CFUNC_OPTIONS)
    if options.get("forceobj") or options.get("nopython") is False:
        # As in Numba: a C callback cannot run in object mode.
        raise NotImplementedError("object mode is not supported for cfunc")

    def wrapper(func):
        return CFunc(func, sig, dict(options, locals=locals))

    return wrapper


def carray(ptr, shape, dtype=None):
    """A C-ordered NumPy array over the memory a ctypes pointer points at (Numba's
    ``carray``): a typed pointer gives the dtype (a given one must match it); a
    ``c_void_p`` needs ``dtype``. In jitted code the same call takes ``T*``/``void*``."""
    ptr = getattr(ptr, "_as_parameter_", ptr)
    if dtype is not None:
        dtype = np.dtype(dtype)
    if isinstance(ptr, ctypes.c_void_p):
        if dtype is None:
            raise TypeError("explicit dtype required for void* argument")
        address = ptr.value
    elif isinstance(ptr, ctypes._Pointer):
        ptr_dtype = np.dtype(ptr._type_)
        if dtype is not None and dtype != ptr_dtype:
            raise TypeError(f"mismatching dtype '{dtype}' for pointer {ptr}")
        dtype = ptr_dtype
        address = ctypes.cast(ptr, ctypes.c_void_p).value
    else:
        raise TypeError(f"expected a ctypes pointer, got {ptr!r}")
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.intp))
    buf = (ctypes.c_byte * nbytes).from_address(address) if nbytes else b""
    return np.frombuffer(buf, dtype).reshape(shape)


def farray(ptr, shape, dtype=None):
    """As :func:`carray`, in Fortran order."""
    if isinstance(shape, (tuple, list)):
        shape = tuple(shape)[::-1]
    return carray(ptr, shape, dtype).T
