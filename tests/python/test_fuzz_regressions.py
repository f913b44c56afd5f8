"""Regressions found by fuzzing realistic programs against CPython, NumPy and Numba
0.68.1 (thirteenth session): uint64 mixed with signed integers, float16 and non-native
byte order rejected instead of crashing or misreading memory."""

import math

import numpy as np
import pytest

import numba_rs
from numba_rs.errors import TypingError

U = np.array([5, 2**63 + 1, 2**64 - 1, 1001], dtype=np.uint64)


def count_big(a):
    c = 0
    for x in a:
        if x > 1000:
            c += 1
    return c


def compare_items(a):
    return a[1] > 0, a[1] == a[1], a[0] < -1, a[1] >= a[3]


def test_uint64_compares_with_signed_as_numba_does():
    # Numba compares uint64 with a signed integer in float64: values from 2**63 up are
    # large, not negative (CPython's answer).
    assert numba_rs.njit(count_big)(U) == count_big(U) == 3
    assert numba_rs.njit(compare_items)(U) == tuple(bool(v) for v in compare_items(U))
    # max of uint64 and int64 is float64 in Numba.
    got = numba_rs.njit(lambda a: max(a[1], 1))(U)
    assert got == float(2**63 + 1) and type(got) is float


def test_uint64_with_int64_arrays_use_numpys_float_loop():
    u = np.array([7, 2**63 + 5], dtype=np.uint64)
    i = np.array([3, 6], dtype=np.int64)
    for src in ["np.maximum(u, i)", "np.subtract(u, i[0])", "u < i", "u - i", "u % i",
                "u // i", "np.where(u > 0, 1, 0)"]:
        f = numba_rs.njit(eval("lambda u, i: " + src))
        got, want = f(u, i), eval(src)
        assert got.dtype == want.dtype, src
        np.testing.assert_array_equal(got, want, err_msg=src)


@pytest.mark.parametrize("make", [
    lambda: (lambda a: np.sqrt(a), np.array([1.5, 4.0], dtype=np.float16)),
    lambda: (lambda x: math.sqrt(x), np.float16(2.0)),
    lambda: (lambda x: np.float16(x) * 2, 2.0),
    lambda: (lambda a: a.astype(np.float16), np.ones(2)),
    lambda: (lambda n: np.ones(n, np.float16), 3),
])
def test_float16_is_a_typing_error(make):
    f, arg = make()
    with pytest.raises(TypingError):
        numba_rs.njit(f)(arg)


@pytest.mark.parametrize("dtype", [">f8", ">i4", ">c16"])
def test_non_native_byte_order_is_a_typing_error(dtype):
    a = np.arange(3).astype(dtype)
    with pytest.raises(TypingError, match="non-native byte order"):
        numba_rs.njit(lambda a: a.sum())(a)
    # The same values in native order work.
    assert numba_rs.njit(lambda a: a.sum())(a.astype(a.dtype.newbyteorder("="))) == 3
