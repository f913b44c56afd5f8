"""Sorting in jitted code against NumPy: `np.sort`, `a.sort()` (along the last axis, in
place) and `argsort` with NumPy's order (NaN last), for every sortable dtype and layout."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64]


def sorts(a):
    b = np.sort(a)
    c = a.copy()
    c.sort()
    return b, c


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=shape)
    if np.dtype(dtype).kind == "f":
        a = a + rng.random(shape)
        a.flat[:: 5] = np.nan
    return a.astype(dtype)


def layouts(a):
    yield a
    yield np.asfortranarray(a)
    yield a[..., ::-2]
    if a.ndim > 1:
        yield a.T


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0,), (1,), (17,), (4, 6), (2, 3, 5)], ids=str)
def test_sort_matches_numpy(dtype, shape):
    f = njit(sorts)
    for a in layouts(sample(dtype, shape)):
        got, expected = f(a), sorts(a)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(g, e)


def test_sort_in_place_writes_through_a_view():
    def f(a):
        a[1, ::2].sort()

    a = np.array([[9.0, 8, 7, 6, 5], [4, 3, 2, 1, 0]])
    expected = a.copy()
    expected[1, ::2].sort()
    njit(f)(a)
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_argsort_matches_numpy(dtype):
    a = sample(dtype, (40,), seed=3)
    for kind in ("quicksort", "mergesort"):
        f = njit(lambda x: (x.argsort(kind=kind), np.argsort(x, kind=kind)))  # noqa: B023
        for x in (a, a[::-3]):
            for got in f(x):
                assert got.dtype == np.intp
                # Ties may come in any order for quicksort: the sorted values must agree,
                # and the stable kind must agree exactly.
                np.testing.assert_array_equal(x[got], np.sort(x))
                np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
    assert list(njit(lambda x: x.argsort())(a)) == list(np.argsort(a, kind="stable"))


def test_bad_sort_uses_are_typing_errors():
    with pytest.raises(TypingError, match="argsort"):
        njit(lambda a: a.argsort(kind="heapsort"))(np.ones(3))
    readonly = np.ones(3)
    readonly.setflags(write=False)
    with pytest.raises(TypingError, match="sort"):
        njit(lambda a: a.sort())(readonly)
    with pytest.raises(TypingError, match="sort"):
        njit(lambda a: np.sort(a))(np.ones(3, dtype=np.complex128))
