"""`map` and `filter` in jitted code, against CPython running the same functions: jitted
functions, inner functions and lambdas that capture nothing, builtins, one to three
iterables of different kinds (lists, arrays, ranges, tuples, strings), consumed by
`list`, comprehensions, `for`, `sum`; `filter(None, ...)`; exceptions raised by the
function reach the caller's `try`."""

import numpy as np
import pytest

from numba_rs import njit


@njit
def square(x):
    return x * x


def jitted_func(xs):
    return list(map(square, xs))


def inner_func(xs):
    def bump(z):
        return z + 1

    return [y for y in map(bump, xs)]


def two_iterables(xs, ys):
    return sum(map(lambda a, b: a * b, xs, ys))


def three_iterables(xs, ys, zs):
    return list(map(lambda a, b, c: a + b * c, xs, ys, zs))


def shortest_wins(xs):
    return list(map(lambda a, b: a - b, xs, range(2)))


def filtered(xs):
    return list(filter(lambda v: v % 3 != 0, xs))


def truthy(xs):
    return list(filter(None, xs))


def builtin_str(xs):
    return list(map(str, xs))


def abs_loop(a):
    s = 0.0
    for v in map(abs, a):
        s += v
    return s


def chained(n):
    return sum(map(lambda v: v * 2, filter(lambda v: v > 2, range(n))))


def over_string(s):
    return list(map(lambda ch: ch + ch, s))


def over_tuple(t):
    return list(map(lambda v: v + 0.5, t))


CASES = [
    (jitted_func, ([1, 2, 3],)),
    (inner_func, ([1, 2, 3],)),
    (two_iterables, ([1, 2, 3], [4, 5, 6])),
    (three_iterables, ([1, 2], [3, 4], [5, 6])),
    (shortest_wins, ([10, 20, 30],)),
    (filtered, (list(range(10)),)),
    (truthy, ([0, 1, 2, 0, 3],)),
    (builtin_str, ([1, 22, 333],)),
    (abs_loop, (np.array([-1.5, 2.0, -3.25]),)),
    (chained, (7,)),
    (over_string, ("abc",)),
    (over_tuple, ((1.0, 2.0, 3.0),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_like_cpython(fn, args):
    assert njit(fn)(*args) == fn(*args)


def raising(xs):
    def check(v):
        if v < 0:
            raise ValueError("negative")
        return v

    try:
        return sum(map(check, xs))
    except ValueError:
        return -1


@pytest.mark.parametrize("xs", [[1, 2, 3], [1, -2, 3]])
def test_an_exception_in_the_function_reaches_the_try(xs):
    assert njit(raising)(xs) == raising(xs)


@pytest.mark.parametrize("seed", range(5))
def test_generated(seed):
    rng = np.random.default_rng(seed)
    ops = ["v + 1", "v * 2", "v - 3", "-v", "v * v"]
    preds = ["v > 0", "v % 2 == 0", "v != 3", "v < 5"]
    body = "xs"
    for _ in range(3):
        if rng.random() < 0.5:
            body = f"map(lambda v: {rng.choice(ops)}, {body})"
        else:
            body = f"filter(lambda v: {rng.choice(preds)}, {body})"
    src = f"def g(xs):\n    return list({body})\n"
    ns = {}
    exec(src, ns)
    xs = [int(x) for x in rng.integers(-5, 10, size=8)]
    assert njit(ns["g"])(xs) == ns["g"](xs), src


def sum_start_keyword(x, start):
    return sum(x, start=start), sum(x, start)


@pytest.mark.parametrize("x, start", [([1, 2, 3], 10), ([1.5, 2.0], 1), ((1, 2, 3j), 0),
                                      ((1, 2.5), 2), (np.ones(5), 2)])
def test_sum_with_start_as_keyword(x, start):
    assert njit(sum_start_keyword)(x, start) == sum_start_keyword(x, start)


@pytest.mark.parametrize("start, kind", [("a", "strings"), (b"123", "bytes"),
                                         (bytearray(b"123"), "bytearray")])
def test_sum_refuses_string_like_starts_as_cpython(start, kind):
    from numba_rs.errors import TypingError

    with pytest.raises(TypeError, match=f"sum\\(\\) can't sum {kind}"):
        sum((1, 2, 3), start=start)
    with pytest.raises(TypingError, match=f"sum\\(\\) can't sum {kind}"):
        njit(sum_start_keyword)((1, 2, 3), start)


def min_of_seq(s):
    return min(s), max(s)


def min_of_values(a, b, c):
    return min(a, b, c), max(a, b, c)


@pytest.mark.parametrize("seq", [[(3, 4), (1, 2), (1, 1)], ["b", "a", "c"], ("x", "yy", "a")])
def test_min_max_of_items_that_are_not_numbers(seq):
    assert njit(min_of_seq)(seq) == min_of_seq(seq)


def test_min_max_of_several_strings_and_tuples():
    assert njit(min_of_values)("b", "a", "c") == min_of_values("b", "a", "c")
    assert njit(min_of_values)((2, 1), (1, 5), (1, 2)) == min_of_values((2, 1), (1, 5), (1, 2))


def test_min_max_errors_as_cpython_and_numba():
    from numba_rs.errors import TypingError

    def empty_tuple():
        return max(())

    # Numba refuses `max(())` when compiling, with CPython's wording.
    with pytest.raises(TypingError, match=r"max\(\) argument is an empty tuple"):
        njit(empty_tuple)()

    def of_list(n):
        return min([(i, -i) for i in range(n)])

    # An empty list is CPython's run-time ValueError.
    assert njit(of_list)(3) == of_list(3)
    with pytest.raises(ValueError, match=r"min\(\) arg is an empty sequence"):
        of_list(0)
    with pytest.raises(ValueError, match=r"min\(\) arg is an empty sequence"):
        njit(of_list)(0)
