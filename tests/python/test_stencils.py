"""``@numba_rs.stencil``: each kernel checked against a plain-Python application of the
same kernel (the oracle below: the kernel called at every interior position with its
arrays indexed relative to that position), from Python, from an njit caller and from a
``parallel=True`` caller, with Numba's border rule (``cval``, 0 unless given) and the
result dtype of the kernel. The autouse fixture checks NRT balance."""

import itertools
import warnings

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, stencil
from numba_rs.errors import NumbaPerformanceWarning, NumbaValueError


class _At:
    """An array seen from one position: ``a[1, 0]`` is the element one row further."""

    def __init__(self, a, pos):
        self.a, self.pos = a, pos

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return self.a[tuple(p + i for p, i in zip(self.pos, idx))]


def reference(kernel, args, neighborhood, cval=0, relative=None, dtype=None):
    """Numba's stencil semantics in plain Python."""
    first = next(a for a in args if isinstance(a, np.ndarray))
    relative = relative or [isinstance(a, np.ndarray) for a in args]
    ranges = [range(-min(0, lo), n - max(0, hi)) for (lo, hi), n in zip(neighborhood, first.shape)]
    values = {}
    for pos in itertools.product(*ranges):
        view = [_At(a, pos) if rel else a for a, rel in zip(args, relative)]
        values[pos] = kernel(*view)
    if dtype is None:
        dtype = np.asarray(next(iter(values.values()))).dtype if values else first.dtype
    out = np.full(first.shape, cval, dtype=dtype)
    for pos, v in values.items():
        out[pos] = v
    return out


def four(a):
    return 0.25 * (a[0, 1] + a[1, 0] + a[0, -1] + a[-1, 0])


def asym(a):
    return a[-2] + 2 * a[1]


def two(a, b):
    return a[0, 0] * b[0, 1]


def ints(a):
    return a[-1] + a[0] + a[1]


def three(a):
    return a[0, 0, 1] - a[0, -1, 0] + a[1, 0, 0]


def scaled(a, c):
    return c * a[1]


def branchy(a):
    if a[0] > 3:
        return a[-1]
    return a[1]


RNG = np.random.default_rng(7)

CASES = [
    (four, {}, lambda: (RNG.random((30, 41)),), [(-1, 1), (-1, 1)]),
    (asym, {}, lambda: (np.arange(12.0),), [(-2, 1)]),
    (two, {}, lambda: (RNG.random((20, 9)), RNG.random((20, 9))), [(0, 0), (0, 1)]),
    (ints, {}, lambda: (np.arange(10),), [(-1, 1)]),
    (three, {}, lambda: (RNG.random((6, 7, 8)),), [(0, 1), (-1, 0), (0, 1)]),
    (scaled, {}, lambda: (np.arange(8.0), 3.0), [(0, 1)]),
    (branchy, {}, lambda: (np.arange(10.0),), [(-1, 1)]),
    (asym, {"cval": 1.5}, lambda: (RNG.random(50),), [(-2, 1)]),
    (four, {}, lambda: (RNG.random((2, 2)),), [(-1, 1), (-1, 1)]),
]


def _callers(k, nargs):
    names = ", ".join(f"x{i}" for i in range(nargs))
    ns = {"k": k}
    exec(f"def caller({names}):\n    return k({names})\n", ns)
    return ns["caller"]


@pytest.mark.parametrize("kernel, options, make, nbhd", CASES)
def test_stencil_matches_the_plain_python_application(nthreads, kernel, options, make, nbhd):
    args = make()
    want = reference(kernel, args, nbhd, options.get("cval", 0))
    k = stencil(**options)(kernel)
    caller = _callers(k, len(args))
    with warnings.catch_warnings():
        # A parallel caller does its work through the stencil: no "no parallel
        # transformation" warning.
        warnings.simplefilter("error", NumbaPerformanceWarning)
        results = [k(*args), njit(caller)(*args), njit(parallel=True)(caller)(*args)]
    for got in results:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-13)


def running_mean(a):
    cumul = 0
    for i in range(-3, 1):
        cumul += a[i]
    return cumul / 4


def weighted(a, w):
    return w[0] * a[-1] + w[1] * a[0] + w[2] * a[1]


def test_neighborhood_and_standard_indexing():
    a = RNG.random(40)
    k = stencil(neighborhood=((-3, 0),))(running_mean)
    want = reference(running_mean, (a,), [(-3, 0)])
    np.testing.assert_allclose(k(a), want)
    np.testing.assert_allclose(njit(parallel=True)(_callers(k, 1))(a), want)
    w = np.array([0.25, 0.5, 0.25])
    k = stencil(standard_indexing=("w",))(weighted)
    want = reference(weighted, (a, w), [(-1, 1)], relative=[True, False])
    np.testing.assert_allclose(k(a, w), want)
    np.testing.assert_allclose(njit(_callers(k, 2))(a, w), want)


def test_out_argument_keeps_its_border():
    a = np.arange(12.0)
    k = stencil(asym)
    out = np.full(12, -5.0)
    k(a, out=out)
    want = reference(asym, (a,), [(-2, 1)], cval=-5.0)
    np.testing.assert_array_equal(out, want)


def test_stencil_errors_are_numbas():
    with pytest.raises(NumbaValueError, match="Unknown stencil option bogus"):
        stencil(bogus=1)
    with pytest.raises(NumbaValueError, match="Unsupported mode style reflect"):
        stencil("reflect")

    def variable(a, n):
        return a[n]

    with pytest.raises(Exception, match="neighborhood"):
        stencil(variable)(np.arange(5.0), 1)

    def wrong_rank(a):
        return a[0]

    with pytest.raises(Exception, match="dimensionality"):
        stencil(wrong_rank)(np.zeros((3, 3)))


def test_parallel_stencil_runs_on_the_pool(capfd):
    import os

    k = stencil(four)
    a = RNG.random((400, 300))
    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        got = njit(parallel=True)(_callers(k, 1))(a)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    out = capfd.readouterr().out
    assert "('prange', 'user', '')" in out
    np.testing.assert_allclose(got, reference(four, (a,), [(-1, 1), (-1, 1)]))


def test_stencil_option_off_keeps_the_stencil_serial(capfd):
    import os

    k = stencil(four)
    a = RNG.random((40, 30))
    caller = _callers(k, 1)
    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            got = njit(parallel={"stencil": False})(caller)(a)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    assert "Parallel for-loop" not in capfd.readouterr().out
    np.testing.assert_allclose(got, reference(four, (a,), [(-1, 1), (-1, 1)]))
