"""NumPy's array-manipulation functions in compiled code for the argument forms
numba_rs/_npmanip.py and the broadcasting / resize overloads of _npshape.py serve:
several arguments and array-likes for ``atleast_*d``, ``shape size flatnonzero`` of
array-likes, ``fill_diagonal``, ``sliding_window_view``, read-only ``broadcast_to``
views, and Numba's error messages. NumPy is the oracle for values, shapes, strides and
dtypes; NRT counts balance (conftest)."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

A1 = np.arange(5)
A2 = np.arange(6).reshape(2, 3)
A3 = np.arange(24).reshape(2, 3, 4)


def _strides(a):
    # A stride of a dimension of length 1 or 0 never moves: NumPy leaves it arbitrary.
    return tuple(s if d > 1 else None for s, d in zip(a.strides, a.shape))


def same(got, want):
    """Equal values, shapes, dtypes and strides."""
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert _strides(got) == _strides(want)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------
# atleast_1d / atleast_2d / atleast_3d


def _atleast_1d(*args):
    return np.atleast_1d(*args)


def _atleast_2d(*args):
    return np.atleast_2d(*args)


def _atleast_3d(*args):
    return np.atleast_3d(*args)


@pytest.mark.parametrize("f", [_atleast_1d, _atleast_2d, _atleast_3d])
@pytest.mark.parametrize("args", [
    (np.array(42), np.array(5j)),
    (A1, np.arange(6) + 1j, A1[::-1]),
    (A2, A2.T, A2[::-1]),
    (A3, A3.T, A3[::-1]),
    (np.array(42), np.arange(6) + 1j, A2[::-1], A3.T),
], ids=["0d", "1d", "2d", "3d", "mixed"])
def test_atleast_several_arrays(f, args):
    got, want = njit(f)(*args), f(*args)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


@pytest.mark.parametrize("f", [_atleast_1d, _atleast_2d, _atleast_3d])
@pytest.mark.parametrize("arg", [3.5, True, (1, 2, 3), [4, 5]], ids=str)
def test_atleast_array_likes(f, arg):
    got, want = njit(f)(arg), f(arg)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_atleast_array_and_scalar():
    got, want = njit(_atleast_2d)(A1, 7), _atleast_2d(A1, 7)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.shape == w.shape


def test_atleast_rejects_strings():
    with pytest.raises(TypingError, match="array-like"):
        njit(_atleast_1d)(A1, "abc")


# ---------------------------------------------------------------------------------
# expand_dims, shape, size


def test_expand_dims_errors():
    f = njit(lambda a, axis: np.expand_dims(a, axis))
    with pytest.raises(TypingError, match='First argument "a" must be an array'):
        f("hello", 3)
    with pytest.raises(TypingError, match='Argument "axis" must be an integer'):
        f(A1, "hello")


@pytest.mark.parametrize("x", [np.empty((4, 5, 6)), 1, False, 3.14, np.float32(2.7), (1, 2, 3),
                               [1, 2], ((1, 2), (3, 4))], ids=repr)
def test_shape_and_size(x):
    assert njit(lambda a: np.shape(a))(x) == np.shape(x)
    assert njit(lambda a: np.size(a))(x) == np.size(x)


@pytest.mark.parametrize("x", [3.5, (1, 2, 3), [[1, 2], [3, 4]], ((1.5, 2.5), (3.5, 4.5))], ids=repr)
def test_ravel_and_reshape_array_likes(x):
    for f in (lambda a: np.ravel(a), lambda a: np.reshape(a, (-1, 1))):
        got, want = njit(f)(x), f(x)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_shape_and_size_errors():
    with pytest.raises(TypingError, match="The argument to np.shape must be array-like"):
        njit(lambda a: np.shape(a))("a")
    with pytest.raises(TypingError, match="The argument to np.size must be array-like"):
        njit(lambda a: np.size(a))("a")


# ---------------------------------------------------------------------------------
# flatnonzero


@pytest.mark.parametrize("x", [((1.1, 0.0), (3.3, 4.4)), (0.0, 1.0, 0.0, -6.0), (), np.nan, 0, 1,
                               False, True, (True, False, True), 2 + 1j, None, "a_string", ""],
                         ids=repr)
def test_flatnonzero_array_likes(x):
    same(njit(lambda a: np.flatnonzero(a))(x), np.flatnonzero(x))


# ---------------------------------------------------------------------------------
# fill_diagonal


def _fill(a, val, wrap=False):
    np.fill_diagonal(a, val, wrap)


SHAPES = [(3, 3), (6, 3), (3, 6), (7, 5), (3, 3, 3, 3), (1, 1, 1)]
VALS = [1, 3.142, np.nan, -np.inf, True, np.arange(4), (4,), [8, 9],
        np.arange(54).reshape(9, 3, 2, 1), np.asfortranarray(np.arange(9).reshape(3, 3)),
        np.arange(9).reshape(3, 3)[::-1]]


def _layouts(shape):
    yield np.zeros(shape)
    yield np.asfortranarray(np.ones(shape))
    yield np.zeros(tuple(2 * d for d in shape))[tuple(slice(0, 2 * d, 2) for d in shape)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal(shape, wrap):
    f = njit(_fill)
    for arr in _layouts(shape):
        for val in VALS:
            want, got = arr.copy(), arr.copy()
            np.fill_diagonal(want, val, wrap)
            f(got, val, wrap)
            np.testing.assert_array_equal(got, want)


def test_fill_diagonal_default_wrap_and_bools():
    f = njit(lambda a, v: np.fill_diagonal(a, v))
    for val in [False, [False, True, False], np.array([True, False, True])]:
        want = np.ones((5, 3), dtype=np.bool_)
        got = want.copy()
        np.fill_diagonal(want, val)
        f(got, val)
        np.testing.assert_array_equal(got, want)


def test_fill_diagonal_empty_values_change_nothing():
    a = np.zeros((3, 3))
    njit(_fill)(a, np.zeros(0))
    assert not a.any()


def test_fill_diagonal_errors():
    f = njit(_fill)
    for a in (np.array([]), np.ones(5)):
        with pytest.raises(TypingError, match="The first argument must be at least 2-D"):
            f(a, 1)
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        f(np.zeros((3, 3, 4)), 1)
    ints, floats = np.zeros((3, 3), dtype=np.int32), np.zeros((3, 3), dtype=np.float32)
    for arr, val in [(ints, np.nan), (ints, [3.3, np.inf]), (ints, np.array([1, 2, 1e10])),
                     (floats, [1.4, 2.6, -1e100]), (floats, 1.1e100),
                     (floats, np.array([-1e100]))]:
        with pytest.raises(ValueError, match="Unable to safely conform val to a.dtype"):
            f(arr.copy(), val)


# ---------------------------------------------------------------------------------
# sliding_window_view


@njit
def _swv(x, window_shape, axis=None):
    return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)


@pytest.mark.parametrize("x, window, axis", [
    (np.arange(24), 5, None), (np.arange(24), 5, 0), (np.arange(24), 5, -1),
    (np.arange(24), 5, (0,)), (np.arange(24), 0, None),
    (np.arange(200).reshape(10, 20), 5, 0), (np.arange(200).reshape(10, 20), 5, -1),
    (np.arange(200).reshape(10, 20), (5, 8), None),
    (np.arange(200).reshape(10, 20), (5, 8), (1, 0)),
    (np.arange(200).reshape(10, 20), (5, 8), (1, -2)),
    (np.arange(200).reshape(10, 20)[::2, ::-3], (2, 3), None),
    (np.arange(200).reshape(4, 5, 5, 2), (3, 2), (-2, -3)),
    (np.arange(200).reshape(10, 20), (5, 3, 3), (0, 1, 0)),
], ids=lambda v: getattr(v, "shape", v))
def test_sliding_window_view(x, window, axis):
    got = _swv(x, window, axis)
    same(got, np.lib.stride_tricks.sliding_window_view(x, window, axis, writeable=True))
    # A view of x, writeable as Numba's.
    assert got.flags.writeable and (got.size == 0 or np.shares_memory(got, x))


@pytest.mark.parametrize("x, window, axis, msg", [
    (np.arange(24), 25, None, "window_shape cannot be larger"),
    (np.arange(24), -1, None, "`window_shape` cannot contain negative"),
    (np.arange(24), (10, 2), None, "matching length window_shape and axis"),
    (np.arange(200).reshape(10, 20), (10, 2), 1, "matching length window_shape and axis"),
    (np.arange(24), 5, (0, 0), "matching length window_shape and axis"),
    (np.arange(24), 4, 1, "Argument axis out of bounds"),
    (np.arange(24), 4, -2, "Argument axis out of bounds"),
    (np.arange(200).reshape(10, 20), (4, 4), (0, -3), "Argument axis out of bounds"),
])
def test_sliding_window_view_value_errors(x, window, axis, msg):
    with pytest.raises(ValueError, match=msg):
        _swv(x, window, axis)


@pytest.mark.parametrize("window, axis, msg", [
    (None, None, "window_shape must be an integer or tuple of integer"),
    (3.1, None, "window_shape must be an integer or tuple of integer"),
    ((3.1,), None, "window_shape must be an integer or tuple of integer"),
    (4, 3.1, "axis must be None, an integer or tuple of integer"),
    (4, (3.1,), "axis must be None, an integer or tuple of integer"),
])
def test_sliding_window_view_typing_errors(window, axis, msg):
    with pytest.raises(TypingError, match=msg):
        _swv(np.arange(24), window, axis)


# ---------------------------------------------------------------------------------
# broadcast_to, broadcast_shapes, broadcast_arrays


_broadcast_to = njit(lambda a, shape: np.broadcast_to(a, shape))


@pytest.mark.parametrize("a, shape", [
    (np.array(0), (3,)), (np.ones(1), (1, 2, 3)), (np.arange(3), (2, 3)), (np.ones(1), 2),
    (np.ones((2, 1)), (2, 0)), (2, (2, 2)), ((1, 2), (2, 2)), (((1, 2), (3, 4)), (3, 2, 2)),
    (5.0, ()),
], ids=str)
def test_broadcast_to_is_a_readonly_view(a, shape):
    got, want = _broadcast_to(a, shape), np.broadcast_to(a, shape)
    same(got, want)
    assert not got.flags.writeable


def test_broadcast_to_sees_later_writes():
    a = np.zeros(2, dtype=np.int32)
    view = _broadcast_to(a, (2, 2))
    a[0] = 10
    assert view.sum() == 20


@pytest.mark.parametrize("a, shape, err, msg", [
    (np.zeros(3), (), TypingError, "Cannot broadcast a non-scalar to a scalar array"),
    ((123,), (), TypingError, "Cannot broadcast a non-scalar to a scalar array"),
    (np.zeros((1, 2)), (1.1, 2.2), TypingError,
     'The second argument "shape" must be a tuple of integers'),
    (3, (2, "a"), TypingError, "object cannot be interpreted as an integer"),
    ("hello", (3,), TypingError, 'The first argument "array" must be array-like'),
    (np.zeros((2, 2)), (3,), ValueError,
     "input operand has more dimensions than allowed by the axis remapping"),
    (np.zeros((1, 2)), (2, 1), ValueError,
     "operands could not be broadcast together with remapped shapes"),
    (np.zeros(1), (-1,), ValueError, "all elements of broadcast shape must be non-negative"),
])
def test_broadcast_to_errors(a, shape, err, msg):
    with pytest.raises(err, match=msg):
        _broadcast_to(a, shape)


def test_broadcast_shapes_errors():
    f = njit(lambda *args: np.broadcast_shapes(*args))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        f((1, 2), 2, -2)
    for args in [((1, 2), ("hello",)), (3.4,), ("string",), (1, (1.2, "a"))]:
        with pytest.raises(TypingError, match=r"must be either an int or tuple\[int\]"):
            f(*args)


_broadcast_arrays = njit(lambda *args: np.broadcast_arrays(*args))


def test_broadcast_arrays_array_likes():
    got = _broadcast_arrays((123, 456), (789,))
    want = np.broadcast_arrays((123, 456), (789,))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.shape == w.shape
    # Numba's rule: scalars broadcast to at least one dimension.
    assert [a.shape for a in _broadcast_arrays(True, False)] == [(1,), (1,)]
    assert [a.shape for a in _broadcast_arrays((1, 2), 2)] == [(2,), (2,)]


def test_broadcast_arrays_errors():
    with pytest.raises(TypingError, match='Argument "1" must be array-like'):
        _broadcast_arrays(np.zeros(3), "hello world")


# ---------------------------------------------------------------------------------
# resize


@pytest.mark.parametrize("a, shape", [
    ([0, 1, 2, 3], (2, 3)), (4, (2, 3)), ((1.5, 2.5), 3), (np.zeros(0), (2, 1)),
    (np.array([[1, 2], [3, 4]]), (4, 3)),
], ids=str)
def test_resize_array_likes(a, shape):
    got, want = njit(lambda a, s: np.resize(a, s))(a, shape), np.resize(a, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_resize_errors():
    f = njit(lambda a, s: np.resize(a, s))
    with pytest.raises(TypingError, match='The argument "a" must be array-like'):
        f("abc", (2, 3))
    with pytest.raises(TypingError, match='"new_shape" must be an integer or a tuple'):
        f(A2, "abc")
    for shape in [(-2, 3), -4]:
        with pytest.raises(ValueError, match="All elements of `new_shape` must be non-negative"):
            f(A2, shape)
