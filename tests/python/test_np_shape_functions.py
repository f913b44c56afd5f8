"""NumPy's shape, selection and axis functions in compiled code (numba_rs/_npshape.py,
_npselect.py, _npaxis.py and the native ``as_strided``): each case runs under NumPy and
numba_rs on the same inputs; results must agree in value, shape and dtype, and an input
NumPy refuses must raise the same exception class. NRT counts balance (conftest)."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from numba_rs import njit
from numba_rs.errors import TypingError

RNG = np.random.RandomState(7)
A2 = np.arange(6.0).reshape(2, 3)
A3 = RNG.rand(2, 3, 4)
I2 = np.array([[3, 1, 2], [9, 5, 4]], dtype=np.int8)
X = np.arange(6.0)


def same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    if w.ndim == 0 and not isinstance(want, np.ndarray):
        # A NumPy scalar comes back as the Python number of its value (as in Numba).
        assert g.ndim == 0 and np.isclose(g, w, rtol=1e-6)
        return
    assert g.shape == w.shape
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, rtol=1e-6) if g.dtype.kind in "fc" else \
        np.testing.assert_array_equal(g, w)


def check(f, *args):
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001 - the class is part of the behaviour
        with pytest.raises(type(e) if not issubclass(type(e), ValueError) else ValueError):
            njit(f)(*args)
        return
    same(njit(f)(*args), want)


CASES = {
    "as_strided": (lambda a: as_strided(a, shape=(3, 2), strides=(8, 8)), (X,)),
    "as_strided_zero": (lambda a: as_strided(a, (3, 4), (0, 8)), (np.arange(4.0),)),
    "broadcast_to": (lambda a: np.broadcast_to(a, (3, 3)), (np.arange(3.0),)),
    "broadcast_to_int": (lambda a: np.broadcast_to(a, 4), (np.arange(1.0),)),
    "broadcast_to_scalar": (lambda a: np.broadcast_to(a, (2, 2)), (5.0,)),
    "broadcast_to_bad": (lambda a: np.broadcast_to(a, (3, 2)), (np.arange(3.0),)),
    "broadcast_arrays": (lambda a, b: np.broadcast_arrays(a, b),
                         (np.arange(3.0), np.arange(2)[:, None])),
    "broadcast_shapes": (lambda n: np.broadcast_shapes((3, 1), (1, 4), n), (4,)),
    "broadcast_shapes_bad": (lambda n: np.broadcast_shapes((3, 1), (2, 4), n), (4,)),
    "swapaxes": (lambda a: np.swapaxes(a, 0, -1), (A3,)),
    "swapaxes_bad": (lambda a: np.swapaxes(a, 0, 3), (A3,)),
    "moveaxis": (lambda a: np.moveaxis(a, 0, -1), (A3,)),
    "moveaxis_tuple": (lambda a: np.moveaxis(a, (0, 1), (-1, 0)), (A3,)),
    "moveaxis_repeated": (lambda a: np.moveaxis(a, (0, 0), (1, 2)), (A3,)),
    "rot90": (lambda a: np.rot90(a), (A2,)),
    "rot90_k2": (lambda a: np.rot90(a, 2), (A2,)),
    "rot90_axes": (lambda a: np.rot90(a, -1, (1, 2)), (A3,)),
    "squeeze": (lambda a: np.squeeze(a, axis=0), (np.ones((1, 3, 1)),)),
    "squeeze_last": (lambda a: np.squeeze(a, -1), (np.ones((1, 3, 1)),)),
    "squeeze_bad": (lambda a: np.squeeze(a, 1), (np.ones((1, 3, 1)),)),
    "reshape": (lambda a: np.reshape(a, (3, -1)), (A2,)),
    "resize": (lambda a: np.resize(a, (3, 3)), (np.arange(4.0),)),
    "resize_int": (lambda a: np.resize(a, 7), (A2,)),
    "split": (lambda a: np.split(a, 3), (X,)),
    "split_unequal": (lambda a: np.split(a, 4), (X,)),
    "split_indices": (lambda a: np.split(a, [1, 4]), (X,)),
    "split_axis": (lambda a: np.split(a, 3, axis=1), (A2,)),
    "array_split": (lambda a: np.array_split(a, 4), (X,)),
    "array_split_array": (lambda a: np.array_split(a, np.array([2, 10])), (X,)),
    "ravel_multi_index": (lambda a: np.ravel_multi_index((a, a), (5, 5)), (np.arange(3),)),
    "ravel_multi_index_F": (lambda a: np.ravel_multi_index((a, 1), (5, 5), order="F"),
                            (np.arange(3),)),
    "ravel_multi_index_scalar": (lambda i: np.ravel_multi_index((i, 3), (5, 7)), (2,)),
    "ravel_multi_index_bad": (lambda i: np.ravel_multi_index((i, 3), (5, 7)), (5,)),
    "ravel_multi_index_wrap": (lambda i: np.ravel_multi_index((i, 3), (5, 7), mode="wrap"),
                               (7,)),
    "unravel_index": (lambda i: np.unravel_index(i, (3, 4)), (7,)),
    "unravel_index_array": (lambda a: np.unravel_index(a, (3, 4)), (np.array([1, 7, 11]),)),
    "unravel_index_F": (lambda i: np.unravel_index(i, (3, 4), order="F"), (7,)),
    "unravel_index_bad": (lambda i: np.unravel_index(i, (3, 4)), (12,)),
    "take_along_axis": (lambda a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1), (A3,)),
    "take_along_axis_0": (lambda a: np.take_along_axis(a, np.array([[1, 0, 1]]), axis=0),
                          (A2,)),
    "take_along_axis_none": (lambda a: np.take_along_axis(a, np.array([1, 4]), None), (A2,)),
    "select": (lambda a: np.select([a > 3, a < 1], [a, a * 2], 7.0), (X,)),
    "select_int": (lambda a: np.select([a > 3, a < 1], [a, a * 2]), (np.arange(6),)),
    "select_tuple": (lambda a: np.select((a > 3,), (a,), -1), (X,)),
    "piecewise": (lambda a: np.piecewise(a, [a < 2, a >= 4], [-1.0, 1.0]), (X,)),
    "piecewise_otherwise": (lambda a: np.piecewise(a, [a < 2], [-1.0, 9.0]), (X,)),
    "array_equal": (lambda a: np.array_equal(a, a), (X,)),
    "array_equal_shape": (lambda a: np.array_equal(a, a[:3]), (X,)),
    "array_equal_nan": (lambda a: np.array_equal(a, a, equal_nan=True),
                        (np.array([np.nan, 1.0]),)),
    "array_equal_nan_unequal": (lambda a: np.array_equal(a, a), (np.array([np.nan, 1.0]),)),
    "nanargmin": (lambda a: np.nanargmin(a), (np.array([np.nan, 2, 1.0]),)),
    "nanargmax": (lambda a: np.nanargmax(a), (np.array([[np.nan, 2], [7, 1.0]]),)),
    "nanargmin_all_nan": (lambda a: np.nanargmin(a), (np.array([np.nan, np.nan]),)),
    "insert": (lambda a: np.insert(a, 1, 9.0), (X,)),
    "insert_negative": (lambda a: np.insert(a, -1, [7.0, 8.0]), (X,)),
    "insert_many": (lambda a: np.insert(a, [1, 3, 1], [7.0, 8.0, 9.0]), (X,)),
    "insert_end": (lambda a: np.insert(a, 6, 5), (np.arange(6),)),
    "partition_2d": (lambda a: np.partition(a, 1)[:, 1], (np.array([[5.0, 1, 4], [2, 3, 0]]),)),
    "partition_bad": (lambda a: np.partition(a, 7), (np.array([5.0, 1, 4]),)),
    "trapezoid_2d": (lambda a: np.trapezoid(a, axis=0), (A2,)),
    "trapezoid_x": (lambda a: np.trapezoid(a, a * a), (X,)),
    "sort_axis0": (lambda a: np.sort(a, axis=0), (A3,)),
    "sort_axis1": (lambda a: np.sort(a, axis=1), (A3,)),
    "sort_flat": (lambda a: np.sort(a, axis=None), (A3,)),
    "argsort_axis": (lambda a: np.argsort(a, axis=1), (A3,)),
    "argsort_2d": (lambda a: np.argsort(a), (A3,)),
    "method_argsort_axis": (lambda a: a.argsort(axis=0), (A3,)),
    "cumsum_axis": (lambda a: np.cumsum(a, axis=1), (A3,)),
    "method_cumsum_axis_int8": (lambda a: a.cumsum(axis=0), (I2,)),
    "method_cumprod_axis": (lambda a: a.cumprod(axis=-1), (A3,)),
    "cumsum_dtype": (lambda a: np.cumsum(a, dtype=np.float32), (I2,)),
    "sum_axis_dtype": (lambda a: np.sum(a, axis=1, dtype=np.float32), (A3,)),
    "method_sum_dtype": (lambda a: a.sum(dtype=np.int64), (I2,)),
    "method_prod_axis_dtype": (lambda a: a.prod(axis=0, dtype=np.float64), (I2,)),
    "transpose_perm": (lambda a: a.transpose(1, 0, 2), (A3,)),
    "transpose_tuple": (lambda a: a.transpose((2, 0, 1)), (A3,)),
    "take_axis": (lambda a: np.take(a, np.array([0, 2]), axis=1), (A3,)),
    "take_axis_scalar": (lambda a: np.take(a, 1, axis=2), (A3,)),
    "method_take_axis": (lambda a: a.take([1, 0], axis=0), (A3,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name):
    f, args = CASES[name]
    check(f, *args)


def test_scalar_results_are_numbers():
    # Results NumPy gives as NumPy scalars come back as Python numbers of equal value.
    for f, a in [(lambda a: np.nanargmin(a), np.array([3.0, np.nan, 1.0])),
                 (lambda a: np.trapezoid(a), X),
                 (lambda a: np.partition(a, 2)[2], np.array([5.0, 1, 4, 2, 3])),
                 (lambda a: a[np.argpartition(a, 2)][2], np.array([5.0, 1, 4, 2, 3]))]:
        assert njit(f)(a) == f(a)


def test_views_share_memory():
    a = np.arange(4.0)
    v = njit(lambda a: np.broadcast_to(a, (3, 4)))(a)
    assert np.shares_memory(v, a) and v.strides == (0, 8)
    s = njit(lambda a: np.swapaxes(a, 0, 1))(A2)
    assert np.shares_memory(s, A2)


def test_generated_axis_programs():
    # Random shapes, axes and dtypes for the axis forms.
    rng = np.random.RandomState(11)
    for _ in range(12):
        nd = rng.randint(1, 4)
        shape = tuple(rng.randint(1, 5, size=nd))
        dtype = [np.float64, np.int32, np.float32][rng.randint(3)]
        a = (rng.rand(*shape) * 10).astype(dtype)
        ax = int(rng.randint(-nd, nd))
        for f in (lambda a, ax: np.sort(a, axis=ax), lambda a, ax: np.cumsum(a, axis=ax),
                  lambda a, ax: np.moveaxis(a, ax, 0), lambda a, ax: np.swapaxes(a, ax, -1),
                  lambda a, ax: np.take(a, 0, axis=ax),
                  lambda a, ax: np.sum(a, axis=ax, dtype=np.float64)):
            same(njit(f)(a, ax), f(a, ax))


def test_refusals_are_typing_errors():
    with pytest.raises(TypingError, match="squeeze"):
        njit(lambda a: np.squeeze(a))(np.ones((1, 3)))
    with pytest.raises(TypingError, match="sort"):
        njit(lambda a: np.sort(a, axis=0))(np.ones((2, 2), dtype=np.complex128))
    with pytest.raises(TypingError):
        njit(lambda a: a.argsort(axis=0, kind="heapsort"))(np.ones((2, 2)))


IDX = (slice(1, None), Ellipsis)
REVERSED = slice(None, None, -1)
NEWAXIS = (Ellipsis, None, 0)


def test_slices_ellipsis_and_none_in_global_and_closure_tuples():
    index = (slice(None, 2), None)
    a = np.arange(12.0).reshape(3, 4)
    for f in (lambda a: a[IDX], lambda a: a[REVERSED], lambda a: a[NEWAXIS],
              lambda a: a[index], lambda a: a[..., 1], lambda a: a[None, ...]):
        same(njit(f)(a), f(a))
    with pytest.raises(ValueError):
        njit(lambda a: a[slice(1, 2, 0)])(a)


SQ = np.array([[2.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("f, arg", [
    (lambda a: np.linalg.matrix_power(a, 3), SQ),
    (lambda a: np.linalg.matrix_power(a, 0), SQ),
    (lambda a: np.linalg.matrix_power(a, -2), SQ),
    (lambda a: np.linalg.matrix_power(a, 10), np.array([[1, 1], [1, 0]])),
    (lambda a: np.linalg.cond(a), SQ),
    (lambda a: np.linalg.cond(a, 1), SQ),
], ids=["power3", "power0", "power_neg", "power_int", "cond", "cond_p1"])
def test_linalg_functions_against_numpy(f, arg):
    got, want = njit(f)(arg), f(arg)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("p", [[1.0, -3, 2], [0.0, 1, -3, 2, 0], [1.0, 0, 1], [2.0]])
def test_roots_against_numpy(p):
    # numba-rs's roots are always complex (NumPy makes them real when they all are).
    p = np.array(p)
    got, want = njit(lambda p: np.roots(p))(p), np.roots(p)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want.astype(complex)),
                               atol=1e-12)


def test_nditer_against_numpy():
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([1.0, 2.0, 3.0])

    def one(a):
        out = []
        for x in np.nditer(a):
            out.append(x.item())
        return out

    def two(a, b):
        out = []
        for x, y in np.nditer((a, b)):
            out.append(x.item() * 100 + y.item())
        return out

    for x in (a, a[:, ::2], a.T.copy(), np.arange(3)):
        assert njit(one)(x) == [v.item() for v in np.nditer(x, order="C")]
    assert njit(two)(a, b) == two(a, b)
    assert njit(one)(2.5) == [2.5]

    def double(a):
        for x in np.nditer(a):
            x[()] = x.item() * 2
        return a

    # Each item is a 0-d view: writing it writes the array.
    c = np.arange(4.0)
    np.testing.assert_array_equal(njit(double)(c.copy()), c * 2)
