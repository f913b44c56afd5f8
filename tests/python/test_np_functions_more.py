"""NumPy functions numba-rs implements as overloads (`numba_rs._npfuncs`, issue 47): each
against NumPy's own result on generated inputs of several dtypes and shapes, with the
errors for bad arguments. NRT counts balance after every test (conftest)."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

RNG = np.random.default_rng(47)


def same(got, expect):
    got, expect = np.asarray(got), np.asarray(expect)
    assert got.shape == expect.shape, (got.shape, expect.shape)
    assert got.dtype == expect.dtype, (got.dtype, expect.dtype)
    single = expect.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(got, expect, rtol=1e-5 if single else 1e-12, atol=0,
                               equal_nan=True)


def arrays(dtypes=(np.int64, np.float64, np.float32), shapes=((7,), (3, 4))):
    for dt in dtypes:
        for shape in shapes:
            a = RNG.integers(-5, 6, size=shape).astype(dt)
            if np.issubdtype(dt, np.floating):
                a = a + RNG.random(shape).astype(dt)
            yield a


def test_sinc_and_angle():
    f = njit(lambda x: np.sinc(x))
    g = njit(lambda z, d: np.angle(z, d))
    for a in arrays():
        same(f(a), np.sinc(a))
        same(g(a, False), np.angle(a, False))
    z = np.array([1 + 1j, -2j, 0j, -1 - 0.5j])
    same(f(z), np.sinc(z))
    same(g(z, True), np.angle(z, True))
    for v in (0.0, 0.5, -3.25, 2):
        assert f(v) == pytest.approx(np.sinc(v), rel=1e-15)
    assert g(1 + 1j, False) == pytest.approx(np.angle(1 + 1j))


def test_isclose_and_allclose():
    f = njit(lambda a, b, eq: np.isclose(a, b, 1e-05, 1e-08, eq))
    g = njit(lambda a, b: np.allclose(a, b))
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 5.0])
    b = np.array([1.0 + 1e-7, np.nan, np.inf, np.inf, 0.0, 5.1])
    for eq in (False, True):
        same(f(a, b, eq), np.isclose(a, b, equal_nan=eq))
    same(f(a.reshape(2, 3), b[:3], False), np.isclose(a.reshape(2, 3), b[:3]))
    assert f(1.0, 1.0 + 1e-9, False) == np.isclose(1.0, 1.0 + 1e-9)
    assert g(a[:1], b[:1]) is bool(np.allclose(a[:1], b[:1]))
    assert g(a, b) is bool(np.allclose(a, b))
    with pytest.raises(TypingError):
        g("x", a)


def test_tri_tril_triu():
    for n, m, k in [(3, None, 0), (4, 2, 1), (2, 5, -1), (0, 3, 0)]:
        same(njit(lambda n, m, k: np.tri(n, m, k))(n, m, k), np.tri(n, m, k))
    for a in arrays(shapes=((4, 5), (5,))):
        for k in (-2, 0, 1):
            same(njit(lambda a, k: np.tril(a, k))(a, k), np.tril(a, k))
            same(njit(lambda a, k: np.triu(a, k))(a, k), np.triu(a, k))


def test_repeat():
    f = njit(lambda a, r: np.repeat(a, r))
    for a in arrays():
        for r in (0, 1, 3):
            same(f(a, r), np.repeat(a, r))
    a = np.arange(4.0)
    reps = np.array([2, 0, 1, 3])
    same(f(a, reps), np.repeat(a, reps))
    same(f(5, 3), np.repeat(5, 3))
    with pytest.raises(ValueError):
        f(a, -1)
    with pytest.raises(ValueError):
        f(a, np.array([1, 2]))


def test_nan_to_num():
    f = njit(lambda x: np.nan_to_num(x))
    g = njit(lambda x, n, p, q: np.nan_to_num(x, True, n, p, q))
    for dt in (np.float64, np.float32):
        a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], dtype=dt)
        same(f(a), np.nan_to_num(a))
        same(g(a, 7.0, 8.0, -9.0), np.nan_to_num(a, nan=7.0, posinf=8.0, neginf=-9.0))
    z = np.array([complex(np.nan, np.inf), complex(1, -np.inf)])
    same(f(z), np.nan_to_num(z))
    i = np.arange(4)
    same(f(i), np.nan_to_num(i))
    assert f(np.nan) == np.nan_to_num(np.nan)


def test_average():
    f = njit(lambda a: np.average(a))
    g = njit(lambda a, w: np.average(a, weights=w))
    for a in arrays():
        assert f(a) == pytest.approx(np.average(a), rel=1e-5)
        w = np.abs(a) + 1
        assert g(a, w) == pytest.approx(np.average(a, weights=w), rel=1e-5)
    with pytest.raises(ZeroDivisionError):
        g(np.ones(3), np.zeros(3))


def test_interp_and_digitize():
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([3.0, -1.0, 2.0, 10.0])
    x = np.linspace(-1, 5, 25)
    same(njit(lambda x, xp, fp: np.interp(x, xp, fp))(x, xp, fp), np.interp(x, xp, fp))
    assert njit(lambda x, xp, fp: np.interp(x, xp, fp))(1.7, xp, fp) == np.interp(1.7, xp, fp)
    with pytest.raises(ValueError):
        njit(lambda x, xp, fp: np.interp(x, xp, fp))(x, xp, fp[:3])
    d = njit(lambda x, b, r: np.digitize(x, b, r))
    for bins in (np.array([0.0, 1.0, 2.5, 4.0]), np.array([4.0, 2.5, 1.0, 0.0])):
        for right in (False, True):
            same(d(x, bins, right), np.digitize(x, bins, right))
            same(d(np.array([0.0, 2.5, 4.0]), bins, right),
                 np.digitize(np.array([0.0, 2.5, 4.0]), bins, right))


def test_vander_geomspace_ediff1d_extract():
    for x in (np.array([1, 2, 3, 5]), np.array([0.5, -1.0, 2.0]), np.array([1, 2], np.int8)):
        for n, inc in [(None, False), (3, True), (0, False)]:
            same(njit(lambda x, n, i: np.vander(x, n, i))(x, n, inc), np.vander(x, n, inc))
    with pytest.raises(TypingError, match="Second argument N must be None or an integer"):
        njit(lambda x: np.vander(x, 2.5))(np.ones(3))
    for a, b, n in [(1.0, 1000.0, 4), (-2.0, -32.0, 5), (3, 7, 1), (2.0, 5.0, 0)]:
        same(njit(lambda a, b, n: np.geomspace(a, b, n))(a, b, n), np.geomspace(a, b, n))
    with pytest.raises(ValueError):
        njit(lambda a, b: np.geomspace(a, b))(0.0, 1.0)
    e = njit(lambda a, t, b: np.ediff1d(a, t, b))
    for a in arrays():
        same(e(a, None, None), np.ediff1d(a))
        same(e(a, np.array([9, 8]), 7), np.ediff1d(a, np.array([9, 8]), 7))
    with pytest.raises(TypingError, match="Boolean dtype is unsupported"):
        e(np.ones(3, dtype=bool), None, None)
    x = np.arange(12).reshape(3, 4)
    same(njit(lambda c, a: np.extract(c, a))(x % 3 == 0, x), np.extract(x % 3 == 0, x))


def test_edge_cases():
    """Negative `tri` sizes, NaN in `interp`, sequences for `repeat` and `digitize`."""
    for n, m, k in [(-4, None, 0), (3, -2, 0), (-1, 5, 2)]:
        same(njit(lambda n, m, k: np.tri(n, m, k))(n, m, k), np.tri(n, m, k))
    xp, fp = np.array([0.0, 1.0]), np.array([2.0, 4.0])
    x = np.array([np.nan, 0.5, 3.0])
    same(njit(lambda x, xp, fp: np.interp(x, xp, fp))(x, xp, fp), np.interp(x, xp, fp))
    same(njit(lambda a: np.repeat(a, 2))((1, 2, 3)), np.repeat((1, 2, 3), 2))
    same(njit(lambda x, b: np.digitize(x, b))([1, 5, 9], [2, 4, 8]),
         np.digitize([1, 5, 9], [2, 4, 8]))


def unary(f):
    # The NumPy function as a closure variable (a global of the jitted function).
    return lambda a: f(a)


def binary(f):
    return lambda a, b: f(a, b)


def check_all(f, cases):
    jf = njit(f)
    for args in cases:
        expect = f(*args)
        got = jf(*args)
        if isinstance(expect, tuple):
            assert len(got) == len(expect)
            for g, e in zip(got, expect):
                same(g, e)
        elif np.ndim(expect) == 0 and not isinstance(expect, np.ndarray):
            assert got == pytest.approx(expect, rel=1e-12, nan_ok=True), args
        else:
            same(got, expect)


def test_counting_and_sets():
    ints = [np.array([3, 1, 4, 1, 5, 9, 2, 6]), np.array([[0, 2], [0, 0]]), np.arange(0)]
    check_all(lambda a: np.count_nonzero(a), [(a,) for a in ints])
    a, b = np.array([5, 1, 3, 3, 9, 0]), np.array([3, 0, 7, 7])
    check_all(lambda a, b: np.isin(a, b), [(a, b), (b, a), (a.reshape(2, 3), b)])
    check_all(lambda a, b: np.isin(a, b, False, True), [(a, b)])
    for f in (np.setdiff1d, np.setxor1d, np.union1d, np.intersect1d):
        check_all(binary(f), [(a, b), (b, a), (a.astype(float), b * 1.5)])


def test_products_and_shapes():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 4.0])
    check_all(lambda a, b: np.cross(a, b), [(x, y), (np.array([1, 0, 0]), np.array([0, 1, 0])),
                                           (np.stack((x, y)), np.stack((y, x)))])
    with pytest.raises(ValueError):
        njit(lambda a, b: np.cross(a, b))(np.ones(4), np.ones(4))
    check_all(lambda a, b: np.kron(a, b), [(x, y), (np.eye(2), np.arange(4.0).reshape(2, 2))])
    check_all(lambda a, r: np.tile(a, r), [(x, 3), (np.arange(6).reshape(2, 3), 2), (x, 0)])
    check_all(lambda a: np.argwhere(a), [(np.array([[0, 1], [2, 0]]),), (np.array([0, 3, 0, 4]),)])
    check_all(lambda n, k: np.triu_indices(n, k), [(4, 0), (3, 1)])
    check_all(lambda n, k: np.tril_indices(n, k), [(4, 0), (3, -1)])
    check_all(lambda a, v: np.append(a, v), [(x, y), (np.arange(4).reshape(2, 2), np.arange(3))])
    check_all(lambda a, i: np.delete(a, i), [(x, 1), (x, -1), (np.arange(6), np.array([0, 4]))])
    check_all(lambda a: np.trim_zeros(a), [(np.array([0, 0, 1, 2, 0, 3, 0]),), (np.zeros(3),)])


def test_polynomials_windows_and_signals():
    check_all(lambda p, x: np.polyval(p, x), [(np.array([3.0, 0.0, 1.0]), 2.0),
                                              (np.array([1, -2, 1]), np.linspace(-1, 1, 5))])
    a, v = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 1.0, 0.5])
    check_all(lambda a, v: np.convolve(a, v), [(a, v), (v, a)])
    check_all(lambda a, v: np.correlate(a, v), [(a, v), (v, a),
                                                (a * (1 + 1j), v * (2 - 1j))])
    for w in (np.hanning, np.hamming, np.blackman, np.bartlett):
        for m in (0, 1, 5, 12):
            # NumPy's vectorised cosine and the C library's differ in the last bit.
            np.testing.assert_allclose(njit(unary(w))(m), w(m), rtol=1e-12, atol=1e-15)
    check_all(lambda a, b, n: np.logspace(a, b, n), [(0.0, 3.0, 4), (1.0, -1.0, 5)])
    vals = np.array([-np.inf, -1.5, 0.0, 2.7, np.inf, np.nan])
    for f in (np.isneginf, np.isposinf, np.fix):
        check_all(unary(f), [(vals,)])


def test_quantiles_and_covariance():
    rng = np.random.default_rng(3)
    a = rng.normal(size=37)
    b = np.array([3.0, np.nan, 1.0, 7.0, 2.0])
    for f, qs in ((np.percentile, (0, 12.5, 50, 100, np.array([5.0, 95.0]))),
                  (np.quantile, (0.0, 0.3, 1.0, np.array([0.25, 0.75])))):
        for q in qs:
            check_all(binary(f), [(a, q), (a.reshape(37, 1), q), (np.arange(6), q)])
            res = njit(binary(f))(b, q)
            assert np.all(np.isnan(res))
    for f, q in ((np.nanpercentile, 40.0), (np.nanquantile, 0.4)):
        check_all(binary(f), [(b, q), (a, q)])
    with pytest.raises(ValueError):
        njit(binary(np.percentile))(a, 101.0)
    m = rng.normal(size=(3, 8))
    check_all(lambda m: np.cov(m), [(m,), (m[0],)])
    check_all(lambda m, y: np.cov(m, y), [(m[0], m[1])])
    check_all(lambda m: np.corrcoef(m), [(m,)])
    check_all(lambda m: np.cov(m, None, False), [(m.T.copy(),)])


def test_kron_outer_trace_forms():
    """`np.kron` of arrays of different dimensions and of scalars (NumPy's leading unit
    axes), `np.outer(a, b, out=o)`, `np.trace` of an optional array (unwrapped as Numba
    unwraps optional arguments, None raising TypeError) and its error for non-2-d."""
    a2 = np.arange(6.0).reshape(2, 3)
    a1 = np.array([1.0, -2.0])
    kron = njit(lambda a, b: np.kron(a, b))
    for x, y in [(a2, a1), (a1, a2), (a2, 3.0), (2.5, a1)]:
        np.testing.assert_array_equal(kron(x, y), np.kron(x, y))

    def outer(a, b, o):
        r = np.outer(a, b, out=o)
        return r is o

    o1, o2 = np.zeros((2, 6)), np.zeros((2, 6))
    assert njit(outer)(a1, a2, o1) and outer(a1, a2, o2)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(
        njit(lambda a, b: np.outer(a, b, out=None))(a1, a1), np.outer(a1, a1)
    )

    tr = njit("(optional(float64[:,:]),)")(lambda a: np.trace(a))
    assert tr(np.ones((4, 4))) == 4.0
    with pytest.raises(TypeError, match="got None"):
        tr(None)
    with pytest.raises(TypingError, match=r"np.trace\(\) only supported on 2-D arrays"):
        njit(lambda a: np.trace(a))(np.ones(3))


def test_digitize_nan_bins_and_allclose_integers():
    """`np.digitize` decides the bins' direction as NumPy does (the first two distinct
    values; trailing NaNs keep increasing bins increasing) and rejects non-monotonic
    bins; `np.allclose`/`isclose` compare integers as floats (the smallest int64 too)."""
    values = np.float64([0, 0.99, 1, 4.4, 4.5, 7, 8, 9, 9.5, np.inf, -np.inf, np.nan])
    bins = np.sort(np.float64([1, 3, 4.5, 8, np.inf, -np.inf] + [np.nan] * 3))
    dig = njit(lambda x, b, r: np.digitize(x, b, r))
    for b in (bins, bins[::-1]):
        for r in (False, True):
            np.testing.assert_array_equal(dig(values, b, r), np.digitize(values, b, r))
    with pytest.raises(ValueError, match="monotonically"):
        dig(values, np.float64([1, 3, 2]), False)
    m = np.array([np.iinfo(np.int64).min])
    close = njit(lambda a, b: np.allclose(a, b))
    assert close(m, m) == np.allclose(m, m)
    assert close(np.array([1e10, 1e-8]), np.array([1.00001e10, 1e-9])) == np.allclose(
        np.array([1e10, 1e-8]), np.array([1.00001e10, 1e-9]))


def test_partition_of_an_empty_array():
    """An empty array partitions to itself whatever kth (NumPy's result)."""
    f = njit(lambda a, k: np.partition(a, k))
    np.testing.assert_array_equal(f(np.array([]), 0), np.partition(np.array([]), 0))
    with pytest.raises(ValueError):
        f(np.arange(3.0), 5)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_modes(mode):
    """`np.convolve` / `np.correlate` with `mode=` (and their defaults 'full' / 'valid'):
    NumPy's windows of the full result, either operand longer, complex operands
    (correlate conjugates the second); an unknown mode is NumPy's ValueError."""
    conv = njit(lambda a, v, m: np.convolve(a, v, m))
    corr = njit(lambda a, v, m: np.correlate(a, v, mode=m))
    pairs = [
        (np.arange(5.0), np.array([1.0, 2.0, 3.0])),
        (np.array([1.0, 2.0, 3.0]), np.arange(5.0)),
        (np.array([1 + 1j, 2.0]), np.array([1j, 3.0])),
        (np.arange(4), np.arange(4)),
        (np.array([2.0]), np.array([3.0, 4.0])),
    ]
    for a, v in pairs:
        np.testing.assert_allclose(conv(a, v, mode), np.convolve(a, v, mode))
        np.testing.assert_allclose(corr(a, v, mode), np.correlate(a, v, mode))
    np.testing.assert_allclose(njit(lambda a, v: np.convolve(a, v))(*pairs[0]),
                               np.convolve(*pairs[0]))
    np.testing.assert_allclose(njit(lambda a, v: np.correlate(a, v))(*pairs[1]),
                               np.correlate(*pairs[1]))
    with pytest.raises(ValueError, match="mode must be one of"):
        conv(np.arange(3.0), np.arange(2.0), "bad")
