"""Several advanced indices in one subscript, n-d integer index arrays, lists and masks
among them (numba_rs/_npindex.py, the fallback of `operator.getitem`/`setitem` on
arrays): NumPy's broadcasting and axis-placement rules, copies, bounds checked. NumPy on
the same arrays is the oracle; NRT counts balance (conftest)."""

import numpy as np
import pytest

from numba_rs import njit

A = np.arange(24.0).reshape(4, 6)
B = np.arange(60).reshape(3, 4, 5)
R = np.array([0, 2])
C = np.array([1, 3])

GET = {
    "two_arrays": (lambda a: a[R, C], A),
    "negative": (lambda a: a[np.array([-1, 0]), np.array([1, -3])], A),
    "2d_index": (lambda a: a[np.array([[0, 1], [2, 3]])], A),
    "2d_both": (lambda a: a[np.array([[0, 1], [2, 3]]), np.array([[0, 1], [2, 3]])], A),
    "array_and_int": (lambda a: a[R, 2], A),
    "adjacent_after_slice": (lambda b: b[:, R, C], B),
    "separated_by_slice": (lambda b: b[R, :, C], B),
    "int_and_array_separated": (lambda b: b[1, :, C], B),
    "lists": (lambda a: a[[0, 2], [1, 3]], A),
    "broadcast": (lambda a: a[R[:, None], C], A),
    "ellipsis": (lambda b: b[..., R, C], B),
    "mask_and_array": (lambda a: a[a[:, 0] > 10, np.array([0, 1])], A),
    "mask_mismatch": (lambda a: a[a[:, 0] > 5, np.array([0, 1])], A),
    "out_of_bounds": (lambda a: a[np.array([0, 9]), C], A),
    # None (np.newaxis) among advanced indices: a new length-1 axis, NumPy's placement.
    "none_between": (lambda b: b[R, None, C], B),
    "none_first": (lambda b: b[None, R, :, C], B),
    "none_after": (lambda b: b[R, C, None], B),
    "none_ellipsis": (lambda b: b[..., None, R, C], B),
    "none_one_array": (lambda b: b[R, None], B),
    "none_leading_one_array": (lambda b: b[None, R], B),
}


@pytest.mark.parametrize("name", sorted(GET))
def test_getitem_against_numpy(name):
    f, x = GET[name]
    try:
        want = f(x)
    except IndexError:
        with pytest.raises(IndexError):
            njit(f)(x)
        return
    got = njit(f)(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_setitem_against_numpy():
    def s1(x):
        y = x.copy()
        y[R, C] = -1.0
        return y

    def s2(x):
        y = x.copy()
        y[R, C] = np.array([7.0, 8.0])
        return y

    def s3(x):
        y = x.copy()
        y[:, R, C] = np.arange(6).reshape(3, 2)
        return y

    def s4(x):
        y = x.copy()
        y[R, :, C] = np.arange(8).reshape(2, 4)
        return y

    def s5(x):
        y = x.copy()
        y[np.array([[0, 1], [2, 3]]), 0] = 5.0
        return y

    def s6(x):
        y = x.copy()
        y[R, None, C] = np.arange(10).reshape(2, 1, 5)
        return y

    for f, x in [(s1, A), (s2, A), (s3, B), (s4, B), (s5, A), (s6, B)]:
        np.testing.assert_array_equal(njit(f)(x), f(x))


def test_generated_index_patterns():
    rng = np.random.RandomState(3)
    x = rng.rand(4, 5, 6)
    f = njit(lambda x, i, j: (x[i, j], x[:, i, j], x[i, :, j]))
    for _ in range(10):
        shape = tuple(rng.randint(1, 4, size=rng.randint(1, 3)))
        i = rng.randint(-4, 4, size=shape)
        j = rng.randint(-5, 5, size=shape)
        got = f(x, i, j)
        want = (x[i, j], x[:, i, j], x[i, :, j])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
