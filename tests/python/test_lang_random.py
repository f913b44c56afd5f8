"""The ``random`` module in jitted code, checked against CPython's own generator put in the
state Numba's seeding produces.

Numba's ``random.seed(n)`` seeds the Mersenne Twister as NumPy's legacy ``seed(n)`` does
(``init_genrand``), not as CPython's ``random.seed`` does; from that state, ``random()``,
``getrandbits`` and ``randrange`` draw exactly as CPython's methods do, and ``gauss`` uses
the polar Box-Muller method. The oracle is a ``random.Random`` whose state is copied from
``numpy.random.RandomState(n)``.
"""

import math
import random

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

SEEDS = [0, 1, 42, 12345, 2**31 - 1, 2**32 - 1]


def oracle(seed):
    mt = np.random.RandomState(seed).get_state()[1]
    r = random.Random()
    r.setstate((3, tuple(int(x) for x in mt) + (624,), None))
    return r


def polar_gauss(r):
    """Numba's gauss: pairs by the polar method, the second kept for the next call."""
    cache = []

    def gauss():
        if cache:
            return cache.pop()
        while True:
            x1 = 2.0 * r.random() - 1.0
            x2 = 2.0 * r.random() - 1.0
            r2 = x1 * x1 + x2 * x2
            if r2 < 1.0 and r2 != 0.0:
                break
        f = math.sqrt(-2.0 * math.log(r2) / r2)
        cache.append(f * x1)
        return f * x2

    return gauss


@njit
def draw_random(seed, n):
    random.seed(seed)
    s = 0.0
    last = 0.0
    for i in range(n):
        last = random.random()
        s += last * (i + 1)
    return s, last


@njit
def draw_ints(seed, n, a, b, step):
    random.seed(seed)
    acc = 0
    for i in range(n):
        acc = acc * 31 + random.randrange(a, b, step) + random.randint(a, b)
        acc = acc % 1000000007
    return acc


@njit
def draw_bits(seed, k):
    random.seed(seed)
    return random.getrandbits(k), random.getrandbits(k)


@njit
def draw_floats(seed, mu, sigma):
    random.seed(seed)
    return (
        random.uniform(mu, sigma),
        random.gauss(mu, sigma),
        random.gauss(mu, sigma),
        random.normalvariate(mu, sigma),
        random.expovariate(1.5),
        random.triangular(mu, sigma),
        random.triangular(mu, sigma, mu),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_random_follows_numpys_seeding(seed):
    r = oracle(seed)
    n = 1000
    values = [r.random() for _ in range(n)]
    s = sum(v * (i + 1) for i, v in enumerate(values))
    got_s, got_last = draw_random(seed, n)
    assert got_last == values[-1]
    assert got_s == pytest.approx(s, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("a,b,step", [(0, 10, 1), (-50, 50, 3), (5, 6, 1), (0, 2**40, 7)])
def test_randrange_and_randint_like_cpython(seed, a, b, step):
    r = oracle(seed)
    acc = 0
    for _ in range(200):
        acc = acc * 31 + r.randrange(a, b, step) + r.randint(a, b)
        acc = acc % 1000000007
    assert draw_ints(seed, 200, a, b, step) == acc


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 5, 31, 32, 33, 63, 64])
def test_getrandbits_like_cpython(seed, k):
    r = oracle(seed)
    assert draw_bits(seed, k) == (r.getrandbits(k), r.getrandbits(k))


@pytest.mark.parametrize("seed", SEEDS)
def test_distributions(seed):
    r = oracle(seed)
    gauss = polar_gauss(r)
    mu, sigma = 1.5, 2.5
    u = mu + (sigma - mu) * r.random()
    g1 = mu + sigma * gauss()
    g2 = mu + sigma * gauss()
    g3 = mu + sigma * gauss()
    e = -math.log(1.0 - r.random()) / 1.5

    def tri(low, high, c):
        v = r.random()
        if v > c:
            v = 1.0 - v
            c = 1.0 - c
            low, high = high, low
        return low + (high - low) * math.sqrt(v * c)

    t1 = tri(mu, sigma, 0.5)
    t2 = tri(mu, sigma, (mu - mu) / (sigma - mu))
    assert draw_floats(seed, mu, sigma) == pytest.approx((u, g1, g2, g3, e, t1, t2), rel=1e-12)


@njit
def empty_range(a):
    return random.randrange(a, a)


def test_empty_randrange_is_value_error():
    with pytest.raises(ValueError, match="empty range"):
        empty_range(3)


@njit
def np_draws(seed, n, low, high):
    np.random.seed(seed)
    acc = 0.0
    ints = 0
    for _ in range(n):
        acc += np.random.random() + np.random.uniform(low, high) + np.random.normal(low, 2.0)
        acc += np.random.standard_normal() + np.random.exponential(1.5) + np.random.rand()
        ints = ints * 7 + np.random.randint(low, high) + np.random.randint(high)
        ints = ints % 1000003
    return acc, ints


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (3, 4), (0, 2**33)])
def test_numpy_random_scalars_follow_numpy(seed, low, high):
    # Oracle: NumPy's own legacy generator with the same seed, drawn in the same order.
    rs = np.random.RandomState(seed)
    acc = 0.0
    ints = 0
    for _ in range(50):
        acc += rs.random_sample() + rs.uniform(low, high) + rs.normal(low, 2.0)
        acc += rs.standard_normal() + rs.exponential(1.5) + rs.rand()
        ints = ints * 7 + int(rs.randint(low, high)) + int(rs.randint(high))
        ints = ints % 1000003
    got_acc, got_ints = np_draws(seed, 50, low, high)
    assert got_ints == ints
    assert got_acc == pytest.approx(acc, rel=1e-12)


@njit
def draw_gamma_beta_vonmises(seed, a, b):
    random.seed(seed)
    return (random.gammavariate(a, b), random.gammavariate(0.5, b), random.gammavariate(1.0, b),
            random.betavariate(a, b), random.vonmisesvariate(a, b))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("a,b", [(2.5, 1.5), (1.0, 3.0), (0.7, 0.2)])
def test_gamma_beta_vonmises_like_cpython(seed, a, b):
    # CPython's algorithms on the state Numba's seeding gives.
    r = oracle(seed)
    expected = (r.gammavariate(a, b), r.gammavariate(0.5, b), r.gammavariate(1.0, b),
                r.betavariate(a, b), r.vonmisesvariate(a, b))
    assert draw_gamma_beta_vonmises(seed, a, b) == pytest.approx(expected, rel=1e-12)


def test_gammavariate_rejects_non_positive_parameters():
    with pytest.raises(ValueError, match="alpha and beta must be > 0.0"):
        draw_gamma_beta_vonmises(1, -1.0, 2.0)


@njit
def shuffle_python(seed, a, rounds):
    random.seed(seed)
    for _ in range(rounds):
        random.shuffle(a)
    return random.random()


@pytest.mark.parametrize("seed", [0, 3, 2**32 - 1])
def test_random_shuffle_of_arrays_is_cpythons(seed):
    # CPython's shuffle on the same generator state: the same permutation, rows of a 2-d
    # array move whole, and the stream goes on from the same place.
    for a in (np.arange(20), np.arange(32.0).reshape(8, 4), np.arange(40)[::3]):
        got = a.copy()
        after = shuffle_python(seed, got, 3)
        r = oracle(seed)
        rows = list(range(len(a)))
        for _ in range(3):
            r.shuffle(rows)
        np.testing.assert_array_equal(got, a[rows])
        assert after == r.random()


def test_random_shuffle_of_a_read_only_array_is_a_typing_error():
    a = np.arange(5)
    a.flags.writeable = False
    with pytest.raises(TypingError):
        shuffle_python(0, a, 1)
