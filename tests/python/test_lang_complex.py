"""complex128 in nopython mode, checked against CPython running the same functions.

Arithmetic, comparison and attribute access must agree exactly; cmath results are
compared with a tight relative tolerance on the real and imaginary parts.
"""

import cmath
import functools
import itertools
import math

import pytest

from numba_rs import njit

COMPLEXES = [0j, 1 + 0j, -1j, 1 + 2j, -3.5 + 0.25j, 2.5 - 4j, 1e10 + 1e-10j, -0.0 - 0.0j, 0.5 + 0.5j]
REALS = [0, 1, -2, 7, 0.5, -3.25, 1e3]


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def same(got, expected):
    if isinstance(expected, tuple):
        return len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    return type(got) is type(expected) and got == expected


def close(got, expected, rel=1e-12, abs_tol=1e-14):
    if isinstance(expected, tuple):
        return len(got) == len(expected) and all(close(g, e, rel, abs_tol) for g, e in zip(got, expected))
    if isinstance(expected, bool):
        return got is expected
    if isinstance(expected, complex):
        return type(got) is complex and close(got.real, expected.real, rel, abs_tol) and close(
            got.imag, expected.imag, rel, abs_tol
        )
    assert isinstance(got, float), got
    if math.isnan(expected):
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=rel, abs_tol=abs_tol)


def check(pyfunc, *args):
    expected = pyfunc(*args)
    got = jitted(pyfunc)(*args)
    assert same(got, expected), (pyfunc.__name__, args, got, expected)


def check_close(pyfunc, *args):
    expected = pyfunc(*args)
    got = jitted(pyfunc)(*args)
    assert close(got, expected), (pyfunc.__name__, args, got, expected)


# -------------------------------------------------------------------- arithmetic


def identity(z):
    return z


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def neg_pos(z):
    return -z, +z


def poly(z):
    return z * z * z - 2 * z + 1.5


def accumulate(z, n):
    acc = 0j
    for i in range(n):
        acc = acc * z + i
    return acc


@pytest.mark.parametrize("z", COMPLEXES)
def test_round_trip(z):
    check(identity, z)
    check(neg_pos, z)


@pytest.mark.parametrize("a,b", list(itertools.product(COMPLEXES, COMPLEXES)))
def test_complex_complex_arithmetic(a, b):
    check(add, a, b)
    check(sub, a, b)
    check(mul, a, b)
    if b != 0:
        check_close(div, a, b)


@pytest.mark.parametrize("z,x", list(itertools.product(COMPLEXES, REALS)))
def test_complex_real_arithmetic(z, x):
    for a, b in ((z, x), (x, z)):
        check(add, a, b)
        check(sub, a, b)
        check(mul, a, b)
        if b != 0:
            check_close(div, a, b)


@pytest.mark.parametrize("a", [1 + 1j, 0j, 3])
def test_complex_division_by_zero_raises(a):
    with pytest.raises(ZeroDivisionError):
        jitted(div)(a, 0j)
    with pytest.raises(ZeroDivisionError):
        jitted(div)(1j, 0)


@pytest.mark.parametrize("z", COMPLEXES)
def test_polynomial_and_loop(z):
    check_close(poly, z)
    check_close(accumulate, z, 5)


# ------------------------------------------------------------------- comparison


def eq_ne(a, b):
    return a == b, a != b


@pytest.mark.parametrize("a,b", list(itertools.product(COMPLEXES[:6], COMPLEXES[:6])))
def test_equality(a, b):
    check(eq_ne, a, b)


@pytest.mark.parametrize("z,x", [(1 + 0j, 1), (1 + 0j, 1.0), (1 + 1e-300j, 1.0), (2j, 0), (0j, 0.0), (-0.0 + 0j, 0)])
def test_equality_with_reals(z, x):
    check(eq_ne, z, x)
    check(eq_ne, x, z)


# ------------------------------------------------ abs, attributes, constructor


def absolute(z):
    return abs(z)


def parts(z):
    return z.real, z.imag


def conj(z):
    return z.conjugate()


def build(a, b):
    return complex(a, b)


def build_one(a):
    return complex(a)


def swap_parts(z):
    return complex(z.imag, z.real)


@pytest.mark.parametrize("z", COMPLEXES + [3 + 4j, -5 - 12j, 1e200 + 1e200j])
def test_abs(z):
    check_close(absolute, z)


@pytest.mark.parametrize("z", COMPLEXES)
def test_real_imag_conjugate(z):
    check(parts, z)
    check(conj, z)
    check(swap_parts, z)


@pytest.mark.parametrize("a,b", [(1.0, 2.0), (0.0, -0.0), (-3.5, 1e10), (1, 2), (0, 5), (2, 0.5)])
def test_constructor(a, b):
    check(build, a, b)
    check(build_one, a)


# ------------------------------------------------------------------------ cmath


def c_sqrt(z):
    return cmath.sqrt(z)


def c_exp(z):
    return cmath.exp(z)


def c_log(z):
    return cmath.log(z)


def c_log10(z):
    return cmath.log10(z)


def c_phase(z):
    return cmath.phase(z)


def c_polar(z):
    return cmath.polar(z)


def c_rect(r, phi):
    return cmath.rect(r, phi)


def c_sin(z):
    return cmath.sin(z)


def c_cos(z):
    return cmath.cos(z)


def c_tan(z):
    return cmath.tan(z)


def c_classify(z):
    return cmath.isnan(z), cmath.isinf(z), cmath.isfinite(z)


def polar_round_trip(z):
    r, phi = cmath.polar(z)
    return cmath.rect(r, phi)


CMATH_INPUTS = [1 + 0j, -1 + 0j, 1j, -1j, 1 + 2j, -3.5 + 0.25j, 2.5 - 4j, 0.5 + 0.5j, 4 + 0j, -4 + 0j, 0.1 - 0.2j]


@pytest.mark.parametrize("z", CMATH_INPUTS + [0j])
@pytest.mark.parametrize("f", [c_sqrt, c_exp, c_phase, c_polar, c_sin, c_cos, c_tan])
def test_cmath_everywhere_defined(f, z):
    check_close(f, z)


@pytest.mark.parametrize("z", CMATH_INPUTS)
@pytest.mark.parametrize("f", [c_log, c_log10])
def test_cmath_log(f, z):
    check_close(f, z)


@pytest.mark.parametrize("r,phi", [(1.0, 0.0), (2.0, math.pi / 2), (0.5, -math.pi), (3.0, 1.0), (0.0, 2.0)])
def test_cmath_rect(r, phi):
    check_close(c_rect, r, phi)


@pytest.mark.parametrize("z", CMATH_INPUTS)
def test_polar_rect_round_trip(z):
    check_close(polar_round_trip, z)


INF = float("inf")
NAN = float("nan")


@pytest.mark.parametrize(
    "z",
    [0j, 1 + 2j, complex(INF, 0), complex(0, -INF), complex(NAN, 1), complex(1, NAN), complex(INF, NAN), complex(-INF, INF)],
)
def test_cmath_classification(z):
    check(c_classify, z)


# ------------------------------------------------ NumPy on complex numbers

np = pytest.importorskip("numpy")

UFUNCS = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
          "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sign"]


def _ufunc_of(name):
    src = f"def f(z):\n    return np.{name}(z)\n"
    ns = {"np": np}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numpy_ufuncs_on_complex_scalars_and_arrays(name, dtype):
    f = _ufunc_of(name)
    zs = np.array([0.3 + 0.4j, -1.5 + 2j, 2 - 0.5j, -0.25 - 0.75j], dtype=dtype)
    tol = 2e-6 if dtype == np.complex64 else 1e-14
    g = njit(f)
    got = g(zs)
    np.testing.assert_allclose(got, f(zs), rtol=tol)
    assert got.dtype == f(zs).dtype
    for z in zs:
        np.testing.assert_allclose(g(z), f(z), rtol=tol)


def parts_and_conjugate(z):
    return np.real(z), np.imag(z), np.conj(z)


@pytest.mark.parametrize("z", [np.complex64(1 + 2j), np.complex128(-3 + 0.5j), 2.5, 7, True])
def test_real_imag_conj_of_numbers(z):
    got = njit(parts_and_conjugate)(z)
    want = parts_and_conjugate(z)
    for g, w in zip(got, want):
        assert g == w


def test_complex64_argument_keeps_its_imaginary_part():
    z = np.complex64(1.5 - 2.5j)
    assert njit(lambda x: x)(z) == z
    assert njit(lambda x: x.imag)(z) == -2.5


def cpow(a, b):
    return a ** b


@pytest.mark.parametrize(
    "a,b",
    [
        (1 + 2j, 2), (1 + 2j, -3), (0.5 - 0.25j, 2.5), (-3 + 0.5j, 0.5 + 1j), (2j, 0),
        (0j, 2.5), (1 + 1j, 101), (-1.5 + 0j, 1 / 3), (3, 0.5j), (2.0, -1 + 1j),
    ],
)
def test_complex_power_as_cpython(a, b):
    got = jitted(cpow)(a, b)
    want = cpow(a, b)
    assert got == pytest.approx(want, rel=1e-13, abs=1e-300)


def test_complex_zero_to_a_negative_power():
    with pytest.raises(ZeroDivisionError) as py:
        cpow(0j, -1.5)
    with pytest.raises(ZeroDivisionError) as e:
        jitted(cpow)(0j, -1.5)
    assert str(e.value) == str(py.value)
    with pytest.raises(ZeroDivisionError):
        jitted(cpow)(0j, -2)


def test_numpy_power_of_complex_arrays():
    z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
    got = njit(lambda x: np.power(x, 2.5) + x ** (1 + 1j))(z)
    np.testing.assert_allclose(got, np.power(z, 2.5) + z ** (1 + 1j), rtol=1e-13)
