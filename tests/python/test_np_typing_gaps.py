"""Typing gaps issue 47 names, each checked against NumPy/CPython or, where Numba
deliberately differs from NumPy, against Numba 0.68.1's documented choice:

- float-only ufuncs (and `/` of arrays) on bools and 8/16-bit ints give float32, as
  Numba's loop choice without float16 does (NumPy gives float16 / float64);
- shifts of arrays by negative or too-wide counts follow NumPy's loops;
- integer arrays to negative integer powers raise NumPy's ValueError;
- int constants from 2**63 to 2**64-1 are uint64;
- dtype objects: `a.dtype.kind` & co., `np.dtype(...)`, comparisons, `np.issubdtype`
  (folded to constants, so a branch for another dtype never types);
- unpacking a 1-d array.
NRT counts balance (conftest)."""

import numpy as np
import pytest

import numba_rs.errors

from numba_rs import njit


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                   np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("ufunc", [np.sin, np.sqrt, np.exp, np.log1p, np.arctan])
def test_float_ufunc_result_dtypes(ufunc, dtype):
    a = np.arange(1, 5).astype(dtype)
    got = njit(lambda a: ufunc(a))(a)  # noqa: B023
    small = np.dtype(dtype).itemsize <= 2 and np.dtype(dtype).kind in "biu"
    want_dtype = np.float32 if small else np.result_type(dtype, np.float32)
    if np.dtype(dtype).kind in "iu" and not small:
        want_dtype = np.float64
    assert got.dtype == want_dtype
    np.testing.assert_allclose(got, ufunc(a.astype(np.float64)), rtol=1e-6)


def test_true_divide_of_small_ints_is_float32():
    a = np.arange(1, 4, dtype=np.int8)
    got = njit(lambda a, b: a / b)(a, a[::-1])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a / a[::-1], rtol=1e-6)


def test_means_of_ints_stay_float64():
    a = np.arange(5, dtype=np.int8)
    assert njit(lambda a: a.mean())(a) == a.mean()
    assert njit(lambda a: np.nanmean(a))(a) == np.nanmean(a)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_array_shifts_follow_numpy(dtype):
    a = np.array([-5, -1, 0, 1, 7], dtype=np.int64).astype(dtype)
    counts = np.array([-1, 0, 3, 70, 200], dtype=np.int64).astype(dtype)
    with np.errstate(all="ignore"):
        for f in (lambda a, b: np.left_shift(a, b), lambda a, b: np.right_shift(a, b),
                  lambda a, b: a << b, lambda a, b: a >> b):
            np.testing.assert_array_equal(njit(f)(a, counts), f(a, counts))


def test_negative_integer_powers_of_arrays_raise_numpys_error():
    a = np.arange(3)
    with pytest.raises(ValueError, match="negative integer powers"):
        a ** -2
    with pytest.raises(ValueError, match="negative integer powers"):
        njit(lambda a: a ** -2)(a)
    with pytest.raises(ValueError, match="negative integer powers"):
        njit(lambda a, b: np.power(a, b))(a, np.array([1, -1, 2]))
    np.testing.assert_array_equal(njit(lambda a: a ** 2)(a), a ** 2)


def test_uint64_constants():
    def f(x):
        return x + 2 ** 63, 2 ** 64 - 1, 18446744073709551615 // 3

    got = njit(f)(np.uint64(1))
    assert got == tuple(int(v) for v in f(np.uint64(1)))


def test_dtype_attributes_and_objects():
    def f(a):
        d = a.dtype
        return (d.kind, d.char, d.name, d.str, d.itemsize, d == np.dtype("float64"),
                d != np.float32, np.dtype(np.int8).itemsize, np.dtype("i4") == np.int32)

    for dtype in (np.float64, np.float32, np.int8, np.uint16, np.bool_, np.complex64):
        a = np.ones(2, dtype=dtype)
        assert njit(f)(a) == tuple(
            x.item() if isinstance(x, np.generic) else x for x in f(a))


def test_issubdtype_decides_branches():
    def f(a):
        if np.issubdtype(a.dtype, np.floating):
            return a.sum() * 0.5
        elif np.issubdtype(a.dtype, np.integer):
            return a.sum() // 2
        return 0

    for dtype in (np.float64, np.float32, np.int32, np.uint8, np.bool_, np.complex128):
        a = np.ones(3, dtype=dtype)
        got, want = njit(f)(a), f(a)
        assert got == want and type(got) is type(want.item() if hasattr(want, "item") else want)
    g = njit(lambda: (np.issubdtype(np.float32, np.inexact),
                      np.issubdtype(np.uint8, np.signedinteger),
                      np.issubdtype(np.complexfloating, np.number)))
    assert g() == (True, False, True)


def test_unpacking_a_1d_array():
    def f(a):
        x, y, z = a
        return x + y * z

    a = np.array([3, 1, 2])
    assert njit(f)(a) == f(a)
    assert njit(f)(a[::-1]) == f(a[::-1])
    for bad in (np.arange(2), np.arange(4)):
        with pytest.raises(ValueError) as want:
            f(bad)
        with pytest.raises(ValueError, match="values to unpack") as got:
            njit(f)(bad)
        assert str(want.value).split(" (")[0] == str(got.value).split(" (")[0]


def test_parameter_reassigned_when_none():
    """`if n is None: n = a.shape[0]` on a parameter left to its None default or passed
    None: the branch is decided before typing (Numba's dead-branch pruning), so `n` is an
    int afterwards; passed an int, the branch goes and `n` stays the argument."""

    def head_sum(a, n=None):
        if n is None:
            n = a.shape[0]
        return a[:n].sum()

    def scaled(x, k=None, off=None):
        if k is None:
            k = 2
        if off is not None:
            x = x + off
        return x * k

    a = np.arange(6.0)
    f = njit(head_sum)
    assert f(a) == head_sum(a)
    assert f(a, None) == head_sum(a, None)
    assert f(a, 3) == head_sum(a, 3)
    g = njit(scaled)
    for args in [(1.5,), (1.5, None, None), (1.5, 3), (1.5, None, 2.0), (2, 4, 1)]:
        assert g(*args) == scaled(*args)


def test_type_of_a_number():
    """`type(x)` of a number is its class (Numba's NumberClass): `type(x)(3)` makes a
    number of x's type (returned as the Python number of its kind, as numba-rs returns
    NumPy scalars)."""
    f = njit(lambda x: type(x)(3))
    for x in [2.5, 7, True, np.float32(1.5), np.int16(3), 1 + 2j, np.uint8(4)]:
        assert f(x) == type(x)(3)
        assert type(f(x)) is type(type(x)(3).item() if hasattr(type(x)(3), "item") else type(x)(3))
    with pytest.raises(numba_rs.errors.TypingError):
        njit(lambda a: type(a))(np.arange(3))
