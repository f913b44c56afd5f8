"""NumPy's ``RandomState`` distributions in jitted code, against NumPy itself.

After ``np.random.seed(s)`` in jitted code every distribution draws exactly what
``RandomState(s)`` draws (NumPy's legacy algorithms: Marsaglia-Tsang gamma, BTPE and
inversion binomial, PTRS Poisson, HRUA hypergeometric, ...), as one value, an array of an
int or tuple ``size`` (filled in C order), with keywords and with defaults. Invalid
parameters raise NumPy's ValueError with NumPy's message, checked against what NumPy
itself raises; ``dirichlet`` and ``multinomial`` take an array or a tuple. Under
``parallel=True`` Numba's list of random calls become parfors.
"""

import math

import numpy as np
import pytest

import numba_rs
from numba_rs import njit
from numba_rs.errors import TypingError

SEEDS = [0, 1, 12345]

# (name, parameter sets): each set exercises a branch of NumPy's algorithm.
CASES = [
    ("beta", [(0.5, 0.7), (2.0, 3.0), (1.0, 5.0), (1e-3, 1e-3)]),
    ("chisquare", [(1.0,), (0.3,), (7.5,)]),
    ("f", [(2.0, 3.0), (0.5, 9.0)]),
    ("gamma", [(2.5, 2.0), (0.3, 1.0), (1.0, 3.0), (0.0, 1.0)]),
    ("standard_gamma", [(2.5,), (0.7,), (1.0,)]),
    ("gumbel", [(0.0, 1.0), (2.0, 3.0)]),
    ("laplace", [(0.0, 1.0), (-1.0, 0.5)]),
    ("logistic", [(0.0, 1.0), (3.0, 2.0)]),
    ("lognormal", [(0.0, 1.0), (1.0, 0.5)]),
    ("noncentral_chisquare", [(3.0, 2.0), (0.5, 1.5), (2.0, 0.0)]),
    ("noncentral_f", [(3.0, 5.0, 2.0), (0.5, 2.0, 1.0)]),
    ("pareto", [(3.0,), (0.5,)]),
    ("power", [(3.0,), (0.5,)]),
    ("rayleigh", [(1.0,), (2.5,)]),
    ("standard_cauchy", [()]),
    ("standard_t", [(3.0,), (0.8,)]),
    ("triangular", [(0.0, 0.3, 1.0), (-2.0, 5.0, 5.5), (1.0, 1.0, 2.0)]),
    ("vonmises", [(0.5, 2.0), (-1.0, 1e-6), (3.0, 1e-9), (0.0, 500.0)]),
    ("wald", [(1.0, 2.0), (3.0, 0.5)]),
    ("weibull", [(1.5,), (0.0,), (0.4,)]),
    ("exponential", [(2.0,)]),
    ("normal", [(1.0, 2.0)]),
    ("uniform", [(1.0, 4.0)]),
    ("binomial", [(10, 0.3), (1000, 0.4), (1000, 0.8), (50, 0.9), (0, 0.5), (5, 0.0)]),
    ("negative_binomial", [(3.0, 0.4), (0.5, 0.9)]),
    ("poisson", [(3.0,), (25.0,), (0.0,), (1000.5,)]),
    ("geometric", [(0.5,), (0.1,), (1.0,)]),
    ("zipf", [(2.0,), (1.3,)]),
    ("logseries", [(0.5,), (0.99,), (0.1,)]),
    ("hypergeometric", [(10, 5, 3), (100, 200, 50), (5, 500, 200), (20, 3, 12)]),
]

PARAMS = [(name, p) for name, sets in CASES for p in sets]


def jitted(name, nparams, body):
    """A jitted `f(seed, p0, ..., size)` whose body calls `np.random.<name>`."""
    args = ", ".join(f"p{i}" for i in range(nparams))
    sep = ", " if nparams else ""
    src = (
        f"def f(seed, {args}{sep}size):\n"
        f"    np.random.seed(seed)\n"
        f"    {body.format(name=name, args=args, sep=sep)}\n"
    )
    g = {"np": np}
    exec(src, g)
    return njit(g["f"])


_cache = {}


def drawer(name, nparams):
    key = (name, nparams)
    if key not in _cache:
        _cache[key] = jitted(
            name,
            nparams,
            "return (np.random.{name}({args}{sep}size), np.random.{name}({args}),"
            " np.random.{name}({args}{sep}size=(2, 3)))",
        )
    return _cache[key]


def same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name,params", PARAMS, ids=[f"{n}{p}" for n, p in PARAMS])
def test_distribution_draws_numpys_values(name, params, seed):
    got = drawer(name, len(params))(seed, *params, 50)
    rs = np.random.RandomState(seed)
    method = getattr(rs, name)
    expected = (method(*params, 50), method(*params), method(*params, size=(2, 3)))
    for g, e in zip(got, expected):
        same(g, e)
    # A scalar draw is a Python scalar of the distribution's kind.
    assert type(got[1]) is type(expected[1].item() if hasattr(expected[1], "item") else expected[1])


@njit
def keywords_and_defaults(seed, n):
    np.random.seed(seed)
    return (
        np.random.gamma(2.0, size=n),
        np.random.poisson(size=n),
        np.random.binomial(p=0.25, n=40),
        np.random.gumbel(scale=2.0),
        np.random.lognormal(sigma=0.5, size=(2, 2)),
        np.random.rayleigh(),
        np.random.hypergeometric(ngood=7, nbad=9, nsample=12, size=3),
        np.random.wald(mean=2.0, scale=1.0),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_keywords_and_defaults_are_numpys(seed):
    rs = np.random.RandomState(seed)
    expected = (
        rs.gamma(2.0, size=4),
        rs.poisson(size=4),
        rs.binomial(p=0.25, n=40),
        rs.gumbel(scale=2.0),
        rs.lognormal(sigma=0.5, size=(2, 2)),
        rs.rayleigh(),
        rs.hypergeometric(ngood=7, nbad=9, nsample=12, size=3),
        rs.wald(mean=2.0, scale=1.0),
    )
    for g, e in zip(keywords_and_defaults(seed, 4), expected):
        same(g, e)


@njit
def mixed_stream(seed):
    # Draws that use the cached second normal value, mixed with uniform ones.
    np.random.seed(seed)
    return (
        np.random.normal(),
        np.random.gamma(3.0),
        np.random.standard_t(2.0),
        np.random.beta(2.0, 2.0, 3),
        np.random.standard_cauchy(),
        np.random.poisson(30.0, 4),
        np.random.random(),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_distributions_share_the_stream_and_its_cached_normal(seed):
    rs = np.random.RandomState(seed)
    expected = (
        rs.normal(),
        rs.gamma(3.0),
        rs.standard_t(2.0),
        rs.beta(2.0, 2.0, 3),
        rs.standard_cauchy(),
        rs.poisson(30.0, 4),
        rs.random_sample(),
    )
    for g, e in zip(mixed_stream(seed), expected):
        same(g, e)


def test_int_parameters_accept_ints_and_float_parameters_accept_ints():
    rs = np.random.RandomState(5)
    got = drawer("gamma", 2)(5, 2, 3, 4)
    same(got[0], rs.gamma(2, 3, 4))
    with pytest.raises(TypingError):
        drawer("binomial", 2)(5, 10.0, 0.5, 3)


BAD = [
    ("normal", (0.0, -1.0)),
    ("normal", (0.0, -0.0)),
    ("gamma", (-1.0, 1.0)),
    ("gamma", (1.0, -2.0)),
    ("beta", (0.0, 1.0)),
    ("chisquare", (0.0,)),
    ("binomial", (-1, 0.5)),
    ("binomial", (5, 1.5)),
    ("binomial", (5, math.nan)),
    ("poisson", (-1.0,)),
    ("poisson", (math.nan,)),
    ("poisson", (1e19,)),
    ("geometric", (0.0,)),
    ("geometric", (1.5,)),
    ("zipf", (1.0,)),
    ("logseries", (1.0,)),
    ("hypergeometric", (1, 2, 5)),
    ("hypergeometric", (-1, 2, 0)),
    ("hypergeometric", (1, 2, 0)),
    ("triangular", (2.0, 1.0, 3.0)),
    ("triangular", (1.0, 4.0, 3.0)),
    ("triangular", (1.0, 1.0, 1.0)),
    ("wald", (0.0, 1.0)),
    ("negative_binomial", (0.0, 0.5)),
    ("vonmises", (0.0, -1.0)),
    ("noncentral_chisquare", (1.0, -1.0)),
    ("weibull", (-1.0,)),
]


@pytest.mark.parametrize("name,params", BAD, ids=[f"{n}{p}" for n, p in BAD])
def test_bad_parameters_raise_numpys_value_error(name, params):
    with pytest.raises(ValueError) as numpy_error:
        getattr(np.random.RandomState(0), name)(*params, 3)
    f = drawer(name, len(params))
    with pytest.raises(ValueError) as ours:
        f(0, *params, 3)
    assert str(ours.value) == str(numpy_error.value)


def test_nan_parameters_that_numpy_accepts_give_nan():
    f = drawer("noncentral_chisquare", 2)
    for df in (0.5, 3.0):
        a, b, c = f(0, df, math.nan, 4)
        assert np.isnan(a).all() and math.isnan(b) and np.isnan(c).all()


def test_wrong_argument_counts_are_typing_errors():
    @njit
    def too_few():
        return np.random.beta(1.0)

    @njit
    def too_many():
        return np.random.zipf(2.0, 3, 4)

    for f in (too_few, too_many):
        with pytest.raises(TypingError):
            f()


# dirichlet and multinomial


@njit
def dirichlet(seed, alpha, size):
    np.random.seed(seed)
    return np.random.dirichlet(alpha, size), np.random.dirichlet(alpha)


@njit
def multinomial(seed, n, pvals, size):
    np.random.seed(seed)
    return np.random.multinomial(n, pvals, size), np.random.multinomial(n, pvals=pvals)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "alpha", [np.array([0.5, 2.0, 3.0]), (1.0, 1.0, 10000.0, 1.0), (1, 2), np.arange(1.0, 9.0)[::2]]
)
@pytest.mark.parametrize("size", [None, 4, (2, 3)])
def test_dirichlet_draws_numpys_values(seed, alpha, size):
    rs = np.random.RandomState(seed)
    expected = rs.dirichlet(alpha, size), rs.dirichlet(alpha)
    for g, e in zip(dirichlet(seed, alpha, size), expected):
        same(g, e)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "pvals", [np.array([0.2, 0.3, 0.5]), (1 / 6.0,) * 6, np.array([0.0, 1.0]), np.array([0.9, 0.05])]
)
@pytest.mark.parametrize("n", [0, 10, 1000])
@pytest.mark.parametrize("size", [None, 5, (2, 2)])
def test_multinomial_draws_numpys_values(seed, pvals, n, size):
    rs = np.random.RandomState(seed)
    expected = rs.multinomial(n, pvals, size), rs.multinomial(n, pvals)
    for g, e in zip(multinomial(seed, n, pvals, size), expected):
        same(g, e)


def test_dirichlet_and_multinomial_errors():
    with pytest.raises(ValueError, match=r"dirichlet: alpha must be > 0.0"):
        dirichlet(0, (0.0, 1.0), None)
    for pvals in (np.array([0.5, 0.7, 0.1]), np.array([-0.1, 1.0])):
        with pytest.raises(ValueError) as numpy_error:
            np.random.RandomState(0).multinomial(5, pvals)
        with pytest.raises(ValueError) as ours:
            multinomial(0, 5, pvals, None)
        assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="n < 0"):
        multinomial(0, -5, np.array([0.5, 0.5]), None)


def test_dirichlet_of_an_int_array_is_a_typing_error():
    with pytest.raises(TypingError):
        dirichlet(0, np.array([1, 2]), None)


# parallel=True: Numba's random calls become parfors.


def parallel_draws(n):
    return (
        np.random.gamma(2.0, 3.0, (n, 2)),
        np.random.binomial(20, 0.3, n),
        np.random.poisson(4.0, n),
        np.random.beta(2.0, 5.0, n),
        np.random.chisquare(3.0, n),
        np.random.triangular(0.0, 1.0, 3.0, n),
    )


def test_parallel_random_draws_are_parfors_with_the_distributions(nthreads, capfd):
    import os

    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        f = njit(parallel=True)(parallel_draws)
        g, b, p, be, c, t = f(200_000)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    out = capfd.readouterr().out
    for name in ("gamma", "binomial", "poisson", "beta", "chisquare", "triangular"):
        assert f"('{name} function', 'NumPy mapping')" in out, name
    # Means and variances of the distributions (NumPy's formulas), within sampling error.
    assert g.shape == (200_000, 2) and abs(g.mean() - 6.0) < 0.1 and abs(g.var() - 18.0) < 0.6
    assert b.dtype == np.int64 and abs(b.mean() - 6.0) < 0.05 and b.min() >= 0 and b.max() <= 20
    assert p.dtype == np.int64 and abs(p.mean() - 4.0) < 0.05
    assert abs(be.mean() - 2.0 / 7.0) < 0.005 and be.min() >= 0 and be.max() <= 1
    assert abs(c.mean() - 3.0) < 0.05
    assert abs(t.mean() - 4.0 / 3.0) < 0.01 and t.min() >= 0 and t.max() <= 3


def seeded_draws(n):
    np.random.seed(3)
    return (
        np.random.gamma(2.0, 3.0, (n, 2)),
        np.random.binomial(20, 0.3, n),
        np.random.poisson(4.0, n),
        np.random.beta(2.0, 5.0, n),
        np.random.chisquare(3.0, n),
        np.random.triangular(0.0, 1.0, 3.0, n),
    )


def test_parallel_random_draws_on_one_thread_are_the_serial_stream():
    # One thread runs the loops inline on the caller's generator, in C order.

    old = numba_rs.get_num_threads()
    numba_rs.set_num_threads(1)
    try:
        got = njit(parallel=True)(seeded_draws)(500)
    finally:
        numba_rs.set_num_threads(old)
    for g, e in zip(got, seeded_draws(500)):
        same(g, e)


def test_parallel_bad_parameter_raises_numpys_error():
    def bad(n, scale):
        return np.random.gamma(2.0, scale, n)

    f = njit(parallel=True)(bad)
    with pytest.raises(ValueError, match="scale < 0"):
        f(1000, -1.0)
    # Checked once before the loop allocates: the fixture finds nothing left behind.


def test_parallel_randint_checks_before_allocating():
    def bad(low, high, n):
        return np.random.randint(low, high, n)

    f = njit(parallel=True)(bad)
    # NumPy's error, raised before the result exists: the fixture finds no leak.
    with pytest.raises(ValueError, match="low >= high"):
        f(5, 5, 1000)
    with pytest.raises(ValueError, match="low >= high"):
        np.random.randint(5, 5, 1000)
    # An empty size draws nothing and checks nothing, as the serial build (and Numba).
    assert f(5, 5, 0).shape == (0,)
    assert njit(bad)(5, 5, 0).shape == (0,)
    got = f(-3, 9, 5000)
    assert got.dtype == np.int64
    assert sorted(set(got.tolist())) == list(range(-3, 9))
