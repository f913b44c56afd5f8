"""The array forms of ``np.random`` in jitted code against NumPy's legacy generator.

After ``np.random.seed(s)`` in jitted code, every form draws what ``RandomState(s)`` draws
for the same calls: arrays from ``size=`` (an int or a tuple, positional or keyword) and
``rand``/``randn`` are filled in C order with the same values (floats compared exactly),
``randint`` gives int64, ``shuffle`` and ``permutation`` follow NumPy's legacy shuffle, and
``choice`` samples as NumPy does (with replacement: one ``randint(0, n)`` per item; without:
the first items of a permutation of the population).
"""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

SEEDS = [0, 1, 42, 12345, 2**32 - 1]


def same(got, expected):
    """Exactly the same values, shape and dtype."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)


# One jitted function per form, each paired with the same calls on a RandomState.


@njit
def j_random_int(s):
    np.random.seed(s)
    return np.random.random(7)


@njit
def j_random_tuple(s):
    np.random.seed(s)
    return np.random.random((3, 4))


@njit
def j_random_sample_kw(s):
    np.random.seed(s)
    return np.random.random_sample(size=(2, 3, 2))


@njit
def j_sample_ranf(s):
    np.random.seed(s)
    return np.random.sample(5), np.random.ranf(size=4)


@njit
def j_uniform(s, low, high):
    np.random.seed(s)
    return np.random.uniform(low, high, (3, 4)), np.random.uniform(low, high, size=5)


@njit
def j_uniform_defaults(s):
    np.random.seed(s)
    return np.random.uniform(size=6), np.random.uniform(-2.0, size=(2, 2))


@njit
def j_normal(s, loc, scale):
    np.random.seed(s)
    return np.random.normal(loc, scale, (3, 4)), np.random.normal(loc, scale, size=5)


@njit
def j_normal_defaults(s):
    np.random.seed(s)
    return np.random.normal(size=(2, 5)), np.random.normal(3, size=3)


@njit
def j_standard_normal(s):
    np.random.seed(s)
    return np.random.standard_normal(7), np.random.standard_normal(size=(3, 3))


@njit
def j_exponential(s, scale):
    np.random.seed(s)
    return np.random.exponential(scale, (2, 3)), np.random.exponential(size=4)


@njit
def j_standard_exponential(s):
    np.random.seed(s)
    return np.random.standard_exponential((2, 2)), np.random.standard_exponential(size=3)


@njit
def j_randint(s, low, high):
    np.random.seed(s)
    return np.random.randint(low, high, (3, 4)), np.random.randint(low, high, size=5)


@njit
def j_randint_high_none(s):
    np.random.seed(s)
    return np.random.randint(10, size=6), np.random.randint(2**40, size=(2, 2))


@njit
def j_rand_randn(s):
    np.random.seed(s)
    return np.random.rand(3, 4), np.random.rand(5), np.random.randn(2, 3), np.random.randn(4)


FORMS = [
    ("random(int)", lambda s: j_random_int(s), lambda rs: rs.random(7)),
    ("random(tuple)", lambda s: j_random_tuple(s), lambda rs: rs.random((3, 4))),
    ("random_sample(size=)", lambda s: j_random_sample_kw(s),
     lambda rs: rs.random_sample(size=(2, 3, 2))),
    ("sample, ranf", lambda s: j_sample_ranf(s), lambda rs: (rs.random_sample(5), rs.random_sample(4))),
    ("uniform", lambda s: j_uniform(s, 1.5, 4.0),
     lambda rs: (rs.uniform(1.5, 4.0, (3, 4)), rs.uniform(1.5, 4.0, 5))),
    ("uniform ints", lambda s: j_uniform(s, -3, 7),
     lambda rs: (rs.uniform(-3, 7, (3, 4)), rs.uniform(-3, 7, 5))),
    ("uniform defaults", lambda s: j_uniform_defaults(s),
     lambda rs: (rs.uniform(size=6), rs.uniform(-2.0, size=(2, 2)))),
    ("normal", lambda s: j_normal(s, 0.5, 2.0),
     lambda rs: (rs.normal(0.5, 2.0, (3, 4)), rs.normal(0.5, 2.0, 5))),
    ("normal defaults", lambda s: j_normal_defaults(s),
     lambda rs: (rs.normal(size=(2, 5)), rs.normal(3, size=3))),
    ("standard_normal", lambda s: j_standard_normal(s),
     lambda rs: (rs.standard_normal(7), rs.standard_normal(size=(3, 3)))),
    ("exponential", lambda s: j_exponential(s, 2.5),
     lambda rs: (rs.exponential(2.5, (2, 3)), rs.exponential(size=4))),
    ("standard_exponential", lambda s: j_standard_exponential(s),
     lambda rs: (rs.standard_exponential((2, 2)), rs.standard_exponential(size=3))),
    ("randint", lambda s: j_randint(s, -5, 17),
     lambda rs: (rs.randint(-5, 17, (3, 4)), rs.randint(-5, 17, size=5))),
    ("randint wide", lambda s: j_randint(s, -(2**35), 2**40),
     lambda rs: (rs.randint(-(2**35), 2**40, (3, 4)), rs.randint(-(2**35), 2**40, size=5))),
    ("randint high=None", lambda s: j_randint_high_none(s),
     lambda rs: (rs.randint(10, size=6), rs.randint(2**40, size=(2, 2)))),
    ("rand, randn", lambda s: j_rand_randn(s),
     lambda rs: (rs.rand(3, 4), rs.rand(5), rs.randn(2, 3), rs.randn(4))),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_size_forms_draw_numpys_values(form, seed):
    _, jitted, oracle = form
    got = jitted(seed)
    expected = oracle(np.random.RandomState(seed))
    if not isinstance(expected, tuple):
        got, expected = (got,), (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        same(g, e)


def test_size_forms_have_numpys_dtypes_and_shapes():
    assert j_random_tuple(3).dtype == np.float64 and j_random_tuple(3).shape == (3, 4)
    assert j_random_tuple(3).flags.c_contiguous
    a, b = j_randint(3, 0, 5)
    assert a.dtype == np.int64 and a.shape == (3, 4) and b.shape == (5,)
    assert ((a >= 0) & (a < 5)).all()


@njit
def j_mixed_stream(s):
    # Scalar and array draws share one stream, including the cached second normal.
    np.random.seed(s)
    a = np.random.standard_normal(3)
    b = np.random.normal()
    c = np.random.randn(2, 2)
    d = np.random.random()
    e = np.random.normal(1.0, 2.0, size=None)
    f = np.random.randint(0, 100, 3)
    g = np.random.randint(0, 100)
    return a, b, c, d, e, f, g


@pytest.mark.parametrize("seed", SEEDS)
def test_scalar_and_array_draws_share_the_stream(seed):
    rs = np.random.RandomState(seed)
    expected = (rs.standard_normal(3), rs.normal(), rs.randn(2, 2), rs.random_sample(),
                rs.normal(1.0, 2.0, size=None), rs.randint(0, 100, 3), rs.randint(0, 100))
    got = j_mixed_stream(seed)
    for g, e in zip(got, expected):
        same(g, e)
    assert isinstance(got[1], float) and isinstance(got[4], float) and isinstance(got[6], int)


@njit
def j_sized(s, n):
    np.random.seed(s)
    return np.random.random(n), np.random.normal(0.0, 1.0, (n, 2)), np.random.randint(3, 3, n)


def test_empty_sizes_give_empty_arrays():
    # NumPy draws nothing and checks nothing for an empty size (randint(3, 3, 0) is fine).
    a, b, c = j_sized(1, 0)
    assert a.shape == (0,) and b.shape == (0, 2) and c.shape == (0,)
    assert c.dtype == np.int64


@njit
def j_randint_sized(low, high, n):
    return np.random.randint(low, high, n)


@njit
def j_random_sized(n):
    return np.random.random((2, n))


def test_size_forms_raise_numpys_errors():
    with pytest.raises(ValueError, match="low >= high"):
        j_randint_sized(3, 3, 2)
    with pytest.raises(ValueError, match="low >= high"):
        j_randint_sized(5, -5, 1)
    with pytest.raises(ValueError, match="negative dimensions"):
        j_random_sized(-1)


def test_empty_tuple_size_gives_a_0d_array():
    @njit
    def zero_d(s):
        np.random.seed(s)
        return np.random.random(()), np.random.normal(0.0, 1.0, ())

    np.random.seed(7)
    expected = np.random.random(()), np.random.normal(0.0, 1.0, ())
    for g, e in zip(zero_d(7), expected):
        assert isinstance(g, np.ndarray) and g.shape == () and g == e


def test_bad_sizes_are_typing_errors():
    @njit
    def float_size():
        return np.random.normal(0.0, 1.0, 2.5)

    @njit
    def float_dims():
        return np.random.rand(2.0, 3)

    @njit
    def float_randint():
        return np.random.randint(0.5, 3, 4)

    for f in (float_size, float_dims, float_randint):
        with pytest.raises(TypingError):
            f()


# choice


@njit
def j_choice_int(s, n, k):
    np.random.seed(s)
    return np.random.choice(n, k), np.random.choice(n, size=(2, 3)), np.random.choice(n)


@njit
def j_choice_array(s, a, k):
    np.random.seed(s)
    return np.random.choice(a, k), np.random.choice(a, size=(2, 2), replace=True), np.random.choice(a)


@njit
def j_choice_without(s, a, k):
    np.random.seed(s)
    return np.random.choice(a, k, replace=False), np.random.choice(a, (2, 2), False)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 7, 100, 2**33])
def test_choice_from_int_population(seed, n):
    rs = np.random.RandomState(seed)
    expected = (rs.choice(n, 5), rs.choice(n, size=(2, 3)), rs.choice(n))
    got = j_choice_int(seed, n, 5)
    same(got[0], expected[0])
    same(got[1], expected[1])
    assert got[2] == expected[2] and isinstance(got[2], int)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_, np.complex128])
def test_choice_from_array(seed, dtype):
    a = (np.arange(11) * 3 % 7).astype(dtype)
    for pop in (a, a[::2]):
        rs = np.random.RandomState(seed)
        expected = (rs.choice(pop, 6), rs.choice(pop, size=(2, 2), replace=True), rs.choice(pop))
        got = j_choice_array(seed, pop, 6)
        same(got[0], expected[0])
        same(got[1], expected[1])
        assert got[2] == expected[2]


@pytest.mark.parametrize("seed", SEEDS)
def test_choice_without_replacement(seed):
    for pop in (10, 4, np.arange(20.0) ** 2, (np.arange(30) * 7)[::3]):
        rs = np.random.RandomState(seed)
        expected = (rs.choice(pop, 4, replace=False), rs.choice(pop, (2, 2), False))
        got = j_choice_without(seed, pop, 4)
        same(got[0], expected[0])
        same(got[1], expected[1])
        assert len(set(got[0].tolist())) == 4 and len(set(got[1].ravel().tolist())) == 4


@njit
def j_choice_scalar_without(s, n):
    np.random.seed(s)
    return np.random.choice(n, replace=False)


def test_scalar_choice_ignores_replace_as_numba_does():
    # Numba draws one randint(0, n) for a single sample whatever `replace` says (NumPy
    # permutes the whole population for replace=False, so its value differs).
    for seed in SEEDS:
        assert j_choice_scalar_without(seed, 50) == np.random.RandomState(seed).randint(0, 50)


@njit
def j_choice_k(a, k, replace):
    return np.random.choice(a, k, replace)


def test_choice_errors_are_numpys():
    with pytest.raises(ValueError, match="Cannot take a larger sample than population"):
        j_choice_k(3, 4, False)
    with pytest.raises(ValueError, match="Cannot take a larger sample than population"):
        j_choice_k(np.arange(3.0), (2, 2), False)
    with pytest.raises(ValueError, match="a must be greater than 0"):
        j_choice_k(0, 3, True)
    with pytest.raises(ValueError, match="a must be greater than 0"):
        j_choice_int(1, -2, 3)
    with pytest.raises(ValueError, match="cannot be empty"):
        j_choice_k(np.zeros(0), 2, True)
    # No samples from an empty population are fine; the whole population is too.
    assert j_choice_k(0, 0, False).shape == (0,)
    assert j_choice_k(np.zeros(0), 0, True).shape == (0,)
    assert sorted(j_choice_k(6, 6, False).tolist()) == list(range(6))


def test_choice_p_and_bad_populations_are_typing_errors():
    @njit
    def with_p(p):
        return np.random.choice(3, 2, p=p)

    @njit
    def two_d(a):
        return np.random.choice(a, 2)

    @njit
    def float_pop():
        return np.random.choice(2.5, 2)

    with pytest.raises(TypingError, match="unexpected keyword argument 'p'"):
        with_p(np.array([0.2, 0.3, 0.5]))
    with pytest.raises(TypingError):
        two_d(np.zeros((2, 2)))
    with pytest.raises(TypingError):
        float_pop()


# shuffle and permutation


@njit
def j_shuffle(s, a):
    np.random.seed(s)
    np.random.shuffle(a)


def shuffle_cases():
    yield np.arange(10)
    yield np.arange(17.0) * 1.5
    yield np.arange(24).reshape(6, 4)
    yield np.asfortranarray(np.arange(24.0).reshape(6, 4))
    yield np.arange(60, dtype=np.int16).reshape(5, 3, 4)
    yield np.arange(1)
    yield np.arange(0)
    yield np.zeros((4, 0))


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffle_in_place_like_numpy(seed):
    for a in shuffle_cases():
        expected = a.copy()
        np.random.RandomState(seed).shuffle(expected)
        j_shuffle(seed, a)
        same(a, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffle_of_a_strided_view(seed):
    base = np.arange(40).reshape(10, 4)
    view = base[::2, 1:3]
    expected = base.copy()
    np.random.RandomState(seed).shuffle(expected[::2, 1:3])
    j_shuffle(seed, view)
    same(base, expected)


@njit
def j_shuffle_then_draw(s, a):
    np.random.seed(s)
    np.random.shuffle(a)
    return np.random.random()


def test_shuffle_advances_the_stream_like_numpy():
    rs = np.random.RandomState(7)
    a = np.arange(12)
    b = a.copy()
    rs.shuffle(b)
    assert j_shuffle_then_draw(7, a) == rs.random_sample()


def test_shuffle_of_read_only_array_is_typing_error():
    a = np.arange(5)
    a.flags.writeable = False
    with pytest.raises(TypingError):
        j_shuffle(1, a)


@njit
def j_permutation(s, x):
    np.random.seed(s)
    return np.random.permutation(x)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, -3])
def test_permutation_of_int(seed, n):
    same(j_permutation(seed, n), np.random.RandomState(seed).permutation(n))


@pytest.mark.parametrize("seed", SEEDS)
def test_permutation_of_array(seed):
    for a in (np.arange(9.0) ** 2, np.arange(20).reshape(5, 4), np.arange(30)[::3],
              np.asfortranarray(np.arange(12).reshape(4, 3)).astype(np.float32)):
        before = a.copy()
        got = j_permutation(seed, a)
        same(got, np.random.RandomState(seed).permutation(a))
        same(a, before)  # a copy is permuted, never the argument
        assert got.flags.c_contiguous and not np.shares_memory(got, a)


def test_permutation_of_float_is_typing_error():
    with pytest.raises(TypingError):
        j_permutation(1, 2.5)
