"""Star arguments: `f(*t)`, `f(x, *t, *u)` and `(*t, x)` where `t` is a tuple (spread into
positional arguments once typing knows its length, as Numba does), and `*args` parameters
of jitted functions, inner functions and lambdas called from jitted code. CPython's result
for the same function is the oracle."""

from collections import namedtuple

import numpy as np
import pytest

import numba_rs
from numba_rs.errors import TypingError

Point = namedtuple("Point", "x y")


@numba_rs.njit
def weigh(a, b=10, c=100):
    return a + 2 * b + 3 * c


@numba_rs.njit
def count_rest(a, *rest):
    return a * 10 + len(rest)


@numba_rs.njit
def total(*xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def star_all(t):
    return weigh(*t)


def star_after(x, t):
    return weigh(x, *t)


def star_twice(t, u):
    return weigh(*t, *u)


def star_builtin(t):
    return max(*t) - min(*t)


def star_method(a, shape):
    return a.reshape(*shape).sum(axis=0)


def star_namedtuple(t):
    return Point(*t)


def star_lambda(t):
    h = lambda x, y: x * y - y
    return h(*t)


def star_numpy(pair):
    return np.add(*pair)


def build_tuple(shape, n):
    return (*shape, n)


def zeros_of(shape):
    return np.zeros((*shape, 2)).shape


def rest_params(x):
    return count_rest(x) + count_rest(x, 1) + count_rest(x, 1, 2.5, x)


def star_into_rest(t):
    return count_rest(*t) + total(*t)


def inner_star_param(n):
    def inner(first, *xs):
        return first + len(xs)

    return inner(n) + inner(n, n, n) + inner(*(n, 1))


def lambda_star_param(t):
    g = lambda *xs: len(xs)
    return g(*t) + g() + g(1, 2)


CASES = [
    (star_all, ((1,),)),
    (star_all, ((1, 2),)),
    (star_all, ((1, 2.5, 3),)),
    (star_after, (1, (2, 3))),
    (star_after, (1.5, ())),
    (star_twice, ((1,), (2, 3))),
    (star_builtin, ((3, 9, 2, 7),)),
    (star_namedtuple, ((1, 2.5),)),
    (star_lambda, ((3, 4),)),
    (build_tuple, ((1, 2), 3)),
    (build_tuple, ((), 3)),
    (zeros_of, ((3, 4),)),
    (rest_params, (2,)),
    (star_into_rest, ((1, 2, 3),)),
    (inner_star_param, (4,)),
    (lambda_star_param, ((1, 2, 3),)),
]


@pytest.mark.parametrize("func, args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_star_arguments(func, args):
    want = func(*args)
    got = numba_rs.njit(func)(*args)
    assert got == want
    assert type(got) is type(want)


def test_star_arrays():
    a = np.arange(6.0)
    np.testing.assert_array_equal(numba_rs.njit(star_method)(a, (2, 3)), star_method(a, (2, 3)))
    pair = (np.ones(3), np.arange(3.0))
    np.testing.assert_array_equal(numba_rs.njit(star_numpy)(pair), star_numpy(pair))

    @numba_rs.njit
    def first_of(*arrays):
        return arrays[0] + arrays[-1]

    @numba_rs.njit
    def spread(t):
        return first_of(*t)

    t = (np.ones(4), np.arange(4.0), np.full(4, 2.0))
    np.testing.assert_array_equal(spread(t), t[0] + t[-1])


def test_star_argument_errors():
    with pytest.raises(TypingError, match="star argument must be a tuple"):
        numba_rs.njit(lambda a: weigh(*a))(np.ones(3))
    # CPython's TypeError for the same call is a TypingError at compile time.
    with pytest.raises(TypingError, match="takes 3 positional arguments but 4"):
        numba_rs.njit(star_all)((1, 2, 3, 4))


def _kwonly_callee(x, *args, a, b=2):
    return x + len(args) * 100 + a * 10 + b


def _kwonly_plain(x, y, z=1, *, a=5):
    return x * 1000 + y * 100 + z * 10 + a


def test_keyword_only_parameters_between_jitted_functions():
    """Keyword-only parameters (after `*` or `*args`, with and without defaults) bound
    in a call from compiled code as CPython binds them."""
    njit = numba_rs.njit
    callee = njit(_kwonly_callee)
    plain = njit(_kwonly_plain)

    def caller(x):
        return (callee(x, 1, 2, a=7), callee(x, a=1, b=5), callee(x, b=3, a=4),
                plain(x, 2), plain(x, 2, 3, a=9), plain(y=4, x=x, a=6))

    def py_caller(x):
        return (_kwonly_callee(x, 1, 2, a=7), _kwonly_callee(x, a=1, b=5),
                _kwonly_callee(x, b=3, a=4), _kwonly_plain(x, 2),
                _kwonly_plain(x, 2, 3, a=9), _kwonly_plain(y=4, x=x, a=6))

    assert njit(caller)(3) == py_caller(3)

    def missing(x):
        return callee(x)

    with pytest.raises(TypingError, match="missing a required keyword-only argument: 'a'"):
        numba_rs.njit(missing)(1)
