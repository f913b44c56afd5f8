"""Built-in functions, math functions and NumPy scalar constructors in nopython mode.

CPython running the same function is the oracle, except where Numba deliberately
differs -- fixed-width integer wrap-around, int/float unification, NumPy scalar casts
-- where the expected value is computed explicitly and the reason is given.
"""

import ctypes
import functools
import math
import struct

import numpy as np
import pytest

from numba_rs import njit

INTS = [0, 1, -1, 2, -7, 13, 100, -100, 12345, 2**40 + 3, -(2**40) - 5]
FLOATS = [0.0, -0.0, 0.5, -2.5, 3.75, 1e10, -1e-3, 123.456]


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def same(got, expected):
    if isinstance(expected, tuple):
        return type(got) is tuple and len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(expected) and got == expected


def check(pyfunc, *args):
    expected = pyfunc(*args)
    got = jitted(pyfunc)(*args)
    assert same(got, expected), (pyfunc.__name__, args, got, expected)


# ------------------------------------------------------ enumerate, zip, range


def enumerate_weighted(n):
    s = 0
    for i, v in enumerate(range(n)):
        s += i * v + 1
    return s


def enumerate_start(n, start):
    s = 0
    for i, v in enumerate(range(3, n), start):
        s += i - v
    return s


def zip_ranges(a, b):
    s = 0
    for x, y in zip(range(a), range(b, 0, -1)):
        s += x * y
    return s


def zip_three(n):
    s = 0
    for x, y, z in zip(range(n), range(1, n + 5), range(-n, 0)):
        s += x + 2 * y + 3 * z
    return s


def zip_enumerate(n):
    s = 0
    for i, (x, y) in enumerate(zip(range(n), range(n, 2 * n))):
        s += i * x - y
    return s


def range_loop(a, b, c):
    total = 0
    count = 0
    for i in range(a, b, c):
        total += i
        count += 1
    return total, count


def range_len(a, b, c):
    return len(range(a, b, c))


def range_len_stop(n):
    return len(range(n))


def countdown(n):
    out = 0
    for i in range(n, -1, -1):
        out = out * 2 + i
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 5, 17, 100])
def test_enumerate(n):
    check(enumerate_weighted, n)
    check(enumerate_start, n, 0)
    check(enumerate_start, n, 10)
    check(enumerate_start, n, -4)


@pytest.mark.parametrize("a,b", [(0, 0), (3, 5), (5, 3), (10, 10), (1, 0), (0, 7)])
def test_zip(a, b):
    check(zip_ranges, a, b)


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_zip_three_and_enumerate_zip(n):
    check(zip_three, n)
    check(zip_enumerate, n)


RANGES = [
    (0, 10, 1),
    (10, 0, -1),
    (10, 0, -3),
    (-5, 5, 2),
    (5, -5, -2),
    (0, 0, -1),
    (3, 10, -1),
    (-1, -10, -4),
    (100, -100, -7),
    (0, 1, 5),
    (-3, 3, 3),
    (10, 10, 1),
]


@pytest.mark.parametrize("a,b,c", RANGES)
def test_range_negative_steps(a, b, c):
    check(range_loop, a, b, c)
    check(range_len, a, b, c)


@pytest.mark.parametrize("n", [-5, 0, 1, 7, 1000])
def test_range_len_single_argument(n):
    check(range_len_stop, n)
    if n >= 0:
        check(countdown, min(n, 40))


# ------------------------------------------------------------------------ print


def print_scalars(a, x, flag):
    print(a)
    print(x)
    print(flag)
    print(a, x, flag)


def print_strings(a):
    print("hello")
    print("value:", a, "done")
    print()


def print_tuples(a, x):
    print((a, x))
    print((a, (x, a)))
    print((a, a, a))


def print_none_and_complex(z):
    print(None)
    print(z)


def run_and_capture(capfd, f, *args):
    capfd.readouterr()
    f(*args)
    return capfd.readouterr().out


@pytest.mark.parametrize(
    "a,x,flag",
    [
        (1, 2.5, True),
        (-3, 0.1, False),
        (2**40, 1e20, True),
        (0, -0.0, False),
        (7, 1e-7, True),
        (1, float("inf"), False),
        (-1, float("-inf"), True),
        (5, 123456789.123, True),
        (5, 1 / 3, False),
        (2**62, 1e16, True),
    ],
)
def test_print_scalars(capfd, a, x, flag):
    expected = run_and_capture(capfd, print_scalars, a, x, flag)
    assert run_and_capture(capfd, jitted(print_scalars), a, x, flag) == expected


@pytest.mark.parametrize("a", [0, -12, 2.5])
def test_print_strings(capfd, a):
    expected = run_and_capture(capfd, print_strings, a)
    assert run_and_capture(capfd, jitted(print_strings), a) == expected


@pytest.mark.parametrize("a,x", [(1, 2.5), (-7, 0.0), (0, -1e-5)])
def test_print_tuples(capfd, a, x):
    expected = run_and_capture(capfd, print_tuples, a, x)
    assert run_and_capture(capfd, jitted(print_tuples), a, x) == expected


@pytest.mark.parametrize("z", [1 + 2j, -0.5j, 3 + 0j])
def test_print_none_and_complex(capfd, z):
    expected = run_and_capture(capfd, print_none_and_complex, z)
    assert run_and_capture(capfd, jitted(print_none_and_complex), z) == expected


# ------------------------------------------------------------------- isinstance


def classify(x):
    if isinstance(x, int):
        return 1
    elif isinstance(x, float):
        return 2
    return 3


def isinstance_tuple(x):
    return isinstance(x, (int, float)), isinstance(x, complex)


# Only ints and floats: Numba's bool type is not an int subclass (isinstance(True, int)
# is False under Numba).
@pytest.mark.parametrize("x", [0, 5, -2**40, 0.0, 2.5, -1e300])
def test_isinstance(x):
    check(classify, x)
    check(isinstance_tuple, x)


@pytest.mark.parametrize("z", [1j, 0j])
def test_isinstance_complex(z):
    check(classify, z)
    check(isinstance_tuple, z)


# -------------------------------------------------------- divmod, pow, round


def do_divmod(a, b):
    return divmod(a, b)


def do_pow(a, b):
    return pow(a, b)


def do_round(x, n):
    return round(x, n)


def do_round1(x):
    return round(x)


@pytest.mark.parametrize("a", [0, 7, -7, 13, -13, 2**40])
@pytest.mark.parametrize("b", [1, -1, 2, -3, 5, 1000])
def test_divmod_ints(a, b):
    check(do_divmod, a, b)


@pytest.mark.parametrize("a", [0.0, 7.5, -7.5, 1e10, -0.25])
@pytest.mark.parametrize("b", [1.0, -2.0, 0.3, -1e-3])
def test_divmod_floats(a, b):
    check(do_divmod, a, b)


@pytest.mark.parametrize("a,b", [(1, 0), (-5, 0), (1.0, 0.0)])
def test_divmod_by_zero(a, b):
    with pytest.raises(ZeroDivisionError):
        jitted(do_divmod)(a, b)


@pytest.mark.parametrize("a", [0, 1, -1, 2, -3, 7, 10])
@pytest.mark.parametrize("b", [0, 1, 2, 3, 5, 10])
def test_pow_ints(a, b):
    check(do_pow, a, b)


@pytest.mark.parametrize("a,b", [(2.0, 0.5), (2, 0.5), (9.0, 2), (1.5, -2), (0.5, 3.0), (-2.0, 3.0), (10.0, -1.0)])
def test_pow_floats(a, b):
    check(do_pow, a, b)


# round(2.675, 2) is left out on purpose: Numba scales, rounds and unscales, giving 2.68
# where CPython's correctly rounded result is 2.67.
@pytest.mark.parametrize(
    "x", [0.125, 0.375, 1.5, 2.5, -2.5, 1234.5678, -0.5, 3.14159, 1e10 + 0.5, 0.1, 123.456, -7.25, 1.005, 2.345]
)
@pytest.mark.parametrize("n", [0, 1, 2, 3, -1, -2])
def test_round_ndigits(x, n):
    check(do_round, x, n)


@pytest.mark.parametrize("x", [0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 2.5001, -3.7, 1e15 + 0.5, 0.0])
def test_round_to_int(x):
    check(do_round1, x)


# ---------------------------------------------------------- min, max, sum


def tuple_min_max_sum(t):
    return min(t), max(t), sum(t)


def min_max_args(a, b, c):
    return min(a, b), max(a, b), min(a, b, c), max(c, b, a)


@pytest.mark.parametrize("t", [(1, 2, 3), (5, -4, 3, 2, 1), (0,), (2**40, -(2**40), 7), (1.5, -2.5, 0.25), (True, False, True)])
def test_min_max_sum_homogeneous(t):
    check(tuple_min_max_sum, t)


@pytest.mark.parametrize("t", [(1, 2.5), (4, 2.5, 3), (-1.0, 2, 0)])
def test_min_max_sum_heterogeneous(t):
    # Numba unifies (int64, float64) to float64, so min/max return a float even when
    # CPython returns the int element.
    got = jitted(tuple_min_max_sum)(t)
    assert same(got, (float(min(t)), float(max(t)), float(sum(t))))


@pytest.mark.parametrize("a,b,c", [(1, 2, 3), (3, 2, 1), (-5, 5, 0), (7, 7, 7), (2.5, -1.5, 0.0)])
def test_min_max_arguments(a, b, c):
    check(min_max_args, a, b, c)


# ------------------------------------------------------------------------ hash


def do_hash(x):
    return hash(x)


@pytest.mark.parametrize(
    "x",
    [0, 1, -1, -2, 2**61 - 1, 2**61, 2**62, -(2**63), 2**63 - 1, 12345678901234, -987654321]
    + [0.0, -0.0, 1.0, 1.5, -2.25, 0.1, 1e300, -1e-300, float("inf"), float("-inf"), 2.0**70]
    + [True, False],
)
def test_hash(x):
    check(do_hash, x)


# ------------------------------------------------------------------------- math

UNARY_MATH = {
    "sqrt": (math.sqrt, [0.0, 0.25, 2.0, 1e10, 7]),
    "exp": (math.exp, [0.0, 1.0, -2.5, 10.0, 3]),
    "log": (math.log, [0.5, 1.0, 2.0, 1e-10, 1e300, 10]),
    "log10": (math.log10, [0.5, 1.0, 1000.0, 1e-7, 100]),
    "log2": (math.log2, [0.5, 1.0, 1024.0, 3.0, 8]),
    "log1p": (math.log1p, [0.0, 1e-12, -0.5, 3.0]),
    "expm1": (math.expm1, [0.0, 1e-12, -0.5, 3.0]),
    "sin": (math.sin, [0.0, 0.5, -3.0, 100.0, 1]),
    "cos": (math.cos, [0.0, 0.5, -3.0, 100.0, 1]),
    "tan": (math.tan, [0.0, 0.5, -1.2, 10.0]),
    "asin": (math.asin, [0.0, 0.5, -1.0, 1.0]),
    "acos": (math.acos, [0.0, 0.5, -1.0, 1.0]),
    "atan": (math.atan, [0.0, 0.5, -100.0, 1e10]),
    "sinh": (math.sinh, [0.0, 0.5, -3.0]),
    "cosh": (math.cosh, [0.0, 0.5, -3.0]),
    "tanh": (math.tanh, [0.0, 0.5, -3.0, 30.0]),
    "asinh": (math.asinh, [0.0, 0.5, -3.0]),
    "acosh": (math.acosh, [1.0, 1.5, 30.0]),
    "atanh": (math.atanh, [0.0, 0.5, -0.9]),
    "fabs": (math.fabs, [0.0, -0.0, -2.5, 3.0, -4]),
    "degrees": (math.degrees, [0.0, math.pi, -1.0]),
    "radians": (math.radians, [0.0, 180.0, -90.0, 45]),
    "erf": (math.erf, [0.0, 0.5, -1.5, 3.0]),
    "erfc": (math.erfc, [0.0, 0.5, -1.5, 3.0]),
    "gamma": (math.gamma, [0.5, 1.0, 4.5, 10.0, -1.5]),
    "lgamma": (math.lgamma, [0.5, 1.0, 4.5, 100.0, -1.5]),
}


def _unary(fname):
    # A distinct function object per math function so each compiles on its own.
    namespace = {"math": math}
    exec(f"def f_{fname}(x):\n    return math.{fname}(x)\n", namespace)
    return namespace[f"f_{fname}"]


UNARY_FUNCS = {name: _unary(name) for name in UNARY_MATH}


@pytest.mark.parametrize(
    "name,x", [(name, x) for name, (_, xs) in UNARY_MATH.items() for x in xs]
)
def test_unary_math(name, x):
    expected = UNARY_MATH[name][0](x)
    got = jitted(UNARY_FUNCS[name])(x)
    assert type(got) is float
    # libm and CPython may differ in the last ulp (gamma, lgamma).
    assert math.isclose(got, expected, rel_tol=1e-13, abs_tol=1e-300), (name, x, got, expected)


def rounding(x):
    return math.floor(x), math.ceil(x), math.trunc(x)


@pytest.mark.parametrize("x", [0.0, 0.5, -0.5, 2.7, -2.7, 1e15 + 0.5, -3.0, 7, -7])
def test_floor_ceil_trunc_return_ints(x):
    check(rounding, x)


def classify_float(x):
    return math.isnan(x), math.isinf(x), math.isfinite(x)


@pytest.mark.parametrize("x", [0.0, -1.5, 1e308, float("inf"), float("-inf"), float("nan"), 3])
def test_isnan_isinf_isfinite(x):
    check(classify_float, x)


def binary_math(x, y):
    return math.atan2(x, y), math.hypot(x, y), math.copysign(x, y), math.pow(abs(x) + 1.0, y)


@pytest.mark.parametrize("x", [0.0, 1.5, -2.0, 3.0])
@pytest.mark.parametrize("y", [0.5, -1.0, 4.0, -0.0])
def test_binary_math(x, y):
    expected = binary_math(x, y)
    got = jitted(binary_math)(x, y)
    for g, e in zip(got, expected):
        assert type(g) is float and math.isclose(g, e, rel_tol=1e-14), (x, y, got, expected)


def do_frexp(x):
    return math.frexp(x)


def do_ldexp(x, i):
    return math.ldexp(x, i)


def frexp_ldexp_round_trip(x):
    m, e = math.frexp(x)
    return math.ldexp(m, e)


@pytest.mark.parametrize("x", [0.0, 1.0, -1.0, 0.5, 3.0, 1e300, -1e-300, 5e-324, float("inf")])
def test_frexp(x):
    check(do_frexp, x)
    check(frexp_ldexp_round_trip, x)


@pytest.mark.parametrize("x,i", [(1.0, 0), (0.75, 3), (-1.5, -2), (1.0, 1023), (1.0, -1074), (1.0, -1080), (3.0, 10)])
def test_ldexp(x, i):
    check(do_ldexp, x, i)


def do_gcd(a, b):
    return math.gcd(a, b)


@pytest.mark.parametrize("a,b", [(12, 18), (0, 0), (0, 5), (-12, 18), (12, -18), (17, 31), (2**40, 2**20 * 3), (1, 1)])
def test_gcd(a, b):
    check(do_gcd, a, b)


# ------------------------------------------------- NumPy scalar constructors


def to_float32(x):
    return np.float32(x)


def to_int8(x):
    return np.int8(x)


def to_uint64(x):
    return np.uint64(x)


def to_bool(x):
    return np.bool_(x)


def to_complex64(z):
    return np.complex64(z)


def f32(x):
    """Round a Python float to float32 and back (what np.float32 does)."""
    return struct.unpack("f", struct.pack("f", x))[0]


@pytest.mark.parametrize("x", [0.0, 0.1, -1.5, 1e10, 3.14159265358979, 1e-40, 7, -3])
def test_float32_constructor(x):
    got = jitted(to_float32)(x)
    # float32 results are boxed as Python floats.
    assert type(got) is float and got == f32(float(x))


@pytest.mark.parametrize("x", [0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 2**40 + 5])
def test_int8_constructor_wraps(x):
    # Numba truncates like a C cast (NumPy 2 would raise OverflowError on a Python
    # int out of range), so the oracle is the two's-complement wrap.
    got = jitted(to_int8)(x)
    assert type(got) is int and got == ctypes.c_int8(x).value


@pytest.mark.parametrize("x", [0, 1, -1, -2, 2**40, 2**63 - 1, -(2**63)])
def test_uint64_constructor_wraps(x):
    got = jitted(to_uint64)(x)
    assert type(got) is int and got == ctypes.c_uint64(x).value


@pytest.mark.parametrize("x", [0, 1, -5, 0.0, 0.5, -0.0, True, False])
def test_bool_constructor(x):
    got = jitted(to_bool)(x)
    assert type(got) is bool and got is bool(x)


@pytest.mark.parametrize("z", [0j, 1 + 2j, 0.1 - 0.2j, 1e10 + 1e-10j])
def test_complex64_constructor(z):
    got = jitted(to_complex64)(z)
    assert type(got) is complex and got == complex(f32(z.real), f32(z.imag))


# --------------------------------------------------- int64 wrap-around

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def wrap(v):
    """Numba's int64 arithmetic wraps modulo 2**64 (two's complement)."""
    return ctypes.c_int64(v).value


def times4(x):
    return x * 4


def add_sub_mul(a, b):
    return a + b, a - b, a * b


def negate(x):
    return -x


def square_loop(x, n):
    for _ in range(n):
        x = x * x + 1
    return x


def shift_left(x, n):
    return x << n


@pytest.mark.parametrize("x", [2**62, 2**61, -(2**62), 2**62 + 1, INT64_MAX, INT64_MIN, 12345])
def test_int64_multiplication_wraps(x):
    # e.g. 2**62 * 4 == 2**64 wraps to 0.
    assert jitted(times4)(x) == wrap(times4(x))


@pytest.mark.parametrize(
    "a,b", [(INT64_MAX, 1), (INT64_MIN, 1), (INT64_MIN, -1), (INT64_MAX, INT64_MAX), (2**32, 2**32), (-(2**40), 2**30), (5, 7)]
)
def test_int64_add_sub_mul_wrap(a, b):
    assert jitted(add_sub_mul)(a, b) == tuple(wrap(v) for v in add_sub_mul(a, b))


@pytest.mark.parametrize("x", [INT64_MIN, INT64_MAX, 0, -5])
def test_int64_negation_wraps(x):
    assert jitted(negate)(x) == wrap(-x)


@pytest.mark.parametrize("x,n", [(3, 1), (3, 5), (3, 8), (-7, 6), (2, 10)])
def test_int64_repeated_squaring_wraps(x, n):
    expected = x
    for _ in range(n):
        expected = wrap(expected * expected + 1)
    assert jitted(square_loop)(x, n) == expected


@pytest.mark.parametrize("x,n", [(1, 0), (1, 62), (1, 63), (3, 62), (-1, 63), (12345, 40)])
def test_int64_shift_wraps(x, n):
    assert jitted(shift_left)(x, n) == wrap(x << n)


def zip_of_nothing():
    r = 0
    for _ in zip():
        r += 1
    return r


def test_zip_of_nothing_is_empty():
    assert njit(zip_of_nothing)() == zip_of_nothing()


def min_of_complex(a, b):
    return min(a, b)


def max_of_complex_tuple(t):
    return max(t)


def test_min_max_of_complex_is_a_typing_error():
    # Complex numbers are not ordered: CPython raises TypeError, Numba a TypingError
    # (this was an internal compiler error).
    from numba_rs.errors import TypingError

    with pytest.raises(TypeError):
        min_of_complex(1j, 2j)
    with pytest.raises(TypingError, match="min"):
        njit(min_of_complex)(1j, 2j)
    with pytest.raises(TypingError, match="max"):
        njit(max_of_complex_tuple)((1j, 2.0 + 0j))
