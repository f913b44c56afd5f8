"""C functions called from jitted code: ctypes function pointers (from a shared library
and `CFUNCTYPE` callbacks into Python), cffi functions, arrays passed as C pointers
(`a.ctypes`). The C library's own result, called from Python through ctypes/cffi, is the
oracle."""

import ctypes
import ctypes.util
import math

import numpy as np
import pytest

from numba_rs import njit, types
from numba_rs.errors import TypingError

libm = ctypes.CDLL(ctypes.util.find_library("m"))
libc = ctypes.CDLL(ctypes.util.find_library("c"))

c_sin = libm.sin
c_sin.argtypes = [ctypes.c_double]
c_sin.restype = ctypes.c_double
c_cos = libm.cos
c_cos.argtypes = [ctypes.c_double]
c_cos.restype = ctypes.c_double
c_ldexp = libm.ldexp
c_ldexp.argtypes = [ctypes.c_double, ctypes.c_int]
c_ldexp.restype = ctypes.c_double
c_sinf = libm.sinf
c_sinf.argtypes = [ctypes.c_float]
c_sinf.restype = ctypes.c_float
c_labs = libc.labs
c_labs.argtypes = [ctypes.c_long]
c_labs.restype = ctypes.c_long

c_memset = libc.memset
c_memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
c_memset.restype = ctypes.c_void_p
c_memcpy_d = libc.memcpy
c_memcpy_d.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                       ctypes.c_size_t]
c_memcpy_d.restype = ctypes.c_void_p

c_untyped = libm.exp  # no argtypes


def test_ctypes_functions_from_a_library():
    @njit
    def f(x, n):
        return c_sin(x) - c_cos(x), c_ldexp(x, n), c_labs(-n), c_sinf(x)

    for x, n in [(0.5, 3), (-2.25, -1), (3.0, 10)]:
        got = f(x, n)
        assert got[0] == c_sin(x) - c_cos(x)
        assert got[1] == c_ldexp(x, n) == math.ldexp(x, n)
        assert got[2] == abs(n)
        assert got[3] == pytest.approx(c_sinf(x), rel=1e-6)


def test_ctypes_callback_into_python():
    def py_cube(x):
        return x * x * x

    cb = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(py_cube)

    @njit
    def f(x):
        return cb(x) + 1.0

    assert f(1.5) == py_cube(1.5) + 1.0


def test_function_pointers_as_arguments_share_one_specialisation():
    @njit
    def pick(fa, fb, x):
        if x > 0:
            return fa(x)
        return fb(x)

    for fa, fb, x in [(c_sin, c_cos, 1.0), (c_sin, c_cos, -1.0), (c_cos, c_sin, 1.0)]:
        assert pick(fa, fb, x) == (fa(x) if x > 0 else fb(x))
    assert len(pick.signatures) == 1
    (sig,) = pick.signatures
    assert isinstance(sig[0], types.ExternalFunctionPointer)
    assert str(sig[0]) == "ExternalFunctionPointer((float64,) -> float64)"


def test_arrays_as_pointers():
    @njit
    def copy_then_clear(src, dst):
        c_memcpy_d(dst.ctypes, src.ctypes, src.size * 8)
        total = dst.sum()
        c_memset(src.ctypes, 0, src.nbytes)
        return total, src.ctypes.data == dst.ctypes.data

    src = np.linspace(0.0, 1.0, 11)
    want = src.sum()
    dst = np.empty_like(src)
    total, same = copy_then_clear(src, dst)
    assert total == want and not same
    np.testing.assert_array_equal(dst, np.linspace(0.0, 1.0, 11))
    np.testing.assert_array_equal(src, np.zeros(11))
    # A pointer of the wrong element type is rejected.
    with pytest.raises(TypingError, match="No implementation of function ExternalFunctionPointer"):
        copy_then_clear(np.zeros(2, np.float32), np.zeros(2, np.float32))


def test_void_pointers_round_trip_as_integers():
    proto = ctypes.CFUNCTYPE(ctypes.c_void_p)
    get = proto(lambda: 0xDEADBEEF)

    @njit
    def f(a):
        p = get()
        a[0] = p
        return p

    a = np.zeros(1, dtype=np.uintp)
    assert f(a) == 0xDEADBEEF and a[0] == 0xDEADBEEF


def test_ctypes_function_without_argtypes_is_an_error_naming_it():
    with pytest.raises(TypingError, match="doesn't define its argument types"):
        njit(lambda x: c_untyped(x))(1.0)


cffi = pytest.importorskip("cffi")
ffi = cffi.FFI()
ffi.cdef("double sin(double); double cos(double); int abs(int); "
         "void *memset(void *s, int c, size_t n);")
C = ffi.dlopen(None)


def test_cffi_functions():
    sin, cos, abs_ = C.sin, C.cos, C.abs

    @njit
    def f(x, n):
        return sin(x) + cos(x), abs_(n)

    for x, n in [(0.5, -3), (2.0, 7)]:
        got = f(x, n)
        assert got == (C.sin(x) + C.cos(x), abs(n))


def test_cffi_pointer_arguments():
    memset = C.memset

    @njit
    def clear(a):
        memset(a.ctypes, 0, a.nbytes)
        return a.sum()

    a = np.arange(6.0)
    assert clear(a) == 0.0
    np.testing.assert_array_equal(a, np.zeros(6))


def test_cffi_function_pointer_argument():
    @njit
    def call(f, x):
        return f(x)

    assert call(C.sin, 0.75) == C.sin(0.75)
    assert call(C.cos, 0.75) == C.cos(0.75)


def test_cffi_from_buffer():
    memset = C.memset

    @njit
    def clear(a):
        memset(ffi.from_buffer(a), 0, a.nbytes)
        return a.sum()

    a = np.arange(6.0).reshape(2, 3)
    assert clear(a) == 0.0
    np.testing.assert_array_equal(a, np.zeros((2, 3)))
    b = np.arange(4.0)
    assert clear(b) == 0.0
    with pytest.raises(TypingError, match="from_buffer\\(\\) unsupported on non-contiguous"):
        clear(np.arange(6.0)[::2])
    with pytest.raises(TypingError, match="only supports multidimensional arrays with C layout"):
        clear(np.asfortranarray(np.ones((2, 2))))


def _capsule(address, name):
    api = ctypes.pythonapi
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return api.PyCapsule_New(address, name, None)


def test_cython_function_address_from_pyx_capi():
    # A module exporting C functions the way Cython does: capsules in `__pyx_capi__`,
    # named by the C signature.
    import math
    import sys
    import types as pytypes

    from numba_rs.extending import get_cython_function_address

    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    cos_addr = ctypes.cast(libm.cos, ctypes.c_void_p).value
    name = b"double (double)"
    mod = pytypes.ModuleType("fake_cython_special")
    mod.__pyx_capi__ = {"cos": _capsule(cos_addr, name)}
    mod._keep = name
    sys.modules["fake_cython_special"] = mod
    try:
        addr = get_cython_function_address("fake_cython_special", "cos")
        assert addr == cos_addr
        cos = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(addr)

        @njit
        def f(x):
            return cos(x) * 2.0

        assert f(0.5) == math.cos(0.5) * 2.0
        with pytest.raises(ValueError, match="No function 'sin' found in __pyx_capi__ of 'fake_cython_special'"):
            get_cython_function_address("fake_cython_special", "sin")
        with pytest.raises(ImportError):
            get_cython_function_address("no_such_module_here", "cos")
    finally:
        del sys.modules["fake_cython_special"]


def test_cfunc_objects_as_arguments():
    from numba_rs import cfunc

    @cfunc("float64(float64)")
    def sq(x):
        return x * x

    @cfunc("float64(float64)")
    def half(x):
        return x / 2

    @njit
    def apply(f, v):
        return f(v) + 1.0

    assert apply(sq, 3.0) == 10.0
    assert apply(half, 3.0) == 2.5
    assert len(apply.signatures) == 1  # typed by the C signature alone
