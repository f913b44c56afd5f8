"""Functions in nopython mode: inner functions, lambdas, closures, first-class jitted
functions, recursion and frozen globals -- checked against CPython."""

import enum
import functools

import pytest

from numba_rs import njit


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def check(pyfunc, *args):
    expected = pyfunc(*args)
    got = jitted(pyfunc)(*args)
    assert type(got) is type(expected) and got == expected, (pyfunc.__name__, args, got, expected)


INTS = [0, 1, -1, 5, -7, 100, 2**40]


# ------------------------------------------------ inner functions and lambdas


def inner_function(x):
    def double(y):
        return y * 2

    return double(x) + double(3)


def inner_closure(x, k):
    offset = k * 10

    def add_offset(y):
        return y + offset + x

    return add_offset(1) + add_offset(k)


def lambda_local(x):
    sq = lambda y: y * y  # noqa: E731
    return sq(x) + sq(x + 1)


def lambda_closure(x, k):
    scale = lambda y: y * k + x  # noqa: E731
    return scale(2) - scale(-1)


def closure_in_loop(n, k):
    def step(acc, i):
        return acc + i * k

    acc = 0
    for i in range(n):
        acc = step(acc, i)
    return acc


def nested_inner(x):
    def outer(y):
        def inner(z):
            return z + x

        return inner(y) * 2

    return outer(x + 1)


def inner_multiple_returns(x):
    def sign(y):
        if y > 0:
            return 1
        elif y < 0:
            return -1
        return 0

    return sign(x), sign(-x), sign(0)


def closure_float_int(x, f):
    def mix(y):
        return y * f + x

    return mix(2), mix(0.5)


@pytest.mark.parametrize("x", INTS)
def test_inner_function(x):
    check(inner_function, x)
    check(nested_inner, x)
    check(inner_multiple_returns, x)


@pytest.mark.parametrize("x", INTS)
@pytest.mark.parametrize("k", [0, 3, -2])
def test_closures_read_enclosing_variables(x, k):
    check(inner_closure, x, k)
    check(lambda_closure, x, k)


@pytest.mark.parametrize("x", [0, 1, -1, 5, -7, 100, 2**30, 0.5, -2.25])  # no int64 overflow
def test_lambda(x):
    check(lambda_local, x)


@pytest.mark.parametrize("n,k", [(0, 1), (5, 2), (10, -3), (100, 7)])
def test_closure_called_in_loop(n, k):
    check(closure_in_loop, n, k)


@pytest.mark.parametrize("x,f", [(1, 2.5), (0, 0.0), (-3, -1.5)])
def test_closure_mixed_types(x, f):
    check(closure_float_int, x, f)


def inner_defaults_and_keywords(x, k):
    def f(a, b=3, c=4):
        return a + b * c

    g = lambda a, b=k: a - b  # noqa: E731 (a default from a variable)
    return f(x), f(x, 1), f(x, c=1), f(c=2, a=x), f(x, c=k, b=2), g(x), g(x, 1), g(b=x, a=k)


@pytest.mark.parametrize("x,k", [(5, 2), (-3, 7), (0, 0)])
def test_inner_function_defaults_and_keywords(x, k):
    # Bound as Python binds them (Numba 0.68.1 gets f(x, c=1) wrong: 17 + 9 + 16).
    check(inner_defaults_and_keywords, x, k)


def inner_too_many(x):
    g = lambda a: a  # noqa: E731
    return g(x, 1)


def inner_missing(x):
    def f(a, b, c=1):
        return a + b + c

    return f(c=x)


def inner_unknown_keyword(x):
    def f(a):
        return a

    return f(x, z=1)


@pytest.mark.parametrize(
    "pyfunc, message",
    [
        (inner_too_many, "<lambda>() takes 1 positional argument but 2 were given"),
        (inner_missing, "f() missing 2 required positional arguments: 'a' and 'b'"),
        (inner_unknown_keyword, "f() got an unexpected keyword argument 'z'"),
    ],
)
def test_inner_function_bad_call_is_a_typing_error(pyfunc, message):
    from numba_rs.errors import TypingError

    with pytest.raises(TypeError) as py:
        pyfunc(1)
    assert message in str(py.value)  # CPython's own words
    with pytest.raises(TypingError) as e:
        njit(pyfunc)(1)
    assert message in str(e.value)
    import inspect

    # The call's line: each function's last.
    line = pyfunc.__code__.co_firstlineno + len(inspect.getsource(pyfunc).splitlines()) - 1
    assert f"line {line}:" in str(e.value)


# ------------------------------------------ jitted functions as arguments


@njit
def jit_square(x):
    return x * x


@njit
def jit_negate(x):
    return -x


@njit
def jit_add(a, b):
    return a + b


def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def apply_binary(f, a, b):
    return f(a, b) + f(b, a)


def compose(f, g, x):
    return f(g(x))


def fold(f, n):
    acc = 0
    for i in range(n):
        acc = f(acc, i)
    return acc


@pytest.mark.parametrize("x", INTS[:6] + [1.5, -0.25])
@pytest.mark.parametrize("fn", [jit_square, jit_negate], ids=["square", "negate"])
def test_jitted_function_argument(fn, x):
    py = fn.py_func
    assert jitted(apply)(fn, x) == py(x)
    assert jitted(apply_twice)(fn, x) == py(py(x))


@pytest.mark.parametrize("x", [0, 3, -4, 2.5])
def test_compose_jitted_functions(x):
    assert jitted(compose)(jit_square, jit_negate, x) == (-x) * (-x)
    assert jitted(compose)(jit_negate, jit_square, x) == -(x * x)


@pytest.mark.parametrize("a,b", [(1, 2), (-5, 5), (1.5, 2.5)])
def test_binary_jitted_function_argument(a, b):
    assert jitted(apply_binary)(jit_add, a, b) == 2 * (a + b)


@pytest.mark.parametrize("n", [0, 1, 10, 100])
def test_fold_with_jitted_function(n):
    assert jitted(fold)(jit_add, n) == sum(range(n))


# ------------------------------------------------------------------- recursion


def fib_py(n):
    if n < 2:
        return n
    return fib_py(n - 1) + fib_py(n - 2)


@njit
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@njit("int64(int64)")
def fib_sig(n):
    if n < 2:
        return n
    return fib_sig(n - 1) + fib_sig(n - 2)


@njit
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@njit
def gcd_rec(a, b):
    if b == 0:
        return a
    return gcd_rec(b, a % b)


@njit
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


# Defined after is_even: resolved when is_even is first compiled.
@njit
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 20, 25])
def test_self_recursion(n):
    assert fib(n) == fib_py(n)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 20, 25])
def test_self_recursion_with_signature(n):
    got = fib_sig(n)
    assert type(got) is int and got == fib_py(n)
    assert len(fib_sig.signatures) == 1


@pytest.mark.parametrize("n", [0, 1, 5, 20])
def test_factorial_recursion(n):
    import math

    assert fact(n) == math.factorial(n)


@pytest.mark.parametrize("a,b", [(12, 18), (17, 5), (100, 75), (7, 0)])
def test_recursion_two_arguments(a, b):
    import math

    assert gcd_rec(a, b) == math.gcd(a, b)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 10, 51, 100])
def test_mutual_recursion(n):
    assert is_even(n) is (n % 2 == 0)
    assert is_odd(n) is (n % 2 == 1)


# --------------------------------------------------------- frozen globals

LIMIT = 42
RATE = 0.125
WEIGHTS = (1, 2, 3, 5)
MIXED = (7, 2.5)
GREETING = "hello"
NEGATIVE_BIG = -(2**40)


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Shape(enum.IntEnum):
    CIRCLE = 1
    SQUARE = 2
    TRIANGLE = 3


def uses_int_float_globals(x):
    if x > LIMIT:
        return x * RATE + NEGATIVE_BIG
    return x * 1.0


def uses_tuple_global(x):
    s = 0
    for w in WEIGHTS:
        s += w * x
    return s + WEIGHTS[0] + len(WEIGHTS)


def uses_mixed_tuple_global(x):
    a, b = MIXED
    return a * x + b


def uses_string_global(s):
    return s == GREETING, len(GREETING)


def returns_string_global():
    return GREETING


def color_code(c):
    if c == Color.RED:
        return 10
    elif c == Color.GREEN:
        return 20
    return 30


def color_is(c, d):
    return c == d, c != d


def shape_sides(s):
    if s == Shape.CIRCLE:
        return 0
    if s == Shape.SQUARE:
        return 4
    return 3


def shape_arith(s):
    return s + Shape.SQUARE, s == 2, s < Shape.TRIANGLE


def pick_color(x):
    if x > 0:
        return Color.BLUE
    return Color.RED


@pytest.mark.parametrize("x", [0, 42, 43, 100, -5, 2**40])
def test_int_and_float_globals(x):
    check(uses_int_float_globals, x)


@pytest.mark.parametrize("x", [0, 1, -3, 2**20])
def test_tuple_globals(x):
    check(uses_tuple_global, x)
    check(uses_mixed_tuple_global, x)


@pytest.mark.parametrize("s", ["hello", "hell", "", "hello!", "HELLO"])
def test_string_global(s):
    check(uses_string_global, s)


def test_string_global_returned():
    check(returns_string_global)


@pytest.mark.parametrize("c", list(Color))
def test_enum_members(c):
    check(color_code, c)
    for d in Color:
        check(color_is, c, d)


@pytest.mark.parametrize("s", list(Shape))
def test_int_enum_members(s):
    check(shape_sides, s)
    check(shape_arith, s)


@pytest.mark.parametrize("x", [-1, 1])
def test_enum_member_returned(x):
    got = jitted(pick_color)(x)
    assert got is pick_color(x)


FROZEN = 5


def reads_frozen(x):
    return x + FROZEN


def test_globals_are_frozen_at_compile_time():
    global FROZEN
    f = njit(reads_frozen)
    assert f(1) == 6
    try:
        FROZEN = 100
        # Numba freezes global values into the compiled code: no recompilation.
        assert f(1) == 6
        assert reads_frozen(1) == 101
        # A fresh dispatcher sees the new value.
        assert njit(reads_frozen)(1) == 101
    finally:
        FROZEN = 5


# ------------------------------------- operator module and jitted closures' cells

import operator  # noqa: E402
from operator import mul  # noqa: E402


def operator_functions(a, b):
    return (
        operator.add(a, b),
        mul(a, b),
        operator.sub(a, b),
        operator.lt(a, b),
        operator.eq(a, b),
        operator.neg(a),
        operator.not_(a),
        operator.contains((1, 2, 3), a),
    )


@pytest.mark.parametrize("a,b", [(2, 3), (-1, -1), (0, 7), (3, 2)])
def test_operator_module_functions(a, b):
    check(operator_functions, a, b)


def make_binary(op, k):
    def apply_op(a, b):
        return op(a, b) + k

    return apply_op


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.floordiv], ids=str)
@pytest.mark.parametrize("k", [0, 5])
def test_jitted_closure_reads_its_cells(op, k):
    pyfunc = make_binary(op, k)
    assert njit(pyfunc)(17, 5) == pyfunc(17, 5)


# ---------------------------------- keyword and default arguments between jitted functions


@njit
def with_defaults(a, b=10, c=None):
    if c is None:
        return a + b
    return a + b + c


def calls_with_keywords(x):
    return (
        with_defaults(x),
        with_defaults(x, c=1),
        with_defaults(b=2, a=x),
        with_defaults(x, 3, 4),
        with_defaults(x, c=x, b=-x),
    )


def calls_with_keywords_py(x):
    f = with_defaults.py_func
    return f(x), f(x, c=1), f(b=2, a=x), f(x, 3, 4), f(x, c=x, b=-x)


@pytest.mark.parametrize("x", [0, 5, -3, 2**40])
def test_keyword_and_default_arguments_between_jitted_functions(x):
    assert jitted(calls_with_keywords)(x) == calls_with_keywords_py(x)


def make_recursive_inner():
    @njit("int64(int64)")
    def inner_fib(n):
        if n < 2:
            return n
        return inner_fib(n - 1) + inner_fib(n=n - 2)

    return inner_fib


@pytest.mark.parametrize("n", [0, 1, 10, 20])
def test_recursive_inner_function_with_signature(n):
    assert make_recursive_inner()(n) == fib_py(n)


# --------------------------- inner functions and lambdas passed to other jitted functions


def passes_lambdas(x):
    return jit_apply2(lambda y: y * 2 + 1, x) + jit_apply2(lambda y: y - 3, x)


def passes_inner_function(x):
    def sq(v):
        return v * v

    return jit_apply2(sq, x) + jit_apply2(sq, x + 1)


@njit
def jit_apply2(f, x):
    return f(x)


@pytest.mark.parametrize("x", [0, 3, -4, 10])
def test_lambdas_and_inner_functions_passed_to_jitted_functions(x):
    # The oracle applies the lambdas in Python.
    assert njit(passes_lambdas)(x) == (x * 2 + 1) + (x - 3)
    assert njit(passes_inner_function)(x) == x * x + (x + 1) * (x + 1)


# ----------------------------------------- semantic constants from the argument types


def length_branches(t):
    if len(t) == 2:
        return t[0] + t[1]
    return t[0]


@pytest.mark.parametrize("t", [(1, 2), (5,), (3, 4, 5), (1.5, 2)])
def test_len_of_a_tuple_argument_prunes_branches(t):
    # `t[1]` does not exist for a 1-tuple: only pruning by len(t) lets this compile.
    check(length_branches, t)


# ------------------------------------------------------------------ functools.reduce

from functools import reduce  # noqa: E402

import numpy as np  # noqa: E402

_add = njit(lambda x, y: x + y)


def reduce_min_lambda(a):
    return reduce(lambda x, y: min(x, y), a, 10)


def reduce_range_no_initial():
    return reduce(lambda x, y: x + y, range(-10, 10))


def reduce_inner_function():
    def func(x, y):
        return x + y

    return reduce(func, range(-10, 10), 100)


def reduce_jitted_function():
    return reduce(_add, range(-10, 10))


def reduce_module_attribute(a):
    return functools.reduce(lambda x, y: x * y, a, 1.0)


def reduce_masked(a):
    return reduce(lambda x, y: max(x, y), a[a > 0.5], 0.0)


def reduce_tuple(t):
    return reduce(lambda x, y: x + y, t)


def reduce_in_loop(a):
    s = 0.0
    for i in range(3):
        s += reduce(lambda x, y: x + y * i, a, 0.0)
    return s


_RNG = np.random.default_rng(3)


@pytest.mark.parametrize(
    "f, args",
    [
        (reduce_min_lambda, (_RNG.random(211),)),
        (reduce_min_lambda, (_RNG.integers(0, 10, 211).astype(np.int32),)),
        (reduce_range_no_initial, ()),
        (reduce_inner_function, ()),
        (reduce_jitted_function, ()),
        (reduce_module_attribute, (_RNG.random(12),)),
        (reduce_masked, (_RNG.random(100),)),
        (reduce_tuple, ((1, 2, 3),)),
        (reduce_tuple, ((1.5,),)),
        (reduce_in_loop, (_RNG.random(50),)),
    ],
)
def test_functools_reduce(f, args):
    """`functools.reduce` with a lambda, an inner function or a jitted function, with and
    without an initial value: CPython's result (same order of operations)."""
    assert njit(f)(*args) == f(*args)


def test_functools_reduce_errors():
    def empty(a):
        return reduce(lambda x, y: x + y, a)

    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        njit(empty)(np.zeros(0))

    def one_argument(a):
        return reduce(lambda x, y: x + y)

    from numba_rs.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="invalid reduce call, two arguments are required"):
        njit(one_argument)(np.zeros(3))
