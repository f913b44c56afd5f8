"""NaN-skipping reductions, medians, `nonzero` / one-argument `where`, `np.array` from
scalars, tuples and arrays, and NumPy's constants in jitted code, against NumPy running
the same functions (the oracle) on random inputs of several dtypes and layouts."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

REAL_DTYPES = [np.int8, np.int32, np.int64, np.uint16, np.uint64, np.float32, np.float64,
               np.bool_]


def make(dtype, shape, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 20, size=shape)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    x = x.astype(dtype)
    if nan and np.dtype(dtype).kind == "f":
        x = x + rng.uniform(0, 1, size=shape).astype(dtype)
        x.flat[rng.choice(x.size, size=max(1, x.size // 5), replace=False)] = np.nan
    return x


def layouts(x):
    return [np.ascontiguousarray(x), np.asfortranarray(x),
            np.repeat(x, 2, axis=-1)[..., ::2]]


def close(got, expected, dtype):
    rtol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, equal_nan=True)


def nan_reductions(a):
    return (np.nansum(a), np.nanprod(a), np.nanmean(a), np.nanmin(a), np.nanmax(a),
            np.nanvar(a), np.nanstd(a), np.nanmedian(a), np.median(a))


@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_nan_reductions_match_numpy(dtype):
    f = njit(nan_reductions)
    for shape in [(7,), (4, 5), (3, 2, 4)]:
        for a in layouts(make(dtype, shape, nan=True)):
            a = a[..., :3] if a.ndim > 1 else a[:5]
            small = a if dtype != np.float32 else a.astype(np.float64)
            with np.errstate(all="ignore"):
                expected = nan_reductions(small)
            got = f(a)
            for g, e in zip(got, expected):
                close(g, e, dtype)


def test_nan_reduction_result_types():
    got = njit(nan_reductions)(np.arange(6, dtype=np.int32))
    assert isinstance(got[0], int) and isinstance(got[3], int)
    got = njit(nan_reductions)(np.ones(3, dtype=np.float32))
    assert all(isinstance(g, float) for g in got)


def test_all_nan_gives_nan_and_empty_min_raises():
    got = njit(nan_reductions)(np.full(4, np.nan))
    assert np.isnan(got[2]) and np.isnan(got[3]) and np.isnan(got[4]) and np.isnan(got[7])
    assert got[0] == 0.0 and got[1] == 1.0
    with pytest.raises(ValueError, match="zero-size array"):
        njit(lambda a: np.nanmin(a))(np.zeros(0))


def test_median_of_odd_even_and_nan():
    f = njit(lambda a: np.median(a))
    for a in [np.arange(9.0)[::-1], np.array([4.0, 1, 3, 2]), np.array([3]),
              np.array([1.0, np.nan, 2.0]), make(np.int64, (5, 4), seed=3)]:
        np.testing.assert_equal(f(a), np.median(a))
    assert np.isnan(f(np.zeros(0)))


def test_complex_medians_are_typing_errors():
    # Numba has no median of complex arrays (the nan* sums and orderings are tested below).
    with pytest.raises(TypingError):
        njit(lambda a: np.median(a))(np.ones(2, dtype=np.complex128))


def nonzeros(a):
    return a.nonzero(), np.nonzero(a), np.where(a)


@pytest.mark.parametrize("dtype", REAL_DTYPES + [np.complex128], ids=lambda d: np.dtype(d).name)
def test_nonzero_matches_numpy(dtype):
    f = njit(nonzeros)
    for shape in [(9,), (4, 5), (2, 3, 4)]:
        for a in layouts(make(dtype, shape) * (make(np.int64, shape, seed=1) > 5)):
            got = f(a)
            for g, e in zip(got, nonzeros(a)):
                assert len(g) == len(e)
                for gi, ei in zip(g, e):
                    np.testing.assert_array_equal(gi, ei)
                    assert gi.dtype == np.intp


def from_values():
    return (np.array((1, 2, 3)), np.array(((1.0, 2), (3, 4))), np.array(5),
            np.array((1, 2), dtype=np.float32), np.array(((True, False),)),
            np.array((((1, 2), (3, 4)), ((5, 6), (7, 8)))), np.array(2.5, np.int16))


def test_array_from_scalars_and_tuples():
    for g, e in zip(njit(from_values)(), from_values()):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == e.dtype and g.shape == e.shape


def test_array_of_runtime_tuple_and_array():
    def f(x, y, a):
        t = np.array(((x, y), (y, x)))
        c = np.array(a)
        c[0] = -1
        return t, c, a

    a = np.arange(4.0)
    t, c, a2 = njit(f)(1.5, 2, a)
    np.testing.assert_array_equal(t, np.array(((1.5, 2), (2, 1.5))))
    assert c[0] == -1 and a2[0] == 0.0  # a copy, not a view


def test_ragged_tuple_is_typing_error():
    with pytest.raises(TypingError):
        njit(lambda: np.array(((1, 2), (3,))))()


def test_numpy_constants():
    def f():
        return np.pi, np.e, np.inf, np.nan, np.zeros(3)[np.newaxis].shape

    got = njit(f)()
    assert got[:3] == (np.pi, np.e, np.inf) and np.isnan(got[3]) and got[4] == (1, 3)


def arg_axis(a):
    return (a.argmin(axis=0), a.argmax(axis=-1), np.argmin(a, 1), np.argmax(a, axis=0),
            a.argmin(), np.argmax(a))


@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_argmin_argmax_along_an_axis(dtype):
    f = njit(arg_axis)
    for a in layouts(make(dtype, (5, 4), nan=True)):
        for g, e in zip(f(a), arg_axis(a)):
            np.testing.assert_array_equal(g, e)
            assert np.shape(g) == np.shape(e)
    b = make(dtype, (2, 3, 4), seed=2)
    g = njit(lambda a: (a.argmax(axis=1), np.argmin(a, axis=2)))(b)
    np.testing.assert_array_equal(g[0], b.argmax(axis=1))
    np.testing.assert_array_equal(g[1], np.argmin(b, axis=2))


def test_arg_reductions_stop_at_the_first_nan():
    a = np.array([1.0, np.nan, -5.0, np.nan])
    got = njit(lambda a: (a.argmin(), a.argmax()))(a)
    assert got == (a.argmin(), a.argmax()) == (1, 1)


def test_arg_reduction_errors():
    with pytest.raises(ValueError, match="axis"):
        njit(lambda a: a.argmin(axis=2))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="empty sequence"):
        njit(lambda a: a.argmax(axis=1))(np.ones((2, 0)))


def test_min_max_propagate_nan_as_numpy():
    def f(a):
        return a.max(), a.min(), np.max(a), np.amin(a), np.maximum(a, 0.0).sum()

    for a in [np.array([5.0, np.nan, -1.5]), np.array([1.0, np.nan]),
              np.array([np.nan, 2.0]), np.array([3.0, -2.0, 7.5])]:
        got, expected = njit(f)(a), f(a)
        np.testing.assert_equal(got, expected)
    m = np.array([[1.0, np.nan], [3.0, 4.0]])
    np.testing.assert_equal(njit(lambda m: m.max(axis=0))(m), m.max(axis=0))


def aliases(a):
    return (np.amax(a), np.amin(a), np.amax(a, axis=0), np.amin(a, 1), np.cumsum(a),
            np.cumprod(a), np.shape(a), np.size(a), np.ndim(a))


def test_function_aliases_of_methods():
    a = make(np.int64, (3, 4), seed=9)
    for g, e in zip(njit(aliases)(a), aliases(a)):
        np.testing.assert_array_equal(g, e)


def test_like_of_a_scalar_is_0d():
    def f(x):
        return np.zeros_like(x), np.ones_like(x), np.full_like(x, 7), np.empty_like(x).shape

    for x in (3.5, 2, True):
        got, expected = njit(f)(x), f(x)
        for g, e in zip(got[:3], expected[:3]):
            assert g.shape == e.shape == () and g.dtype == e.dtype and g[()] == e[()]
        assert got[3] == expected[3] == ()


def test_dtype_strings_as_numpy_spells_them():
    def f():
        return (np.zeros(2, 'i4'), np.ones(2, dtype='f4'), np.empty(1, '?'),
                np.zeros(1, 'c16'), np.zeros(1, 'd'), np.arange(3).astype('u2'))

    for g, e in zip(njit(f)(), f()):
        assert g.dtype == e.dtype


def test_stacking_0d_arrays():
    a, b = np.array(1.5), np.array(2.5)
    for fn in (np.hstack, np.vstack, np.dstack):
        got = njit(lambda a, b: fn((a, b)))(a, b)
        np.testing.assert_array_equal(got, fn((a, b)))
        assert got.shape == fn((a, b)).shape


def complex_reductions(a):
    return a.max(), a.min(), np.max(a), np.amin(a), a.var(), a.std(), np.var(a)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_min_max_var_std(dtype):
    rng = np.random.default_rng(4)
    x = (rng.integers(-3, 3, 12) + 1j * rng.integers(-3, 3, 12)).astype(dtype)
    for a in layouts(x.reshape(3, 4)):
        got, expected = njit(complex_reductions)(a), complex_reductions(a)
        for g, e in zip(got[:4], expected[:4]):
            assert g == e  # lexicographic: real part, then imaginary
        for g, e in zip(got[4:], expected[4:]):
            assert g == pytest.approx(e, rel=1e-6)
    m = x.reshape(3, 4)
    np.testing.assert_array_equal(njit(lambda m: m.max(axis=1))(m), m.max(axis=1))


def clips(a, lo, hi):
    return (np.clip(a, lo, None), np.clip(a, None, hi), np.clip(a, lo, hi), a.clip(lo, hi),
            np.clip(a, np.zeros(a.shape[-1]), hi))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_clip_with_none_and_array_bounds(dtype):
    for a in layouts(make(dtype, (4, 5), nan=True)):
        for g, e in zip(njit(clips)(a, -5, 7), clips(a, -5, 7)):
            np.testing.assert_array_equal(g, e)
            # Numba's clip keeps the array's dtype (NumPy promotes with the bounds').
            assert g.dtype == a.dtype
    with pytest.raises(ValueError, match="must set either max or min"):
        njit(lambda a: np.clip(a, None, None))(np.ones(3))


def rounds(a):
    return np.round(a), np.around(a, 1), np.round(a, -1), a.round(2)


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.complex128])
def test_round_as_numpy(dtype):
    rng = np.random.default_rng(5)
    x = (rng.uniform(-100, 100, 12) * 1.0).astype(dtype) if dtype != np.int64 else \
        rng.integers(-1000, 1000, 12)
    if dtype == np.complex128:
        x = x + 1j * rng.uniform(-10, 10, 12)
    x = np.concatenate([x, np.array([0.5, 1.5, 2.5, -0.5, 12.25], dtype=x.dtype)]) \
        if dtype != np.int64 else x
    for a in layouts(x.reshape(1, -1)):
        for g, e in zip(njit(rounds)(a), rounds(a)):
            np.testing.assert_allclose(g, e, rtol=1e-6 if dtype == np.float32 else 1e-12)
            assert g.dtype == e.dtype
    assert njit(lambda x: np.round(x, 1))(2.25) == np.round(2.25, 1)


def small_functions(a, idx):
    return (np.ptp(a), np.take(a, idx), a.take(3), np.take(a, -1),
            np.ascontiguousarray(a), np.asfortranarray(a), np.flatnonzero(a),
            np.atleast_1d(a), np.atleast_2d(a), np.atleast_3d(a), np.conj(a), a.conj())


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex128])
def test_small_numpy_functions(dtype):
    f = njit(small_functions)
    for a in layouts(make(dtype, (3, 4))):
        if np.dtype(dtype).kind == "c":
            a = a + 1j
        idx = np.array([[0, -1], [5, 2]])
        if dtype == np.complex128:
            with pytest.raises(TypingError):
                f(a, idx)  # np.ptp orders values, as Numba
            continue
        for g, e in zip(f(a, idx), small_functions(a, idx)):
            np.testing.assert_array_equal(g, e)
            assert np.shape(g) == np.shape(e)
        got = f(a, idx)
        assert got[4].flags.c_contiguous and got[5].flags.f_contiguous
    with pytest.raises(IndexError):
        njit(lambda a: np.take(a, 12))(np.zeros((3, 4)))


def test_real_imag_conj_of_complex_arrays():
    def f(a):
        return np.real(a), np.imag(a), np.conj(a), a.conjugate()

    a = np.array([[1 + 2j, 3 - 4j], [-5 + 0.5j, 0j]])
    for g, e in zip(njit(f)(a), f(a)):
        np.testing.assert_array_equal(g, e)
    # The parts are views of a new array made inside the function: they keep it alive.
    got = njit(lambda n: np.imag(np.ones(n) * 1j))(3)
    np.testing.assert_array_equal(got, np.ones(3))


def test_atleast_and_layout_of_0d_and_new_arrays():
    def f(x):
        z = np.zeros(3)
        return np.atleast_2d(z), np.atleast_3d(np.array(x)), np.ascontiguousarray(np.array(x))

    for g, e in zip(njit(f)(2.0), f(2.0)):
        np.testing.assert_array_equal(g, e)
        assert g.shape == e.shape


def complex_nans(a):
    return (np.nansum(a), np.nanprod(a), np.nanmean(a), np.nanmin(a), np.nanmax(a),
            np.nanvar(a), np.nanstd(a))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_nan_reductions(dtype):
    rng = np.random.default_rng(6)
    x = (rng.integers(-3, 3, 10) + 1j * rng.integers(-3, 3, 10)).astype(dtype) / 2
    x[2] = complex(np.nan, 1)
    x[7] = complex(1, np.nan)
    for a in layouts(x.reshape(2, 5)):
        got, expected = njit(complex_nans)(a), complex_nans(a)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-5)
    with pytest.raises(TypingError):
        njit(lambda a: np.nanmedian(a))(x)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128])
def test_nancumsum_nancumprod(dtype):
    def f(a):
        return np.nancumsum(a), np.nancumprod(a)

    for a in layouts(make(dtype, (3, 4), nan=True) / 4):
        for g, e in zip(njit(f)(a), f(a)):
            np.testing.assert_allclose(g, e, rtol=1e-5)
            assert g.dtype == e.dtype
