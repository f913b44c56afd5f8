"""`numpy.random.Generator` in compiled code (numba-typeinfer's `np_generator`,
numba-lower's `impls/npgen`, numba-py's `npgen` and `_npgenerator`): a Generator passed
in draws exactly NumPy's values (NumPy's own distribution functions run on its bit
generator) and leaves the bit generator in NumPy's state, for PCG64 and MT19937; every
method's scalar and `size=` forms, `dtype=`, parameter checks with NumPy's messages and
Numba's type errors. The oracle is NumPy on a Generator seeded alike; NRT counts balance
(conftest)."""

import random
import re

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

SEEDS = [1, 12345]


def gens(seed, bitgen=None):
    if bitgen is None:
        return np.random.default_rng(seed), np.random.default_rng(seed)
    return np.random.Generator(bitgen(seed)), np.random.Generator(bitgen(seed))


def same_draws(fn, seed=1, bitgen=None, *args):
    """`fn(gen, *args)` compiled and run by CPython on Generators seeded alike: equal
    results (bit for bit) and equal bit-generator states afterwards."""
    g_jit, g_py = gens(seed, bitgen)
    got = njit(fn)(g_jit, *args)
    want = fn(g_py, *args)
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want)
        assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind
    assert same_state(g_jit.bit_generator.state, g_py.bit_generator.state)
    return got


def same_state(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


CALLS = [
    "g.random()",
    "g.random(7)",
    "g.random((2, 3), dtype=np.float32)",
    "g.standard_normal()",
    "g.standard_normal(size=(4, 5))",
    "g.standard_normal(9, dtype=np.float32)",
    "g.standard_exponential(6)",
    "g.standard_exponential(6, method='inv')",
    "g.standard_exponential(3, dtype=np.float32)",
    "g.standard_gamma(0.5, 8)",
    "g.standard_gamma(2.5, 8, dtype=np.float32)",
    "g.standard_cauchy(5)",
    "g.normal(1.5, 2.0, 10)",
    "g.normal()",
    "g.uniform(-2, 3, 6)",
    "g.uniform(low=1.0, high=2.0)",
    "g.exponential(2.0, 5)",
    "g.gamma(0.7, 2.0, 6)",
    "g.gamma(3.0, size=6)",
    "g.beta(0.5, 0.3, 7)",
    "g.chisquare(3.5, 5)",
    "g.f(2.0, 5.0, 5)",
    "g.pareto(3.0, 5)",
    "g.weibull(1.5, 5)",
    "g.power(2.0, 5)",
    "g.laplace(1.0, 2.0, 5)",
    "g.gumbel(1.0, 2.0, 5)",
    "g.logistic(1.0, 2.0, 5)",
    "g.lognormal(0.5, 0.25, 5)",
    "g.rayleigh(2.0, 5)",
    "g.standard_t(4.0, 5)",
    "g.noncentral_chisquare(3.0, 1.5, 5)",
    "g.noncentral_f(3.0, 5.0, 1.5, 5)",
    "g.wald(1.0, 2.0, 5)",
    "g.vonmises(0.5, 3.0, 5)",
    "g.triangular(0.0, 1.0, 3.0, 5)",
    "g.poisson(3.5, 8)",
    "g.poisson(200.0, 8)",
    "g.poisson()",
    "g.negative_binomial(3.0, 0.4, 6)",
    "g.geometric(0.3, 6)",
    "g.zipf(2.5, 6)",
    "g.logseries(0.6, 6)",
    "g.binomial(10, 0.3, 6)",
    "g.binomial(1000, 0.6, 6)",
    "g.hypergeometric(10, 20, 5, 6)",
    "g.integers(10)",
    "g.integers(-5, 5, 20)",
    "g.integers(0, 2**40, 5)",
    "g.integers(0, 255, 10, dtype=np.uint8, endpoint=True)",
    "g.integers(-100, 100, (3, 4), dtype=np.int32)",
    "g.integers(0, 2, 5, dtype=np.bool_)",
    "g.integers(7, 8)",
    "g.choice(10, 6)",
    "g.choice(np.arange(5.0) * 2)",
    "g.choice(np.arange(5) + 3, (2, 2))",
    "g.choice(10, 6, replace=False)",
    "g.choice(100, (3, 4), replace=False)",
    "g.choice(20000, 1000, replace=False)",
    "g.choice(50, 10, replace=False, shuffle=False)",
    "g.choice(np.arange(7.0), 5, replace=False)",
    "g.choice(5, 8, p=np.array([0.1, 0.2, 0.3, 0.2, 0.2]))",
    "g.choice(np.arange(5) * 3, p=np.array([0.1, 0.2, 0.3, 0.2, 0.2]))",
    "g.permutation(10)",
]


def compile_call(call):
    ns = {"np": np}
    exec(f"def f(g):\n    return {call}\n", ns)
    return ns["f"]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("seed", SEEDS)
def test_methods_draw_numpys_values(call, seed):
    same_draws(compile_call(call), seed)


@pytest.mark.parametrize("call", CALLS[::4])
def test_other_bit_generators(call):
    same_draws(compile_call(call), 7, np.random.MT19937)
    same_draws(compile_call(call), 7, np.random.Philox)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_shuffle_and_permutation_along_an_axis(axis):
    def shuf(g, axis):
        a = g.random((4, 5, 6))
        g.shuffle(a, axis=axis)
        return a

    def perm(g, axis):
        return g.permutation(g.random((4, 5, 6)), axis=axis)

    same_draws(shuf, 3, None, axis)
    same_draws(perm, 3, None, axis)

    def one_d(g):
        a = np.arange(20)
        g.shuffle(a)
        return a, g.permutation(a)

    g1, g2 = gens(5)
    got, want = njit(one_d)(g1), one_d(g2)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)


def test_permutation_copies_and_generator_returns_itself():
    @njit
    def f(g, a):
        g.permutation(a)
        return g

    g = np.random.default_rng(2)
    a = np.arange(10.0)
    assert f(g, a) is g
    np.testing.assert_array_equal(a, np.arange(10.0))


def test_draws_in_a_loop_match_numpy_state():
    def f(g, n):
        s = 0.0
        for i in range(n):
            s += g.normal() * g.integers(1, 7) + g.random()
        return s

    same_draws(f, 11, None, 1000)


def test_parameter_errors_are_numpys():
    cases = [
        ("g.normal(0.0, -1.0)", ValueError, "scale < 0"),
        ("g.beta(0.0, 1.0)", ValueError, "a <= 0"),
        ("g.binomial(5, 1.5)", ValueError, "p < 0, p > 1 or p is NaN"),
        ("g.geometric(0.0)", ValueError, "p <= 0, p > 1 or p contains NaNs"),
        ("g.zipf(1.0)", ValueError, "a <= 1 or a is NaN"),
        ("g.poisson(-1.0)", ValueError, "lam < 0 or lam is NaN"),
        ("g.triangular(2.0, 1.0, 3.0)", ValueError, "left > mode"),
        ("g.integers(5, 5)", ValueError, "low >= high"),
        ("g.integers(-1, 5, dtype=np.uint8)", ValueError, "low is out of bounds for uint8"),
        ("g.hypergeometric(1, 1, 5)", ValueError, "ngood + nbad < nsample"),
        ("g.choice(3, 5, replace=False)", ValueError, "Cannot take a larger sample than population when replace is False"),
        ("g.choice(3, p=np.array([0.5, 0.6, 0.1]))", ValueError, "Probabilities do not sum to 1"),
        ("g.choice(3, p=np.array([-0.5, 1.5, 0.0]))", ValueError, "Probabilities are not non-negative"),
        ("g.choice(3, p=np.array([0.5, 0.5]))", ValueError, "a and p must have same size"),
    ]
    for call, exc, msg in cases:
        f = njit(compile_call(call))
        with pytest.raises(exc, match=re.escape(msg)):
            f(np.random.default_rng(0))
        with pytest.raises(exc, match=re.escape(msg)):
            compile_call(call)(np.random.default_rng(0))


def test_argument_type_errors_are_numbas():
    for call, arg in [
        ("g.normal(loc=(0,))", "loc"),
        ("g.random(size=('x',))", "size"),
        ("g.standard_normal(dtype=0.5)", "dtype"),
        ("g.integers('x', 5)", "low"),
        ("g.shuffle(3)", "x"),
    ]:
        with pytest.raises(TypingError, match=f"Argument {arg} is not one of the expected type"):
            njit(compile_call(call))(np.random.default_rng(0))


def test_axis_out_of_bounds():
    @njit
    def f(g, a, axis):
        return g.permutation(a, axis=axis)

    with pytest.raises(IndexError, match="Axis is out of bounds for the given array"):
        f(np.random.default_rng(1), np.arange(3), 2)


# -- generated programs ---------------------------------------------------------------

SNIPPETS = [
    "acc += g.random()",
    "acc += g.normal(1.0, 0.5)",
    "acc += g.integers(0, 100)",
    "acc += g.standard_normal(3).sum()",
    "acc += g.poisson(4.0)",
    "acc += g.exponential(2.0, 2).sum()",
    "acc += g.binomial(20, 0.25)",
    "acc += g.choice(50)",
    "acc += g.gamma(2.0)",
    "acc += g.uniform(-1.0, 1.0, 4).max()",
    "acc += g.permutation(6)[0]",
]


def test_generated_draw_sequences():
    rng = random.Random(99)
    for _ in range(15):
        body = [rng.choice(SNIPPETS) for _ in range(rng.randint(2, 7))]
        loop = rng.random() < 0.5
        lines = ["def f(g):", "    acc = 0.0"]
        if loop:
            lines.append("    for i in range(5):")
            lines += ["        " + b for b in body]
        else:
            lines += ["    " + b for b in body]
        lines.append("    return acc")
        ns = {"np": np}
        exec("\n".join(lines), ns)
        same_draws(ns["f"], rng.randint(0, 10**6))


def test_default_rng_made_in_compiled_code():
    def draws(seed):
        g = np.random.default_rng(seed)
        return g.normal(0.0, 1.0), g.integers(0, 100), g.random(), g.standard_normal()

    cf = njit(draws)
    for seed in (0, 42, 2**40):
        got, want = cf(seed), draws(seed)
        assert got[0] == want[0] and got[1] == want[1] and got[2] == want[2]
        assert got[3] == want[3]

    @njit
    def made(seed):
        return np.random.default_rng(seed)

    g = made(7)
    assert isinstance(g, np.random.Generator)
    assert g.random() == np.random.default_rng(7).random()

    @njit
    def unseeded():
        return np.random.default_rng().random()

    assert 0.0 <= unseeded() < 1.0
    with pytest.raises(ValueError, match="expected non-negative integer"):
        cf(-1)


def test_default_rng_objects_released():
    import gc

    @njit
    def f(s):
        return np.random.default_rng(s).random()

    f(1)

    def count():
        return sum(1 for o in gc.get_objects() if isinstance(o, np.random.Generator))

    gc.collect()
    before = count()
    for i in range(50):
        f(i)
    gc.collect()
    assert count() == before


def test_integers_with_64_bit_bounds():
    f = njit(lambda g, lo, hi, dt: g.integers(lo, hi, dtype=dt, endpoint=True))
    h = njit(lambda g, lo, hi, dt: g.integers(lo, hi, dtype=dt))
    top = 2**64 - 1
    for lo, hi, dt in [(0, top, np.uint64), (5, 2**40, np.uint64), (0, 2**63 - 1, np.int64)]:
        a, b = np.random.default_rng(11), np.random.default_rng(11)
        assert f(a, lo, hi, dt) == b.integers(lo, hi, dtype=dt, endpoint=True)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert h(a, 0, 2**63, np.int64) == b.integers(0, 2**63, dtype=np.int64)
    for fn, args, msg in [(f, (-1, top, np.uint64), "low is out of bounds for uint64"),
                          (f, (0, 2**63, np.int64), "high is out of bounds for int64"),
                          (h, (0, 2**63 + 1, np.int64), "high is out of bounds for int64")]:
        with pytest.raises(ValueError, match=msg):
            fn(np.random.default_rng(1), *args)

    # The bound as a closure constant.
    big = 2**64 - 1
    k = njit(lambda g: g.integers(0, big, dtype=np.uint64))
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    assert k(a) == b.integers(0, big, dtype=np.uint64)


def test_number_classes_and_dtypes_as_arguments():
    f = njit(lambda d: np.zeros(3, d))
    for d in (np.int32, np.float32, np.bool_, np.dtype("int16"), np.dtype("complex64")):
        got, want = f(d), np.zeros(3, d)
        assert got.dtype == want.dtype
    assert njit(lambda x: x)(2**64 - 1) == 2**64 - 1
    with pytest.raises(OverflowError):
        njit(lambda x: x)(2**64)
