"""NumPy functions served by numba_rs's Python overloads (_npfuncs, _npfuncs2,
_npselect): results checked against NumPy, errors against Numba's messages."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError
from numba_rs.typed import List


def check(pyfunc, *args):
    expected = pyfunc(*args)
    got = njit(pyfunc)(*args)
    np.testing.assert_array_equal(got, expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    return got


def test_bincount_lists():
    check(lambda a: np.bincount(a), [1, 3, 3, 0])
    check(lambda a, w: np.bincount(a, weights=w), [1, 3, 3], [0.5, 1.0, 2.0])
    check(lambda a, w, m: np.bincount(a, w, m), [1, 2], None, 5)
    with pytest.raises(ValueError, match="first argument must be non-negative"):
        njit(lambda a: np.bincount(a))([2, -1])
    with pytest.raises(ValueError, match="'minlength' must not be negative"):
        njit(lambda a, w, m: np.bincount(a, w, m))([1], None, -1)


def test_flips_and_roll():
    check(lambda a: np.flip(a), np.array(3))
    check(lambda a: np.fliplr(a), ((1, 2),))
    check(lambda a: np.flipud(a), [1, 2, 3])
    with pytest.raises(TypingError, match="cannot index array"):
        njit(lambda a: np.fliplr(a))(np.arange(3))
    with pytest.raises(TypingError, match="Cannot np.flip on"):
        njit(lambda a: np.flip(a))((1, 2))
    for shift in (True, -4, 7):
        check(lambda a, s: np.roll(a, s), [1.5, 2.5, 3.5], shift)
        check(lambda a, s: np.roll(a, s), 4, shift)
    with pytest.raises(TypingError, match="shift must be an integer"):
        njit(lambda a, s: np.roll(a, s))(np.arange(3), 1.5)


def test_asarray_forms():
    check(lambda a: np.asarray(a), [(1, 2, 3), (4, 5, 6)])
    check(lambda a: np.asarray(a), ())
    check(lambda a: np.asarray_chkfinite(a), [1, 2])
    with pytest.raises(ValueError, match="must not contain infs or NaNs"):
        njit(lambda a: np.asarray_chkfinite(a))(np.array([1.0, np.nan]))
    with pytest.raises(TypingError, match="asarray support for List is limited"):
        lst = List()
        lst.append("a")
        njit(lambda a: np.asarray(a))(lst)


def test_construction_and_type_tests():
    check(lambda v, k: np.diagflat(v, k), np.array([[1, 2], [3, 4]]), -2)
    check(lambda d: np.indices(d), (2, 3, 4))
    check(lambda x: np.iscomplex(x), (1 + 4j, 2 + 0j))
    check(lambda x: np.isreal(x), np.array([1, 2]))
    assert njit(lambda x: np.iscomplexobj(x))(np.array([1j])) is True
    assert njit(lambda x: np.isrealobj(x))(3) is True
    assert njit(lambda x: np.isscalar(x))("s") is True
    assert njit(lambda x: np.isscalar(x))((3,)) is False
    with pytest.raises(TypingError, match='"dimensions" must be a tuple of integers'):
        njit(lambda d: np.indices(d))((2.0, 3.0))


def test_unwrap_split_triangles():
    p = np.array([0.0, 3.0, 6.5, 1.0, -2.5, 4.0])
    check(lambda p: np.unwrap(p), p)
    check(lambda p, per: np.unwrap(p, period=per), np.array([0, 5, 9, 2]), 4)
    for a, s in ((np.arange(16.0).reshape(4, 4), 2), (np.arange(16.0).reshape(4, 4), [3, 6])):
        for e, g in zip(np.vsplit(a, s), njit(lambda a, s: np.vsplit(a, s))(a, s)):
            np.testing.assert_array_equal(g, e)
    with pytest.raises(ValueError, match="dsplit only works on arrays of 3 or more"):
        njit(lambda a, s: np.dsplit(a, s))(np.ones((2, 2)), 2)
    arr = np.ones((4, 6))
    for e, g in zip(np.triu_indices_from(arr, 1), njit(lambda a: np.triu_indices_from(a, 1))(arr)):
        np.testing.assert_array_equal(g, e)
    check(lambda m: np.tril(m, 1), np.arange(24.0).reshape(2, 3, 4))
    check(lambda m: np.triu(m, -1), np.arange(24.0).reshape(2, 3, 4))
    with pytest.raises(TypingError, match="m must be an integer"):
        njit(lambda n, m: np.tril_indices(n, m=m))(3, 1.0)
    with pytest.raises(TypingError, match="k must be an integer"):
        njit(lambda n, m, k: np.tri(n, m, k))(3, 3, True)


def test_partition_forms():
    a = np.array([[5.0, 1.0, np.nan, 3.0], [2.0, 9.0, 0.0, 4.0]]).T  # F-ordered
    for k in (0, 1, -1):
        got = njit(lambda a, k: np.partition(a, k))(a, k)
        np.testing.assert_array_equal(got[..., k], np.partition(a, k)[..., k])
        assert got.flags.f_contiguous
    got = njit(lambda a, k: np.argpartition(a, k))([3, 1, 2], [0, 2])
    np.testing.assert_array_equal(np.array([3, 1, 2])[got], [1, 2, 3])
    check(lambda a, k: np.partition(a, k), (), 0)
    with pytest.raises(ValueError, match="kth must be scalar or 1-D"):
        njit(lambda a, k: np.partition(a, k))(np.arange(4), np.zeros((2, 2), np.int64))
    with pytest.raises(TypingError, match="The first argument must be an array-like"):
        njit(lambda a, k: np.partition(a, k))(4, 0)


def test_set_functions():
    a = np.array([5.0, 5.0, 7.0, 1.0, 2.0])
    b = np.array([2.0, 1.0, 4.0, 3.0, 3.0, 1.0, 5.0])
    for unique in (False, True):
        check(lambda a, b, u: np.setxor1d(a, b, u), a, b, unique)
        check(lambda a, b, u: np.setdiff1d(a, b, u), a, b, unique)
        check(lambda a, b, u: np.intersect1d(a, b, u), a, b, unique)
        check(lambda a, b, u, i: np.isin(a, b, u, i), a.reshape(5, 1), b, unique, True)
    lst = List([1.0, 2.0, 2.0])
    check(lambda a, b: np.intersect1d(a, b), lst, lst)
    with pytest.raises(TypingError, match='"assume_unique" must be boolean'):
        njit(lambda a, b, u: np.setdiff1d(a, b, u))(a, b, "foo")
    with pytest.raises(TypingError, match="The arguments to np.union1d must be array-like"):
        njit(lambda a, b: np.union1d(a, b))("ab", a)


def test_geomspace_logspace():
    f = lambda a, b, n: np.geomspace(a, b, n)  # noqa: E731
    for a, b in ((-1, -60), (8, 2), (1j, 16j), (np.complex64(1 + 2j), np.complex64(3 + 4j)),
                 (-1, np.complex64(2j))):
        np.testing.assert_allclose(njit(f)(a, b, 5), f(a, b, 5), rtol=1e-12)
    got = njit(f)(-3, 3, 4)
    assert got[0] == -3.0 and got[3] == 3.0 and np.isnan(got[1:3]).all()
    with pytest.raises(TypingError, match='The argument "start" must be a number'):
        njit(f)("a", 5, 3)
    with pytest.raises(TypingError, match='The first argument "start" must be a number'):
        njit(lambda a, b: np.logspace(a, b))("a", 5)


def test_interp_numpy_edges():
    xp = np.array([0.0, 1.0, np.nan, 3.0, 4.0, 5.0])
    fp = np.array([-np.inf, 1.0, 2.0, np.inf, 0.0, 1.0])
    x = np.array([np.nan, -1.0, 0.5, 2.5, 3.5, 9.0, 1.0])
    interp = njit(lambda x, xp, fp: np.interp(x, xp, fp))
    np.testing.assert_array_equal(interp(x, xp, fp), np.interp(x, xp, fp))
    fc = fp + 1j * fp[::-1]
    np.testing.assert_array_equal(interp(x, xp, fc), np.interp(x, xp, fc))
    assert interp(0.25, xp, fp) == np.interp(0.25, xp, fp)
    with pytest.raises(TypingError, match="xp must be 1D"):
        interp(1, np.ones((2, 2)), np.ones(4))
    with pytest.raises(TypingError, match="Cannot cast array data from complex"):
        interp(1j, xp, fp)


def test_misc_numpy_and_errors():
    check(lambda a, ax: np.count_nonzero(a, ax), np.arange(12).reshape(3, 4), 1)
    check(lambda x, o: np.isneginf(x, o), np.array([-np.inf, 0.0, np.inf]),
          np.zeros(3, dtype=np.bool_))
    assert njit(lambda x: np.angle(x))(np.ones(2, np.float32)).dtype == np.float32
    assert njit(lambda x: np.angle(x))(np.ones(2, np.complex64)).dtype == np.float32
    check(lambda x, n, inc: np.vander(x, n, inc), (3, 4.5, 3.25), 3, False)
    x = np.array([0.5, np.nan, np.inf])
    njit(lambda x: np.nan_to_num(x, copy=False, nan=1.0, posinf=9.0))(x)
    np.testing.assert_array_equal(x, [0.5, 1.0, 9.0])
    with pytest.raises(ValueError, match="condition shape inconsistent"):
        njit(lambda c, a: np.extract(c, a))(np.array([1, 0, 1, 1]), np.arange(3))
    with pytest.raises(ValueError, match="shape mismatch"):
        njit(lambda a, b: np.allclose(a, b))(np.ones(3), np.ones(2))
    with pytest.raises(TypingError, match='"rtol" must be a floating point'):
        njit(lambda a, b, r: np.allclose(a, b, r))(1, 2, False)
    with pytest.raises(TypeError, match="Numba does not support average with axis"):
        njit(lambda a, ax: np.average(a, axis=ax))(np.ones((2, 2)), 1)
    with pytest.raises(TypingError, match="array must be 1D"):
        njit(lambda a: np.trim_zeros(a))(np.ones((2, 2)))


def test_correlate_convolve_windows_and_dtypes():
    import itertools

    f = njit(lambda a, v, m: np.correlate(a, v, m))
    g = njit(lambda a, v, m: np.convolve(a, v, m))
    rng = np.random.default_rng(0)
    for n, m in itertools.product(range(1, 6), range(1, 6)):
        a, v = rng.random(n), rng.random(m)
        for mode in ("full", "same", "valid"):
            np.testing.assert_allclose(f(a, v, mode), np.correlate(a, v, mode))
            np.testing.assert_allclose(g(a, v, mode), np.convolve(a, v, mode))
    for d1, d2 in itertools.product([np.int8, np.int32, np.float32, np.complex64], repeat=2):
        a, v = np.arange(3, dtype=d1), np.arange(2, dtype=d2)
        assert f(a, v, "full").dtype == np.correlate(a, v, "full").dtype
        assert g(a, v, "full").dtype == np.convolve(a, v, "full").dtype
    with pytest.raises(TypingError, match="only supported on 1D arrays"):
        g(np.ones((2, 2)), np.ones(3), "full")


def test_searchsorted_as_numpy():
    import itertools

    f = njit(lambda a, v: np.searchsorted(a, v))
    r = njit(lambda a, v: np.searchsorted(a, v, side="right"))
    bins = np.float64(list(np.arange(5) ** 2) + [np.nan] * 3) / 2.0
    values = np.arange(20) - 0.5
    for a in (bins, list(bins)):
        for v in (values, values.reshape(4, 5), list(values), 3.0, np.nan):
            np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v))
            np.testing.assert_array_equal(r(a, v), np.searchsorted(a, v, side="right"))
    # Unsorted input: NumPy's search, step for step.
    a = np.array([1, 2, 0])
    v = np.array([[5, 4], [6, 7], [2, 1], [0, 3]])
    np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v))
    pool = [complex(*c) for c in itertools.product([0, 1, np.nan], repeat=2)]
    rng = np.random.default_rng(4)
    for _ in range(30):
        a = rng.choice(pool, 5)
        v = rng.choice(pool, 6)
        np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v))
        np.testing.assert_array_equal(f(np.sort(a), v), np.searchsorted(np.sort(a), v))
    with pytest.raises(TypingError, match="Invalid value given for 'side'"):
        njit(lambda a, v, s: np.searchsorted(a, v, side=s))([1, 2], 1, "right")


def test_contains_of_arrays():
    f = njit(lambda a, x: x in a)
    assert f(np.arange(5), 3) and not f(np.arange(5), 7)
    assert f(np.arange(6.0).reshape(2, 3), 4.0)
    assert not f(np.array([np.nan]), np.nan)
    assert f(np.array([1 + 2j]), 1 + 2j)
