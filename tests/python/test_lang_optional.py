"""None, default arguments and Optional results, checked against CPython.

An argument omitted or passed as None types as ``none``/``omitted`` and the ``is None``
branch is pruned; a function returning None on some paths types its result as
Optional(T), which is boxed back to Python as None or the value.
"""

import functools
import math

import numpy as np
import pytest

from numba_rs import njit

INTS = [0, 1, -1, 7, -100, 2**40]
FLOATS = [0.0, 1.5, -2.25, 1e10]


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def check(pyfunc, *args, **kwargs):
    expected = pyfunc(*args, **kwargs)
    got = jitted(pyfunc)(*args, **kwargs)
    assert type(got) is type(expected) and got == expected, (pyfunc.__name__, args, kwargs, got, expected)


# ------------------------------------------------------------- default arguments


def add_maybe(a, b=None):
    if b is None:
        return a
    return a + b


def scaled(x, factor=2):
    return x * factor


def offset(x, dx=0.5, times=1):
    for _ in range(times):
        x = x + dx
    return x


def is_none_flags(a, b=None):
    return a is None, b is None, a is not None, b is not None


@pytest.mark.parametrize("a", INTS + FLOATS)
def test_default_none_omitted(a):
    check(add_maybe, a)


@pytest.mark.parametrize("a", INTS + FLOATS)
def test_default_none_passed_explicitly(a):
    check(add_maybe, a, None)


@pytest.mark.parametrize("a,b", [(1, 2), (-5, 5), (1.5, 2), (3, 0.25), (2**40, -1)])
def test_default_none_overridden(a, b):
    check(add_maybe, a, b)
    check(add_maybe, a, b=b)


@pytest.mark.parametrize("x", INTS + FLOATS)
def test_non_none_defaults(x):
    check(scaled, x)
    check(scaled, x, 3)
    check(scaled, x, factor=-1)
    check(offset, x)
    check(offset, x, 2)
    check(offset, x, 1.0, 3)
    check(offset, x, times=4)


@pytest.mark.parametrize("a", [None, 1, 2.5])
def test_is_none_flags(a):
    check(is_none_flags, a)
    check(is_none_flags, a, None)
    check(is_none_flags, a, 3)


# ------------------------------------------------------------- None arguments


def none_or_default(x):
    if x is None:
        return -1
    return x


def count_nones(a, b, c):
    n = 0
    if a is None:
        n += 1
    if b is None:
        n += 1
    if c is None:
        n += 1
    return n


@pytest.mark.parametrize("x", [None, 0, 5, -3])
def test_none_argument(x):
    check(none_or_default, x)


@pytest.mark.parametrize(
    "args", [(None, None, None), (1, None, None), (None, 2.5, None), (None, None, 3), (1, 2.0, 3)]
)
def test_count_nones(args):
    check(count_nones, *args)


# ------------------------------------------------------------ Optional results


def positive_or_none(x):
    if x > 0:
        return x
    return None


def find_first_multiple(n, k):
    for i in range(1, n):
        if i % k == 0:
            return i
    return None


def safe_sqrt(x):
    if x < 0:
        return None
    return math.sqrt(x)


def implicit_none(x):
    if x > 10:
        return x * 2


def use_optional(x):
    r = positive_or_none(x)
    if r is None:
        return 0
    return r + 1


def use_optional_is_not(x):
    r = safe_sqrt(x)
    if r is not None:
        return r
    return -1.0


@pytest.mark.parametrize("x", INTS + FLOATS)
def test_optional_result(x):
    check(positive_or_none, x)


@pytest.mark.parametrize("n,k", [(10, 3), (10, 11), (1, 1), (100, 7), (5, 5)])
def test_optional_from_loop(n, k):
    check(find_first_multiple, n, k)


@pytest.mark.parametrize("x", [-1.0, 0.0, 2.0, 16.0, -1e-9])
def test_optional_float(x):
    check(safe_sqrt, x)


@pytest.mark.parametrize("x", [0, 10, 11, -50, 2**40])
def test_implicit_none_fallthrough(x):
    check(implicit_none, x)


jit_positive_or_none = njit(positive_or_none)
jit_safe_sqrt = njit(safe_sqrt)


def calls_jitted_optional(x):
    r = jit_positive_or_none(x)
    if r is None:
        return 0
    return r + 1


def calls_jitted_optional_is_not(x):
    r = jit_safe_sqrt(x)
    if r is not None:
        return r
    return -1.0


@pytest.mark.parametrize("x", [-3, 0, 1, 42])
def test_optional_consumed_by_jitted_caller(x):
    expected = use_optional(x)
    assert jitted(calls_jitted_optional)(x) == expected
    assert type(jitted(calls_jitted_optional)(x)) is int


@pytest.mark.parametrize("x", [-4.0, 0.0, 9.0])
def test_optional_is_not_none_in_jitted_caller(x):
    assert jitted(calls_jitted_optional_is_not)(x) == use_optional_is_not(x)


# ------------------------------------------------------------- always None


def returns_nothing(x):
    x = x + 1


def returns_none_explicitly(x):
    if x > 0:
        return None
    return None


def bare_return(x):
    for i in range(x):
        if i == 3:
            return
    return


@pytest.mark.parametrize("x", [0, 1, -5, 2.5])
def test_always_none(x):
    assert jitted(returns_nothing)(x) is None
    assert jitted(returns_none_explicitly)(x) is None


@pytest.mark.parametrize("x", [0, 2, 10])
def test_bare_return(x):
    assert jitted(bare_return)(x) is None


def maybe_array(flag, a):
    r = None
    if flag:
        r = a + 1
    return r


def test_optional_array_made_in_the_function_holds_its_reference():
    # The optional variable owns a reference to the array it was given (an NRT
    # allocation released at its del, or handed to the caller on return).
    f = njit(maybe_array)
    a = np.ones(3)
    np.testing.assert_array_equal(f(True, a), maybe_array(True, a))
    assert f(False, a) is None
