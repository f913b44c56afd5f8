"""NumPy's array manipulation functions in jitted code against NumPy's own results:
joining (concatenate, stack, hstack, vstack, dstack, column_stack), views (expand_dims,
flip, fliplr, flipud, transpose, asarray), new arrays (roll, diff, unique, diag, ravel,
copy), searching and counting (searchsorted, bincount, histogram), on several dtypes and on
C, F, strided and reversed layouts; keyword forms; and the errors Numba raises (its
messages where it has one). Every test also checks, through the autouse fixture, that NRT
allocations balance."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

DTYPES = [np.int64, np.float32, np.float64, np.complex128, np.bool_]
REAL_DTYPES = [np.int64, np.int32, np.float32, np.float64]


def rand(shape, dtype=np.float64, seed=0, lo=-4, hi=5):
    """Random values with repeats (small integers), of any dtype."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    values = rng.integers(lo, hi, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (values + 1j * rng.integers(lo, hi, size=shape)).astype(dtype)
    return values.astype(dtype)


def layouts(a):
    """The same values as C, F (2-d and up), strided and reversed (negative strides)."""
    yield "C", np.ascontiguousarray(a)
    if a.ndim >= 2:
        yield "F", np.asfortranarray(a)
    big = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
    every_other = tuple(slice(None, None, 2) for _ in a.shape)
    big[every_other] = a
    yield "strided", big[every_other]
    backwards = tuple(slice(None, None, -1) for _ in a.shape)
    yield "reversed", np.ascontiguousarray(a[backwards])[backwards]


def same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.shape == expected.shape, (got.shape, expected.shape)
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        np.testing.assert_array_equal(got, expected)
    else:
        assert got == expected, (got, expected)


# ---------------------------------------------------------------------------
# Joining
# ---------------------------------------------------------------------------


def concat2(a, b):
    return np.concatenate((a, b))


def concat3_axis(a, b, c, axis):
    return np.concatenate((a, b, c), axis)


def concat_kw(a, b, axis):
    return np.concatenate((a, b), axis=axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_concatenate_layouts_and_dtypes(dtype):
    x = rand((3, 4), dtype, seed=1)
    y = rand((2, 4), dtype, seed=2)
    for (_, a), (_, b) in zip(layouts(x), layouts(y)):
        same(njit(concat2)(a, b), concat2(a, b))
    v = rand((5,), dtype, seed=3)
    for name, a in layouts(v):
        same(njit(concat2)(a, a), concat2(a, a))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenate_axis(axis):
    shapes = {0: [(1, 3, 2), (4, 3, 2), (2, 3, 2)], 1: [(2, 1, 2), (2, 4, 2), (2, 2, 2)],
              2: [(2, 3, 1), (2, 3, 3), (2, 3, 2)]}[axis % 3]
    a, b, c = (rand(s, np.float64, seed=i) for i, s in enumerate(shapes))
    for (_, x), (_, y) in zip(layouts(a), layouts(b)):
        same(njit(concat3_axis)(x, y, c, axis), concat3_axis(x, y, c, axis))
        same(njit(concat_kw)(x, x, axis), concat_kw(x, x, axis))


def test_concatenate_mixed_dtypes_and_layout():
    a = rand((3, 2), np.int64)
    b = rand((3, 2), np.float32, seed=1)
    c = rand((3, 2), np.bool_, seed=2)
    # Numba unifies the dtypes as NumPy promotes them.
    same(njit(concat2)(a, b), concat2(a, b))
    same(njit(concat2)(c, a), concat2(c, a))
    same(njit(concat2)(b, c), concat2(b, c))
    # All-F inputs give an F result (Numba's rule); anything else C.
    f = njit(concat_kw)(np.asfortranarray(a), np.asfortranarray(a), 1)
    assert f.flags.f_contiguous
    assert njit(concat_kw)(a, np.asfortranarray(a), 1).flags.c_contiguous


def test_concatenate_tuple_argument_and_empty():
    f = njit(lambda t: np.concatenate(t, axis=0))
    a, b = rand((2, 3)), rand((0, 3))
    same(f((a, b)), np.concatenate((a, b)))
    same(f((b, b)), np.concatenate((b, b)))


def test_concatenate_errors():
    a, b = rand((2, 3)), rand((2, 4))
    with pytest.raises(ValueError, match=r"np.concatenate\(\): input sizes over dimension 1 do not match"):
        njit(concat2)(a, b)
    with pytest.raises(IndexError, match="axis out of bounds"):
        njit(concat_kw)(a, a, 2)
    with pytest.raises(IndexError, match="axis out of bounds"):
        njit(concat_kw)(a, a, -3)
    with pytest.raises(TypingError):
        njit(concat2)(a, rand((3,)))  # different numbers of dimensions
    with pytest.raises(TypingError):
        njit(lambda x: np.concatenate((x, x), axis=1.0))(a)
    with pytest.raises(TypingError):
        njit(lambda x: np.concatenate(x))(a)  # not a tuple


def stack_kw(a, b, axis):
    return np.stack((a, b), axis=axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(dtype, axis):
    x, y = rand((3, 4), dtype, seed=4), rand((3, 4), dtype, seed=5)
    for (_, a), (_, b) in zip(layouts(x), layouts(y)):
        same(njit(stack_kw)(a, b, axis), np.stack((a, b), axis=axis))
    same(njit(lambda a, b: np.stack((a, b, a)))(x[0], y[0]), np.stack((x[0], y[0], x[0])))


def test_stack_errors():
    a = rand((2, 3))
    with pytest.raises(ValueError, match=r"np.stack\(\): all input arrays must have the same shape"):
        njit(stack_kw)(a, rand((3, 2)), 0)
    with pytest.raises(IndexError, match=r"np.stack\(\): axis out of bounds"):
        njit(stack_kw)(a, a, 3)
    with pytest.raises(TypingError):
        njit(stack_kw)(a, rand((6,)), 0)


@pytest.mark.parametrize("func, shape", [
    (func, shape)
    for func in ["hstack", "vstack", "dstack", "column_stack"]
    for shape in [(4,), (3, 2), (2, 3, 2)]
    if not (func == "column_stack" and len(shape) > 2)  # it takes 1-d and 2-d arrays
], ids=str)
def test_nd_stacks(func, shape):
    np_func = getattr(np, func)
    f = njit(eval(f"lambda a, b, c: np.{func}((a, b, c))"))
    x, y, z = (rand(shape, np.float64, seed=s) for s in range(3))
    for (_, a), (_, b) in zip(layouts(x), layouts(y)):
        same(f(a, b, z), np_func((a, b, z)))
    # Mixed dtypes are promoted.
    same(f(x.astype(np.int64), y.astype(np.float32), z), np_func((x.astype(np.int64), y.astype(np.float32), z)))


def test_nd_stacks_lengths_and_mixed_ranks():
    # Along the joined axis the lengths may differ.
    a, b = rand((2, 3)), rand((2, 5))
    same(njit(lambda a, b: np.hstack((a, b)))(a, b), np.hstack((a, b)))
    c = rand((4, 3))
    same(njit(lambda a, c: np.vstack((a, c)))(a, c), np.vstack((a, c)))
    # column_stack takes 1-d columns and 2-d blocks together.
    v = rand((2,), np.int64)
    same(njit(lambda v, a: np.column_stack((v, a, v)))(v, a), np.column_stack((v, a, v)))
    with pytest.raises(ValueError, match="do not match"):
        njit(lambda a, b: np.vstack((a, b)))(a, b)
    with pytest.raises(ValueError, match="same shape"):
        njit(lambda a, b: np.dstack((a, b)))(a, b)


# ---------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)], ids=str)
def test_expand_dims(shape):
    f = njit(lambda a, axis: np.expand_dims(a, axis))
    g = njit(lambda a: np.expand_dims(a, axis=-1))
    for name, a in layouts(rand(shape, np.float64)):
        for axis in range(-len(shape) - 1, len(shape) + 1):
            got = f(a, axis)
            same(got, np.expand_dims(a, axis))
            assert np.shares_memory(got, a)
        same(g(a), np.expand_dims(a, -1))
    with pytest.raises(IndexError, match=r"np.expand_dims\(\): axis out of bounds"):
        f(rand(shape), len(shape) + 1)
    with pytest.raises(TypingError):
        f(rand(shape), 1.5)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["flip", "fliplr", "flipud"])
def test_flips_are_views(func, dtype):
    f = njit(eval(f"lambda a: np.{func}(a)"))
    for shape in [(3, 4), (2, 3, 2), (0, 3)]:
        for name, a in layouts(rand(shape, dtype)):
            got = f(a)
            same(got, getattr(np, func)(a))
            if a.size:
                assert np.shares_memory(got, a)
    if func != "fliplr":
        same(f(rand((5,), dtype)), getattr(np, func)(rand((5,), dtype)))
    else:
        with pytest.raises(TypingError):
            f(rand((5,), dtype))


def test_flip_of_a_new_array_keeps_it_alive():
    @njit
    def f(n):
        return np.flip(np.arange(n).reshape(2, -1)), np.flipud(np.arange(n))

    same(f(6), (np.flip(np.arange(6).reshape(2, -1)), np.arange(6)[::-1]))


def test_views_write_through():
    @njit
    def f(a):
        b = np.flip(a)
        b[0, 0] = 100.0
        c = np.expand_dims(a, 0)
        c[0, 1, 1] = -1.0
        d = np.transpose(a, (1, 0))
        d[2, 0] = 7.0
        return a

    a = np.zeros((2, 3))
    expected = a.copy()
    expected[-1, -1], expected[1, 1], expected[0, 2] = 100.0, -1.0, 7.0
    same(f(a), expected)
    same(a, expected)


def test_transpose_function():
    a = rand((2, 3, 4))
    for name, x in layouts(a):
        same(njit(lambda x: np.transpose(x))(x), np.transpose(x))
        for axes in [(1, 0, 2), (2, 0, 1), (0, 1, 2), (-1, 0, 1)]:
            got = njit(lambda x, axes: np.transpose(x, axes))(x, axes)
            same(got, np.transpose(x, axes))
            assert np.shares_memory(got, x)
        same(njit(lambda x: np.transpose(x, axes=(2, 1, 0)))(x), np.transpose(x, (2, 1, 0)))
    with pytest.raises(ValueError, match="repeated axis in transpose"):
        njit(lambda x: np.transpose(x, (0, 0, 1)))(a)
    with pytest.raises(ValueError, match="out of bounds"):
        njit(lambda x: np.transpose(x, (0, 1, 3)))(a)
    with pytest.raises(TypingError):
        njit(lambda x: np.transpose(x, (0, 1)))(a)


def test_asarray_copy_ravel():
    a = rand((3, 4), np.float64)
    for name, x in layouts(a):
        got = njit(lambda x: np.asarray(x))(x)
        same(got, x)
        assert np.shares_memory(got, x)
        same(njit(lambda x: np.asarray(x, np.int32))(x), np.asarray(x, np.int32))
        same(njit(lambda x: np.asarray(x, dtype=np.float64))(x), x)
        c = njit(lambda x: np.copy(x))(x)
        same(c, np.copy(x))
        assert not np.shares_memory(c, x)
        # F stays F, as in Numba; anything else is copied into C order.
        assert c.flags.f_contiguous if name == "F" else c.flags.c_contiguous
        same(njit(lambda x: np.ravel(x))(x), np.ravel(x))
    same(njit(lambda x: np.ravel(a=x))(rand((2, 2, 3), np.bool_)), np.ravel(rand((2, 2, 3), np.bool_)))


# ---------------------------------------------------------------------------
# New arrays
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_roll(dtype):
    f = njit(lambda a, s: np.roll(a, s))
    for shape in [(7,), (3, 4), (2, 3, 2)]:
        for name, a in layouts(rand(shape, dtype)):
            for shift in [0, 1, 3, -2, 13, -25]:
                same(f(a, shift), np.roll(a, shift))
            same(f(a, True), np.roll(a, 1))
            same(njit(lambda a: np.roll(a, shift=-1))(a), np.roll(a, -1))
    same(f(rand((0,), dtype), 3), np.roll(rand((0,), dtype), 3))
    with pytest.raises(TypingError):
        f(rand((3,), dtype), 1.0)


@pytest.mark.parametrize("dtype", DTYPES + [np.int8, np.uint8], ids=lambda d: np.dtype(d).name)
def test_diff(dtype):
    f = njit(lambda a, n: np.diff(a, n))
    g = njit(lambda a: np.diff(a))
    lo, hi = (0, 255) if dtype == np.uint8 else (-100, 100)
    for shape in [(6,), (3, 5), (2, 3, 4)]:
        for name, a in layouts(rand(shape, dtype, lo=lo, hi=hi)):
            same(g(a), np.diff(a))
            for n in [0, 1, 2, 3, shape[-1], shape[-1] + 2]:
                same(f(a, n), np.diff(a, n))
            same(njit(lambda a: np.diff(a, n=2))(a), np.diff(a, n=2))
    with pytest.raises(ValueError, match=r"diff\(\): order must be non-negative"):
        f(rand((4,), dtype), -1)
    # A 0-d array: NumPy's ValueError, Numba's TypingError.
    with pytest.raises(ValueError):
        np.diff(np.array(dtype(1)))
    with pytest.raises(TypingError):
        g(np.array(dtype(1)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float32, np.float64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_unique(dtype):
    f = njit(lambda a: np.unique(a))
    for shape in [(20,), (4, 5), (0,), (1,)]:
        for name, a in layouts(rand(shape, dtype, lo=0, hi=6)):
            same(f(a), np.unique(a))
    if dtype in (np.float32, np.float64):
        a = np.array([3.0, np.nan, 1.0, np.nan, 3.0, -np.inf, np.inf, 1.0], dtype)
        same(f(a), np.unique(a))
    with pytest.raises(TypingError):
        f(rand((3,), np.complex128))


def test_diag():
    f = njit(lambda v, k: np.diag(v, k))
    for dtype in DTYPES:
        v = rand((4,), dtype)
        for name, x in layouts(v):
            for k in [0, 1, 3, -2]:
                same(f(x, k), np.diag(x, k))
            same(njit(lambda x: np.diag(x))(x), np.diag(x))
        m = rand((3, 5), dtype)
        for name, x in layouts(m):
            for k in [0, 2, -1, 4, 7, -3, -6]:
                same(f(x, k), np.diag(x, k))
            same(njit(lambda x: np.diag(x, k=1))(x), np.diag(x, 1))
    with pytest.raises(TypingError):
        f(rand((2, 2, 2)), 0)


def test_temporaries_are_freed():
    @njit
    def f(n):
        a = np.arange(n)
        b = np.concatenate((a, a[::-1]))
        c = np.unique(np.flip(b))
        h, edges = np.histogram(np.roll(c, 2))
        d = np.diff(np.stack((c, c)), 2)
        return c.sum() + h.sum() + d.sum() + np.bincount(c).sum() + np.searchsorted(c, 3)

    a = np.arange(9)
    b = np.concatenate((a, a[::-1]))
    c = np.unique(b)
    expected = c.sum() + np.histogram(c)[0].sum() + np.diff(np.stack((c, c)), 2).sum() \
        + np.bincount(c).sum() + np.searchsorted(c, 3)
    assert f(9) == expected


# ---------------------------------------------------------------------------
# Searching and counting
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL_DTYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_searchsorted(dtype):
    hay = np.sort(rand((15,), dtype, lo=-5, hi=6))
    keys = rand((3, 4), dtype, seed=7, lo=-7, hi=8)
    left = njit(lambda a, v: np.searchsorted(a, v))
    right = njit(lambda a, v: np.searchsorted(a, v, side="right"))
    pos = njit(lambda a, v: np.searchsorted(a, v, "left"))
    for name, a in layouts(hay):
        for k in keys.ravel()[:6]:
            assert left(a, k) == np.searchsorted(a, k)
            assert right(a, k) == np.searchsorted(a, k, side="right")
            assert pos(a, k) == np.searchsorted(a, k, "left")
        for kname, v in layouts(keys):
            same(left(a, v), np.searchsorted(a, v))
            same(right(a, v), np.searchsorted(a, v, side="right"))
            same(left(a, v[0]), np.searchsorted(a, v[0]))


def test_searchsorted_nan_and_mixed_types():
    a = np.array([-1.0, 0.0, 0.0, 2.5, np.nan, np.nan])
    v = np.array([np.nan, -2.0, 0.0, 2.5, 3.0, np.inf])
    for side in ["left", "right"]:
        g = njit(eval(f"lambda a, v: np.searchsorted(a, v, side='{side}')"))
        same(g(a, v), np.searchsorted(a, v, side=side))
        for k in v:
            assert g(a, k) == np.searchsorted(a, k, side=side)
    ints = np.arange(10) * 2
    assert njit(lambda a, v: np.searchsorted(a, v))(ints, 3.5) == np.searchsorted(ints, 3.5)
    same(njit(lambda a, v: np.searchsorted(a, v))(ints, v), np.searchsorted(ints, v))
    with pytest.raises(TypingError):
        njit(lambda a: np.searchsorted(a, 1.0, side="middle"))(a)
    with pytest.raises(TypingError):
        njit(lambda a: np.searchsorted(a, 1.0))(rand((2, 2)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16], ids=lambda d: np.dtype(d).name)
def test_bincount(dtype):
    x = rand((30,), dtype, lo=0, hi=9)
    w = np.random.default_rng(3).uniform(-1, 1, 30)
    for name, a in layouts(x):
        same(njit(lambda a: np.bincount(a))(a), np.bincount(a))
        for wname, ww in layouts(w):
            same(njit(lambda a, w: np.bincount(a, w))(a, ww), np.bincount(a, ww))
        same(njit(lambda a: np.bincount(a, minlength=20))(a), np.bincount(a, minlength=20))
        same(njit(lambda a: np.bincount(a, minlength=3))(a), np.bincount(a, minlength=3))
        iw = rand((30,), np.int32, seed=9)
        same(njit(lambda a, w: np.bincount(a, weights=w, minlength=12))(a, iw),
             np.bincount(a, weights=iw, minlength=12))
    empty = np.zeros(0, dtype)
    same(njit(lambda a: np.bincount(a))(empty), np.bincount(empty))
    same(njit(lambda a: np.bincount(a, minlength=4))(empty), np.bincount(empty, minlength=4))


def test_bincount_errors():
    f = njit(lambda a: np.bincount(a))
    for bad in [np.array([1, -1, 2]), np.array([-3, 1])]:
        with pytest.raises(ValueError, match=r"bincount\(\): first argument must be non-negative"):
            f(bad)
    with pytest.raises(ValueError, match="'minlength' must not be negative"):
        njit(lambda a: np.bincount(a, minlength=-1))(np.array([1, 2]))
    with pytest.raises(ValueError, match="weights and list don't have the same length"):
        njit(lambda a, w: np.bincount(a, w))(np.array([1, 2]), np.ones(3))
    with pytest.raises(TypingError):
        f(np.array([1.0, 2.0]))
    with pytest.raises(TypingError):
        f(np.array([[1, 2]]))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_histogram(dtype):
    rng = np.random.default_rng(11)
    data = (rng.normal(0, 3, size=(40, 5)) if dtype == np.float64
            else rng.integers(-20, 20, size=(40, 5))).astype(dtype)
    for name, a in layouts(data):
        same(njit(lambda a: np.histogram(a))(a), np.histogram(a))
        for bins in [1, 3, 7, 25]:
            same(njit(lambda a, b: np.histogram(a, b))(a, bins), np.histogram(a, bins))
            same(njit(lambda a, b: np.histogram(a, bins=b, range=(-4.0, 5)))(a, bins),
                 np.histogram(a, bins, range=(-4.0, 5)))
        same(njit(lambda a: np.histogram(a, range=(0, 3)))(a), np.histogram(a, range=(0, 3)))
        edges = np.array([-10.0, -2.0, -2.0, 0.0, 1.5, 3.0, 8.0])
        for ename, e in layouts(edges):
            got = njit(lambda a, e: np.histogram(a, e))(a, e)
            same(got, np.histogram(a, e))
            # Numba returns the edges array itself.
            assert np.shares_memory(got[1], e)
        same(njit(lambda a, e: np.histogram(a, bins=e))(a, edges.astype(np.int64)),
             np.histogram(a, edges.astype(np.int64)))


def test_histogram_edge_cases():
    f = njit(lambda a: np.histogram(a))
    g = njit(lambda a, b: np.histogram(a, b))
    same(f(np.full(7, 3.0)), np.histogram(np.full(7, 3.0)))  # empty range, widened
    same(f(np.zeros(0)), np.histogram(np.zeros(0)))  # no data: range (0, 1)
    same(g(np.arange(10.0), np.zeros(0)), np.histogram(np.arange(10.0), np.zeros(0)))
    same(g(np.arange(10.0), np.array([4.0])), np.histogram(np.arange(10.0), np.array([4.0])))
    # Values on the edges, the last edge included.
    x = np.linspace(0, 1, 11)
    same(g(x, 10), np.histogram(x, 10))
    # float32 data: Numba's edges are float64; the counts are NumPy's.
    x32 = np.random.default_rng(2).uniform(-1, 1, 50).astype(np.float32)
    hist, edges = g(x32, 8)
    assert edges.dtype == np.float64
    same(hist, np.histogram(x32.astype(np.float64), 8)[0])


def test_histogram_errors():
    a = np.arange(5.0)
    with pytest.raises(ValueError, match="`bins` should be a positive integer"):
        njit(lambda a, b: np.histogram(a, b))(a, 0)
    with pytest.raises(ValueError, match="max must be larger than min in range parameter"):
        njit(lambda a: np.histogram(a, range=(2.0, 1.0)))(a)
    with pytest.raises(ValueError, match="bins must increase monotonically"):
        njit(lambda a, b: np.histogram(a, b))(a, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="not finite"):
        njit(lambda a: np.histogram(a))(np.array([1.0, np.nan]))
    with pytest.raises(TypingError):
        njit(lambda a: np.histogram(a, 2.5))(a)
    with pytest.raises(TypingError):
        njit(lambda a: np.histogram(a))(a.astype(np.complex128))
