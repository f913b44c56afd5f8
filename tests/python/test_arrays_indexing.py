"""Array indexing in jitted code against NumPy: slices with steps, `None`/`np.newaxis`,
`...`, tuples mixing them, one advanced index (integer array or boolean mask), 0-d
arrays, and assignment through all of these with broadcasting; views share memory with
their parent; errors raise what NumPy/Numba raise. NumPy running the same function is
the oracle."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

DTYPES = [np.int8, np.int32, np.int64, np.uint16, np.uint64, np.float32, np.float64,
          np.bool_, np.complex64, np.complex128]


def make(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-50, 50, size=shape)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    return x.astype(dtype)


def layouts(x):
    """The same values as C, F and non-contiguous arrays."""
    big = np.repeat(np.repeat(x, 2, axis=0), 2, axis=-1) if x.ndim else x
    strided = big[::2, ..., ::2] if x.ndim >= 2 else (big[::2] if x.ndim == 1 else big)
    assert np.array_equal(strided, x)
    return {"C": np.ascontiguousarray(x), "F": np.asfortranarray(x), "A": strided}


def check(f, *args):
    """f(*args) in jitted code equals NumPy's, on private copies of array arguments."""
    copy = lambda xs: [x.copy(order="K") if isinstance(x, np.ndarray) else x for x in xs]
    expected = f(*copy(args))
    got = njit(f)(*copy(args))
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)
            assert np.shape(g) == np.shape(e)
    else:
        np.testing.assert_array_equal(got, expected)
        assert np.shape(got) == np.shape(expected)
        if isinstance(expected, np.ndarray):
            assert got.dtype == expected.dtype


# Basic indexing: views and elements.
def newaxis_front(a):
    return a[None, :]


def newaxis_middle(a):
    return a[:, np.newaxis, 1:3]


def ellipsis_last(a):
    return a[..., 1]


def ellipsis_first(a):
    return a[1, ...]


def ellipsis_newaxis(a):
    return a[..., None]


def stepped(a):
    return a[::-1, 1::2]


def mixed(a):
    return a[-1, ::-2], a[1:, -1], a[..., ::3]


def element_via_ellipsis(a):
    # NumPy gives 0-d views here, Numba the elements: values and shapes (()) agree.
    return a[1, ..., 2], a[..., 0, 3]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", ["C", "F", "A"])
@pytest.mark.parametrize("f", [newaxis_front, newaxis_middle, ellipsis_last, ellipsis_first,
                               ellipsis_newaxis, stepped, mixed, element_via_ellipsis])
def test_basic_indexing_matches_numpy(f, dtype, layout):
    check(f, layouts(make(dtype, (4, 6)))[layout])


def view_writes_through(a):
    v = a[None, ..., ::2]
    v[0, 1] = 99
    return a


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_views_share_memory(layout):
    check(view_writes_through, layouts(make(np.float64, (3, 4)))[layout])


# Advanced indexing: copies.
def take(a, idx):
    return a[idx]


def take_inner(a, idx):
    return a[1:, idx]


def take_apart(a, idx):
    # An integer and an array separated by a slice: the array's axis goes first.
    return a[0, :, idx]


def mask_rows(a, m):
    return a[m]


def mask_cols(a, m):
    return a[:, m]


def where_positive(a):
    return a[a > 0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_advanced_indexing_matches_numpy(dtype, layout):
    a = layouts(make(dtype, (5, 6)))[layout]
    idx = np.array([4, 0, -1, 2, 2])
    check(take, a, idx)
    check(take, a, idx.astype(np.int32))
    check(take_inner, a, np.array([5, 0, -6]))
    check(mask_rows, a, np.array([True, False, True, True, False]))
    check(mask_cols, a, np.array([False, True] * 3))
    check(mask_rows, a, make(np.bool_, (5, 6), seed=3))
    if np.dtype(dtype).kind == "c":
        with pytest.raises(TypingError):  # complex numbers have no order in Numba
            njit(where_positive)(a)
    else:
        check(where_positive, a)
    check(take_apart, layouts(make(dtype, (3, 4, 5)))[layout], np.array([1, 4, 0]))


def test_advanced_index_result_is_a_copy():
    def f(a, idx):
        b = a[idx]
        b[0] = -7.0
        return a, b

    check(f, np.arange(5.0), np.array([1, 2]))


# Assignment.
def set_slice_scalar(a):
    a[1:, ::2] = 7
    return a


def set_slice_row_broadcast(a, v):
    a[:, 1:4] = v
    return a


def set_column(a, v):
    a[:, 0] = v
    return a


def set_everything(a):
    a[...] = 3
    return a


def set_newaxis(a, v):
    a[None, 0] = v
    return a


def set_take(a, idx, v):
    a[idx] = v
    return a


def set_mask(a):
    a[a > 10] = 0
    return a


def set_mask_values(a, m, v):
    a[m] = v
    return a


def shift_overlapping(a):
    a[1:] = a[:-1]
    return a


def shift_back_overlapping(a):
    a[:-1] = a[1:]
    return a


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_assignment_matches_numpy(dtype, layout):
    a = layouts(make(dtype, (4, 6)))[layout]
    v = make(dtype, (3,), seed=1)
    check(set_slice_scalar, a)
    check(set_slice_row_broadcast, a, v)
    check(set_slice_row_broadcast, a, make(dtype, (4, 3), seed=2))
    check(set_slice_row_broadcast, a, make(dtype, (1, 3), seed=2))
    check(set_column, a, make(dtype, (4,), seed=4))
    check(set_everything, a)
    check(set_newaxis, a, make(dtype, (6,), seed=5))
    check(set_take, a, np.array([3, -4]), make(dtype, (2, 6), seed=6))
    check(set_take, a, np.array([0, 2]), make(dtype, (6,), seed=6))
    check(set_mask_values, a, np.array([True, False, False, True]), make(dtype, (6,), seed=7))
    check(shift_overlapping, layouts(make(dtype, (6, 2)))[layout])
    check(shift_back_overlapping, layouts(make(dtype, (6, 2)))[layout])
    if dtype not in (np.complex64, np.complex128, np.bool_):
        check(set_mask, a)


def test_assignment_converts_dtype():
    check(set_slice_row_broadcast, np.zeros((2, 5), dtype=np.int32), np.array([1.9, -2.2, 3.5]))
    check(set_take, np.zeros(4), np.array([1, 3]), np.array([1, 2], dtype=np.int16))


def test_whole_mask_assignment_from_values():
    m = np.array([[True, False, True], [False, True, True]])
    check(set_mask_values, np.zeros((2, 3)), m, np.arange(4.0))
    check(set_mask_values, np.zeros((2, 3)), m, 5.0)


# 0-d arrays.
def zero_d_created():
    x = np.empty(())
    x[()] = 4.5
    return x, x[()] + 1, x.ndim, x.shape, x.size


def zero_d_argument(a):
    return a[()], a.sum(), a[...], a.shape


def test_zero_d_arrays():
    check(zero_d_created)
    for dtype in DTYPES:
        check(zero_d_argument, np.array(3, dtype=dtype))


def test_zero_d_returned():
    got = njit(lambda: np.zeros(()))()
    assert isinstance(got, np.ndarray) and got.shape == () and got[()] == 0.0


# Errors.
def test_fancy_index_out_of_bounds_is_index_error():
    with pytest.raises(IndexError):
        njit(take)(np.arange(5.0), np.array([0, 5]))
    with pytest.raises(IndexError):
        njit(take)(np.arange(5.0), np.array([-6]))


def test_mask_of_wrong_length_is_index_error():
    with pytest.raises(IndexError):
        njit(take)(np.arange(5.0), np.array([True, False]))


def test_assignment_shape_mismatch_is_value_error():
    with pytest.raises(ValueError):
        njit(set_slice_row_broadcast)(np.zeros((4, 6)), np.ones(4))
    with pytest.raises(ValueError):
        njit(set_take)(np.zeros((4, 6)), np.array([0, 1]), np.ones((3, 6)))


def test_bad_indices_are_typing_errors():
    with pytest.raises(TypingError):
        njit(lambda a: a[0, 0, 0])(np.zeros((2, 2)))
    with pytest.raises(TypingError):
        njit(lambda a: a[..., 0, ...])(np.zeros((2, 2)))
    # Two index arrays follow NumPy's rules now (Numba refuses them).
    z = np.arange(4.0).reshape(2, 2)
    i, j = np.array([0]), np.array([1])
    np.testing.assert_array_equal(njit(lambda a, i, j: a[i, j])(z, i, j), z[i, j])


def test_readonly_assignment_is_typing_error():
    def f(a):
        a[0] = 1.0

    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(TypingError, match="Cannot modify readonly array"):
        njit(f)(ro)


def test_boundscheck_raises_index_error():
    def f(a, i):
        return a[i, ::2]

    with pytest.raises(IndexError):
        njit(boundscheck=True)(f)(np.zeros((3, 4)), 3)
    assert njit(f)(np.zeros((3, 4)), -1).shape == (2,)


def test_slices_cross_the_boundary():
    def index_with(a, s):
        return a[s]

    def make_slice(a, b):
        return slice(a, b), slice(None, b, -1), slice(a, None)

    a = np.arange(10.0)
    for s in (slice(1, 7), slice(None, None, -2), slice(-3, None), slice(2, 9, 3),
              slice(None, 4)):
        np.testing.assert_array_equal(njit(index_with)(a, s), a[s])
    assert njit(make_slice)(1, 5) == make_slice(1, 5)
    with pytest.raises(ValueError):
        njit(index_with)(a, slice(1, 5, 0))


def test_slice_attributes_and_indices():
    def parts(s):
        return s.start, s.stop, s.step

    def indices(s, n):
        return s.indices(n)

    assert njit(parts)(slice(1, 7, 2)) == (1, 7, 2)
    for s in (slice(1, 7), slice(None, None, -1), slice(-100, 2, -1), slice(10, 20),
              slice(-3, None), slice(None, -2, 3)):
        for n in (0, 1, 5, 12):
            assert njit(indices)(s, n) == s.indices(n), (s, n)
    with pytest.raises(ValueError, match="negative"):
        njit(indices)(slice(1, 2), -1)


def test_ellipsis_passed_in():
    """`...` as an argument, alone or inside an index tuple built by the caller, and
    returned: NumPy's meaning."""
    import numba_rs

    x = np.arange(24).reshape(2, 3, 4)
    f = numba_rs.njit(lambda a, i: a[i])
    for idx in [(Ellipsis, 1), (0, Ellipsis), (Ellipsis, slice(1, 3)), Ellipsis]:
        np.testing.assert_array_equal(f(x, idx), x[idx])
    g = numba_rs.njit(lambda a, e, k: a[e, k])
    np.testing.assert_array_equal(g(x, Ellipsis, np.array([0, 2])), x[..., [0, 2]])
    assert numba_rs.njit(lambda e: e)(Ellipsis) is Ellipsis
