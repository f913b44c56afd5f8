"""Element-wise array functions and methods in the forms `_npmethods` / `_npaxis` add to
the native templates: `np.clip` / `a.clip` with `out=` and array bounds, `np.where` with
NumPy's dtype promotion, layouts and array-likes, `np.round(a, d, out)`, `np.real` /
`np.imag` of real arrays, `np.copy` of array-likes, `np.frombuffer`, `a.sum(axis=tuple)`,
`nonzero` of string arrays, and the errors Numba gives. NumPy is the oracle."""

import itertools

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError


def np_clip(a, lo, hi, out=None):
    return np.clip(a, lo, hi, out)


def method_clip(a, lo=None, hi=None, out=None):
    return a.clip(lo, hi, out=out)


@pytest.mark.parametrize("fn", [np_clip, method_clip])
def test_clip_scalars_arrays_and_out(fn):
    cf = njit(fn)
    a = np.linspace(-10, 10, 40).reshape(5, 2, 4)
    lo_arr = np.arange(-8, 0).astype(a.dtype).reshape(2, 4)
    hi_arr = np.arange(0, 8).astype(a.dtype).reshape(2, 4)
    for lo, hi in itertools.product([0, -5, lo_arr, None], [0, 5, hi_arr, None]):
        if lo is None and hi is None:
            with pytest.raises(ValueError, match="array_clip: must set either max or min"):
                cf(a, lo, hi)
            continue
        np.testing.assert_array_equal(cf(a, lo, hi), fn(a, lo, hi))
        got_out, want_out = np.empty_like(a), np.empty_like(a)
        r = cf(a, lo, hi, got_out)
        fn(a, lo, hi, want_out)
        np.testing.assert_array_equal(got_out, want_out)
        assert r is got_out or np.shares_memory(r, got_out)


def test_clip_nan_and_errors():
    cf = njit(np_clip)
    a = np.array([1.0, np.nan, 5.0])
    np.testing.assert_array_equal(cf(a, 0.0, 2.0), np.clip(a, 0.0, 2.0))
    buf = np.full(8, 999.0)
    with pytest.raises(ValueError, match="shape of the 'out' array does not match"):
        cf(np.arange(5.0), 0.0, 3.0, buf[:3])
    np.testing.assert_array_equal(buf, np.full(8, 999.0))
    with pytest.raises(ValueError, match="shape mismatch"):
        cf(np.ones((5, 2, 4)), np.zeros((5, 1)), 1.0)
    with pytest.raises(TypingError, match='The argument "out" must have the same number'):
        cf(np.arange(5.0), 0.0, 3.0, np.empty((2, 5)))
    with pytest.raises(TypingError, match='The argument "a_min" must be a number'):
        cf(1, "x", 2)
    with pytest.raises(TypingError, match='The argument "out" must be an array'):
        cf(1, 0, 2, 3)


def where3(c, x, y):
    return np.where(c, x, y)


def test_where_promotes_like_numpy():
    cf = njit(where3)
    c = np.array([0.0, 0.5, np.nan])
    kinds = [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
    for a, b in itertools.product(kinds, kinds):
        x, y = np.full(3, 4, a), np.full(3, 9, b)
        want, got = np.where(c, x, y), cf(c, x, y)
        assert got.dtype == want.dtype, (a, b)
        np.testing.assert_array_equal(got, want)
        # Scalars only: a 0-d array, as NumPy gives.
        want, got = np.where(np.float64(0.5), a(4), b(5)), cf(np.float64(0.5), a(4), b(5))
        assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == want.dtype


def test_where_layout_and_array_likes():
    cf = njit(where3)
    a = np.linspace(-2, 4, 20).reshape(4, 5, order="F")
    want, got = np.where(a > 0, 0, 1), cf(a > 0, 0, 1)
    np.testing.assert_array_equal(got, want)
    assert got.flags.f_contiguous == want.flags.f_contiguous
    x = np.ones((2, 2))
    np.testing.assert_array_equal(cf([True, False], x, 2 * x), np.where([True, False], x, 2 * x))
    with pytest.raises(ValueError, match="objects cannot be broadcast"):
        cf(np.ones(2, dtype=np.bool_), np.ones(3), np.ones(3))
    with pytest.raises(TypingError, match='The argument "condition" must be array-like'):
        cf(None, 2, 3)
    with pytest.raises(TypingError, match='The argument "x" must be array-like if provided'):
        cf(1, "hello", 3)
    with pytest.raises(TypingError, match='Argument "x" or "y" cannot be None'):
        cf(1, None, None)


def test_nonzero_of_strings_and_0d():
    arr = np.array(["Hello", "", "world", "\x00a"])
    f = njit(lambda a: np.nonzero(a))
    for got, want in zip(f(arr), np.nonzero(arr)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypingError, match="Calling nonzero on 0d arrays is not allowed"):
        f(np.array(1.0))


def test_round_with_out():
    def fn(a, d, out):
        np.round(a, d, out)
        return out

    cf = njit(fn)
    a = np.array([1.2345, -2.5, 3.75, 1e300])
    for d in (0, 1, 2, -1):
        np.testing.assert_array_equal(cf(a, d, np.empty_like(a)), fn(a, d, np.empty_like(a)))
    with pytest.raises(ValueError, match="invalid output shape"):
        cf(a, 1, np.empty(3))
    g = njit(lambda a, d, out: np.around(a, d, out))
    with pytest.raises(TypingError, match='The argument "out" must be an array'):
        g(1.5, 1, 2)


def test_real_imag_of_real_arrays():
    x = np.linspace(-10, 10)
    np.testing.assert_array_equal(njit(lambda a: np.real(a))(x), np.real(x))
    np.testing.assert_array_equal(njit(lambda a: np.imag(a))(x), np.imag(x))


def test_copy_of_array_likes():
    f = njit(lambda a: np.copy(a))
    for obj in [(1, 2, 3), [1.0, 2.0, 3.0], 6]:
        got, want = f(obj), np.copy(obj)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype and got.shape == want.shape
    with pytest.raises(TypingError, match='The argument "a" must be array-like'):
        f("hello")


def test_frombuffer():
    f = njit(lambda b: np.frombuffer(b, dtype=np.int16))
    g = njit(lambda b, c, o: np.frombuffer(b, dtype="complex64", count=c, offset=o))
    buf = bytearray(range(16))
    np.testing.assert_array_equal(f(buf), np.frombuffer(buf, dtype=np.int16))
    ro = bytes(range(16))
    got = f(ro)
    np.testing.assert_array_equal(got, np.frombuffer(ro, dtype=np.int16))
    assert not got.flags.writeable
    view = f(memoryview(bytearray(range(16))).toreadonly())
    assert not view.flags.writeable
    np.testing.assert_array_equal(g(buf, 1, 8), np.frombuffer(buf, "complex64", 1, 8))
    with pytest.raises(ValueError, match="buffer is smaller than requested size"):
        g(buf, 2, 8)
    with pytest.raises(ValueError, match="offset must be non-negative"):
        g(buf, -1, 17)
    with pytest.raises(ValueError, match="buffer size must be a multiple"):
        njit(lambda b: np.frombuffer(b, dtype=np.int64))(bytearray(12))

    @njit
    def allocated(shape):
        return np.frombuffer(np.ones(shape, dtype=np.int32), dtype=np.complex64)

    np.testing.assert_array_equal(allocated((4, 4)),
                                  np.frombuffer(np.ones((4, 4), np.int32), np.complex64))
    with pytest.raises(TypingError, match="must be a string constant"):
        njit(lambda b, dt: np.frombuffer(b, dtype=dt))(buf, "int32")
    with pytest.raises(TypingError, match='Argument "buffer" must be buffer-like'):
        njit(lambda b: np.frombuffer(b))(None)


def test_sum_over_axis_tuples():
    f = njit(lambda a, axis: a.sum(axis=axis))
    a = np.arange(24).reshape(2, 3, 4)
    for k in range(4):
        for ax in itertools.permutations([-2, -1, 0, 1, 2], k):
            if len(set(np.array(ax) % 3)) < k:
                continue
            want, got = a.sum(axis=ax), f(a, ax)
            np.testing.assert_array_equal(got, want)
            assert np.asarray(got).dtype == np.asarray(want).dtype
    small = np.ones((2, 3), np.int8)
    assert f(small, (0,)).dtype == small.sum(axis=(0,)).dtype
    fa = np.asfortranarray(np.arange(6).reshape(2, 3))
    assert f(fa, ()).flags.f_contiguous == fa.sum(axis=()).flags.f_contiguous
    for ax, err, msg in [((3,), np.exceptions.AxisError, "axis 3 is out of bounds"),
                         ((1, -2), ValueError, "duplicate value in 'axis'"),
                         ((0, 1, 2, 0), ValueError, "duplicate value in 'axis'")]:
        with pytest.raises(err, match=msg):
            f(a, ax)
    g = njit(lambda a, axis: a.sum(axis))
    with pytest.raises(np.exceptions.AxisError,
                       match="axis 2 is out of bounds for array of dimension 2"):
        g(np.ones((4, 3)), 2)


def test_argwhere_is_column_ordered():
    f = njit(lambda a: np.argwhere(a))
    a = np.arange(12).reshape(3, 4) % 3
    want, got = np.argwhere(a), f(a)
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides
    assert f(5).shape == np.argwhere(5).shape
    assert f(0).shape == np.argwhere(0).shape


def test_transpose_none():
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(njit(lambda a: a.transpose(None))(a), a.transpose(None))


def test_signature_with_numba_list_names():
    f = njit("float64[:](reflected list(float64)<iv=None>)")(lambda l: np.copy(l))
    np.testing.assert_array_equal(f([1.0, 2.0]), np.array([1.0, 2.0]))


def test_arange_bounds_by_position():
    cases = [(lambda x: np.arange(7, step=max(1, abs(x))), (3,)),
             (lambda x, y: np.arange(x, step=y), (-1, 5)),
             (lambda x, y: np.arange(x, step=y), (9, 2)),
             (lambda x, y: np.arange(2, y, step=x), (2, 9)),
             (lambda x, y: np.arange(x, stop=y), (-8, -1))]
    for fn, args in cases:
        np.testing.assert_array_equal(njit(fn)(*args), fn(*args))


def test_astype_keeps_f_order_and_refuses_records():
    f = njit(lambda a: a.astype(np.float32))
    a = np.arange(24, dtype=np.int8).reshape((3, 8)).T
    want, got = a.astype(np.float32), f(a)
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides
    dt = np.dtype([("x", np.int8)])
    with pytest.raises(TypingError, match="cannot convert from int32 to Record"):
        njit(lambda a: a.astype(dt))(np.arange(3, dtype=np.int32))
    with pytest.raises(TypingError, match="if dtype is a string it must be constant"):
        njit(lambda a, d: a.astype(d))(np.arange(3), "float32")


@pytest.mark.parametrize("pf", [np.ascontiguousarray, np.asfortranarray])
def test_as_layout_views_and_copies(pf):
    f = njit(lambda a: pf(a))
    base = np.arange(24)
    for x in [base, base.reshape(3, 8), base.reshape(3, 8).T, base.reshape(3, 8)[::2],
              np.array([0]).reshape(())]:
        want, got = pf(x), f(x)
        np.testing.assert_array_equal(got, want)
        assert got.strides == want.strides
        assert np.shares_memory(got, x) == np.shares_memory(want, x)
    ro = np.array([1, 2, 3])
    ro.flags.writeable = False
    assert f(ro).flags.writeable == pf(ro).flags.writeable
    for x in (42, 42.0, 1j, True):
        np.testing.assert_array_equal(f(x), pf(x))
    with pytest.raises(TypingError, match='The argument "a" must be array-like'):
        f("hello")


def test_scalar_item_and_take_nested_indices():
    assert njit(lambda x: x.item())(np.bool_(True)) is True
    assert njit(lambda x: x.item())(np.float32(1.5)) == 1.5
    a = np.arange(12.0).reshape(3, 4)
    f = njit(lambda a: a.take(((1, 2, 3), (4, 5, 6))))
    np.testing.assert_array_equal(f(a), a.take(((1, 2, 3), (4, 5, 6))))


def test_view_item_size_errors():
    f = njit(lambda a: a.view(np.int8))
    with pytest.raises(ValueError, match="Changing the dtype of a 0d array"):
        f(np.array(42, dtype=np.int32))
    g = njit(lambda a: a.view(np.int16))
    np.testing.assert_array_equal(g(np.arange(4, dtype=np.int32)),
                                  np.arange(4, dtype=np.int32).view(np.int16))
    h = njit(lambda a: a.view(np.int16))
    rec = np.zeros(4, dtype=np.dtype([("a", np.int8), ("b", np.int8), ("c", np.int8)]))
    with pytest.raises(ValueError, match="When changing to a smaller dtype"):
        h(rec)


def test_where_of_0d_condition():
    with pytest.raises(TypingError, match="Calling nonzero on 0d arrays is not allowed"):
        njit(lambda c: np.where(c))(np.array(1.0))


def test_list_and_tuple_indices_as_numpy():
    a = np.arange(12).reshape(3, 4)
    for fn in [lambda a: a[(1,), 2], lambda a: a[[0, 1], 1], lambda a: a[1, [0, 1]],
               lambda a: a[[0, 1]], lambda a: a[[2, 0], 1:3]]:
        np.testing.assert_array_equal(njit(fn)(a), fn(a))

    def store(a):
        a[[0, 2], 1] = 99
        return a

    np.testing.assert_array_equal(njit(store)(a.copy()), store(a.copy()))
    with pytest.raises(TypingError, match="Unsupported array index type float64"):
        njit(lambda a: a[1, 2.0])(np.ones((2, 3)))


def test_ravel_of_c_array_is_a_view():
    f = njit(lambda a: a.ravel())
    g = njit(lambda a: np.ravel(a))
    a = np.arange(6).reshape(2, 3)
    for fn in (f, g):
        r = fn(a)
        assert np.shares_memory(r, a)
        np.testing.assert_array_equal(r, a.ravel())
        t = fn(a.T)
        assert not np.shares_memory(t, a)
        np.testing.assert_array_equal(t, a.T.ravel())


def test_broadcast_to_same_shape_is_read_only():
    f = njit(lambda a: np.broadcast_to(a, a.shape))
    a = np.arange(4.0)
    got, want = f(a), np.broadcast_to(a, a.shape)
    np.testing.assert_array_equal(got, want)
    assert got.flags.writeable == want.flags.writeable
    assert a.flags.writeable


def test_transpose_of_tuples_refused():
    with pytest.raises(TypingError, match="np.transpose does not accept tuples"):
        njit(lambda a: np.transpose(a))((np.arange(3),))
    np.testing.assert_array_equal(njit(lambda a: np.transpose(a))([[1, 2], [3, 4]]),
                                  np.transpose([[1, 2], [3, 4]]))


def test_take_axis_error_is_numpys():
    f = njit(lambda a, i, ax: np.take(a, i, axis=ax))
    with pytest.raises(np.exceptions.AxisError,
                       match="axis 2 is out of bounds for array of dimension 2"):
        f(np.arange(9).reshape(3, 3), np.array([0, 1, 2]), 2)


def test_asarray_with_dtype_keeps_f_order():
    f = njit(lambda a: np.asarray(a, dtype=np.float32))
    a = np.asfortranarray(np.arange(6).reshape(2, 3))
    got, want = f(a), np.asarray(a, dtype=np.float32)
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides
