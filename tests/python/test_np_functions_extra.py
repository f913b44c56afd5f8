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


def test_insert_delete_append_forms():
    ins = lambda a, o, v: np.insert(a, o, v)  # noqa: E731
    check(ins, [1, 2, 3, 4, 5], 2, [99, 98])
    check(ins, np.arange(10), [2, 5, 8], 99)
    check(ins, np.arange(5), [4, 0, 2], [40, 0, 20])
    check(ins, np.arange(10), [-1, -4], [11, 22])
    check(ins, np.arange(5), [2], [98, 99])
    check(ins, np.arange(12).reshape(3, 4), 5, 99)
    dele = lambda a, o: np.delete(a, o)  # noqa: E731
    check(dele, [1, 2, 3, 4, 5], [2, 3])
    check(dele, [1, 2, 3, 4], slice(1, 3, 1))
    check(dele, np.arange(10), slice(10))
    check(dele, np.arange(60).reshape(3, 4, 5), [5, 30, 27, 8])
    app = lambda a, v, ax: np.append(a, v, axis=ax)  # noqa: E731
    check(app, np.array([[1, 2, 3], [4, 5, 6]]), np.array([[7, 8, 9]]), 0)
    check(app, np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3), 1)
    check(app, 2, 2, None)


def test_insert_delete_append_errors():
    ins = njit(lambda a, o, v: np.insert(a, o, v))
    with pytest.raises(TypingError, match="arr must be either an Array or a Sequence"):
        ins(2, 0, 9)
    with pytest.raises(TypingError, match="obj should be an Integer, an Array or a Sequence"):
        ins(np.arange(5), 2.5, 9)
    with pytest.raises(TypingError, match="obj should be of Integer dtype"):
        ins(np.arange(5), [1.5, 2.5], 9)
    with pytest.raises(IndexError, match="index is out of bounds for the given array size"):
        ins(np.arange(5), 10, 9)
    with pytest.raises(ValueError, match="shape mismatch"):
        ins(np.arange(5), [1, 2], [6, 7, 8])
    dele = njit(lambda a, o: np.delete(a, o))
    with pytest.raises(TypingError, match="obj should be of Integer dtype"):
        dele([1, 2], 3.14)
    with pytest.raises(TypingError, match="arr must be either an Array or a Sequence"):
        dele(2, 3)
    with pytest.raises(IndexError, match=r"obj must be less than the len\(arr\)"):
        dele([1, 2], 3)
    app = njit(lambda a, v, ax: np.append(a, v, axis=ax))
    with pytest.raises(TypingError, match='The first argument "arr" must be array-like'):
        app(None, np.ones(2), 0)
    with pytest.raises(TypingError, match='The third argument "axis" must be an integer'):
        app(np.ones(2), np.ones(2), 0.0)


def test_repeat_lists_and_method():
    check(lambda a, r: np.repeat(a, r), np.arange(2), [1, 2])
    check(lambda a, r: np.repeat(a, r), np.arange(1), [3])
    check(lambda a, r: np.repeat(a, r), (0, 1, 2), 2)
    check(lambda a, r: a.repeat(r), np.arange(2), [2, 0])
    check(lambda a, r: a.repeat(r), np.arange(4).reshape(2, 2), 2)
    for r in (1.0, True, [1.0, 1.0]):
        with pytest.raises(TypingError, match="The repeats argument must be an integer"):
            njit(lambda a, r: a.repeat(r))(np.ones(2), r)
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        njit(lambda a, r: np.repeat(a, r))(np.ones(2), [1, 1, 1])


def test_cross_forms():
    f = lambda a, b: np.cross(a, b)  # noqa: E731
    check(f, (1, 2, 3), (4, 5, 6))
    check(f, np.array([1, 2, 3]), np.array([[4, 5, 6], [1, 2, 3]]))
    check(f, np.array([1, 2]), np.array([4.5, 5, 6]))
    check(f, np.arange(36).reshape(6, 2, 3), np.arange(4).reshape(2, 2))
    check(f, np.array([[1, 2, 3], [4, 5, 6]]), ((4, 5), (1, 2)))
    with pytest.raises(ValueError, match="Dimensions for both inputs is 2"):
        njit(f)(np.array([1, 2]), np.array([3, 4]))
    with pytest.raises(ValueError, match="Incompatible dimensions for cross product"):
        njit(f)(np.arange(4), np.arange(3))
    with pytest.raises(TypingError, match="Inputs must be array-like."):
        njit(f)(np.arange(3), "abc")


def test_split_lists_and_slices():
    def same(got, expected):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
    sp = lambda a, i, ax: np.split(a, i, axis=ax)  # noqa: E731
    asp = lambda a, i, ax: np.array_split(a, i, axis=ax)  # noqa: E731
    a = np.arange(64).reshape(4, 4, 4)
    for args in [(list(range(10)), [1, 4, 72], 0), (tuple(range(10)), [3, 1], 0),
                 (a, [2, 1, 5], 1), (a, [1, 3], 2), (a, [1], -3),
                 (np.arange(100).reshape(2, -1), (np.int32(4), 10), 0)]:
        same(njit(sp)(*args), sp(*args))
        same(njit(asp)(*args), asp(*args))
    same(njit(asp)(list(range(8)), 3, 0), asp(list(range(8)), 3, 0))
    with pytest.raises(ValueError, match="np.split: Argument axis out of bounds"):
        njit(sp)(np.ones(5), [3], -3)


def test_axes_functions_errors():
    with pytest.raises(TypingError, match='The second argument "axis1" must be an integer'):
        njit(lambda a, i, j: np.swapaxes(a, i, j))(np.arange(4), "abc", 0)
    mv = njit(lambda a, s, d: np.moveaxis(a, s, d))
    with pytest.raises(TypingError, match='third argument "destination" must be an integer'):
        mv(np.arange(4), 0, "abc")
    with pytest.raises(ValueError, match="np.moveaxis: repeated axis in source argument"):
        mv(np.arange(8).reshape(2, 4), (0, 0), (0, 1))
    with pytest.raises(ValueError, match="np.moveaxis: Argument destination out of bounds"):
        mv(np.arange(8).reshape(2, 4), (0, 1), (1, -3))
    with pytest.raises(TypingError, match=r"Input must be >= 2-d."):
        njit(lambda a: np.rot90(a))(np.arange(3))
    with pytest.raises(TypingError, match='The second argument "k" must be an integer'):
        njit(lambda a, k: np.rot90(a, k))(np.eye(2), "abc")


def test_take_along_axis_layout_and_errors():
    a = np.arange(24.0).reshape(3, 1, 4, 2)
    for ax in (0, 1, 2, 3, -1):
        f = njit(lambda a, i: np.take_along_axis(a, i, ax))
        ai = np.argsort(a, axis=ax)
        got = f(a, ai)
        expected = np.take_along_axis(a, ai, ax)
        np.testing.assert_array_equal(got, expected)
        assert got.strides == expected.strides
    arr = np.ones((3, 4, 1))
    ai = np.ones((1, 2, 5), dtype=np.intp)
    got = njit(lambda a, i: np.take_along_axis(a, i, -2))(arr, ai)
    assert got.shape == (3, 2, 5) and got.flags.c_contiguous
    g = njit(lambda a, i: np.take_along_axis(a, i, None))
    np.testing.assert_array_equal(g(a, np.array([1, 2], dtype=np.uint64)), [1.0, 2.0])
    with pytest.raises(TypingError, match="axis must be a literal value"):
        njit(lambda a, i, ax: np.take_along_axis(a, i, ax))(a, np.argsort(a, 0), 0)
    with pytest.raises(TypingError, match="axis is out of bounds"):
        njit(lambda a, i: np.take_along_axis(a, i, 2))(np.ones((2, 4)), np.ones((2, 4), np.intp))
    with pytest.raises(TypingError, match="indices array must contain integers"):
        g(np.ones(3), np.array([0.0]))
    with pytest.raises(ValueError, match="dimensions don't match"):
        njit(lambda a, i: np.take_along_axis(a, i, 0))(np.ones((2, 4)), np.ones((2, 3), np.intp))


def test_windows_exact():
    f = njit(lambda M: (np.hanning(M), np.hamming(M), np.blackman(M), np.bartlett(M)))
    for M in (-1, 0, 1, 2, 5, 12, 51, 100):
        for got, expected in zip(f(M), (np.hanning(M), np.hamming(M), np.blackman(M),
                                        np.bartlett(M))):
            np.testing.assert_array_equal(got, expected)
    k = njit(lambda M, b: np.kaiser(M, b))
    for M in (0, 1, 5, 12):
        for beta in (0.0, 5.0, 14.0, 3):
            np.testing.assert_allclose(k(M, beta), np.kaiser(M, beta), rtol=1e-15, atol=0)
    with pytest.raises(TypingError, match="M must be an integer"):
        k(1.1, 1.0)
    with pytest.raises(TypingError, match="beta must be an integer or float"):
        k(5, 1j)


def test_trim_zeros_strings():
    f = njit(lambda a, t: np.trim_zeros(a, t))
    for a, t in [(np.array(['0', 'Hello', 'world']), 'fb'), (np.array(['\0', '1', '2']), 'f'),
                 (np.array(['', 'a', '']), 'b'), (np.array([0, 1, 2, 0, 0]), 'FB')]:
        np.testing.assert_array_equal(f(a, t), np.trim_zeros(a, t))


def test_select_errors():
    f = njit(lambda c, ch, d: np.select(c, ch, d))
    x = np.arange(10)
    np.testing.assert_array_equal(f([x < 3, x > 5], [x, x ** 2], 0),
                                  np.select([x < 3, x > 5], [x, x ** 2], 0))
    for c, ch, d, msg in [
        ([np.array(True), np.array(False)], [np.array(1), np.array(2)], 0,
         "condlist arrays must be of at least dimension 1"),
        ([np.array([True]), np.array([False])], [np.array([[1]]), np.array([[2]])], 0,
         "condlist and choicelist elements must have the same number of dimensions"),
        (np.array([True, False]), np.array([1, 2]), 0, "condlist must be a List or a Tuple"),
        ([True], [0], [0], "default must be a scalar"),
        ([(x < 3).astype(np.int64)], [x], 0, "condlist arrays must contain booleans"),
        ([(False,)] * 3, [np.array([1])] * 3, 0, "items of condlist must be arrays"),
    ]:
        with pytest.raises(TypingError, match=msg):
            f(c, ch, d)


def test_array_repeat_method_in_a_fresh_process():
    # The method is typed by an overload module loaded on first need: it must be found
    # without any other NumPy function compiled before it.
    import subprocess
    import sys

    code = (
        "import numpy as np, numba_rs as nb\n"
        "print(list(nb.njit(lambda a: a.repeat(2))(np.arange(3))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == str(list(np.arange(3).repeat(2)))
