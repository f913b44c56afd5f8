"""Compile options accepted by ``njit`` and the public namespace of the package."""

import functools
import math
import threading
import warnings

import numpy as np
import pytest

import numba_rs as nb
from numba_rs import errors, njit

IMPL = "numba_rs"

FLOATS = [0.0, 0.5, -2.5, 3.75, 1e10, -1e-3, 123.456]


def poly(x, y):
    return x * x * 0.5 + y * 3.0 - x * y + 1.0


def total(n):
    s = 0.0
    for i in range(n):
        s += i * 0.5
    return s


def divide(a, b):
    return a / b


def int_mix(a, b):
    return a * b - (a // 3) + b % 7


# ----------------------------------------------------------------- fastmath


@pytest.mark.parametrize("x", FLOATS)
@pytest.mark.parametrize("y", [0.0, 1.5, -4.0])
@pytest.mark.parametrize("option", [True, {"nnan", "ninf"}, {"reassoc", "contract"}], ids=["true", "nnan-ninf", "set"])
def test_fastmath(option, x, y):
    f = njit(fastmath=option)(poly)
    # fastmath may reassociate or contract: compare with a tolerance.
    assert math.isclose(f(x, y), poly(x, y), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 10, 1000])
def test_fastmath_loop(n):
    assert math.isclose(njit(fastmath=True)(total)(n), total(n), rel_tol=1e-12)


# -------------------------------------------------------------- error_model


@pytest.mark.parametrize(
    "a,b,expected",
    [(1.0, 0.0, math.inf), (-1.0, 0.0, -math.inf), (0.0, 0.0, math.nan), (3.0, 2.0, 1.5), (1.0, -0.0, -math.inf)],
)
def test_error_model_numpy_float_division(a, b, expected):
    got = njit(error_model="numpy")(divide)(a, b)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected


def test_error_model_python_raises():
    for f in (njit(divide), njit(error_model="python")(divide)):
        with pytest.raises(ZeroDivisionError):
            f(1.0, 0.0)
        assert f(3.0, 2.0) == 1.5


# --------------------------------------------- nogil, inline, boundscheck


@pytest.mark.parametrize("a", [0, 5, -17, 2**30])
@pytest.mark.parametrize("b", [1, 2, -9, 1000])
def test_nogil(a, b):
    assert njit(nogil=True)(int_mix)(a, b) == int_mix(a, b)


def test_nogil_from_threads():
    f = njit(nogil=True)(total)
    f(1)  # compile once, then call concurrently
    results = [None] * 4

    def work(i):
        results[i] = f(1000 + i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [total(1000 + i) for i in range(4)]


@njit(inline="always")
def inlined_square(x):
    return x * x


@njit(inline="never")
def not_inlined_cube(x):
    return x * x * x


def uses_inlined(x):
    return inlined_square(x) + not_inlined_cube(x) + 1


def uses_inlined_py(x):
    return x * x + x * x * x + 1


@pytest.mark.parametrize("x", [0, 1, -3, 7, 1.5, -0.25])
def test_inline_options(x):
    assert njit(uses_inlined)(x) == uses_inlined_py(x)
    assert inlined_square(x) == x * x


def tuple_index(t, i):
    return t[i] * 2


@pytest.mark.parametrize("i", [0, 1, 2, -1])
def test_boundscheck(i):
    for flag in (True, False):
        f = njit(boundscheck=flag)(tuple_index)
        assert f((4, 5, 6), i) == tuple_index((4, 5, 6), i)
    assert njit(boundscheck=True)(int_mix)(10, 3) == int_mix(10, 3)


@pytest.mark.parametrize(
    "options",
    [
        {"nopython": True},
        {"nogil": True, "fastmath": True},
        {"boundscheck": True, "error_model": "numpy"},
        {"inline": "never", "nogil": False},
    ],
)
def test_option_combinations(options):
    assert njit(**options)(int_mix)(20, 6) == int_mix(20, 6)
    assert nb.jit(**options)(int_mix)(20, 6) == int_mix(20, 6)


# ------------------------------------------------- cache, parallel: warnings


def cached_func(x):
    return x * 3 + 1


def parallel_func(x):
    return x * 5 - 2


def test_cache_is_silent_and_computes():
    # A file-backed function caches without a warning, in numba-rs as in Numba
    # (test_caching.py checks what the cache does).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = njit(cache=True)(cached_func)
        assert f(4) == 13
    assert f(-2) == cached_func(-2)


def test_parallel_warns_and_computes():
    # Numba: NumbaPerformanceWarning (a NumbaWarning) "The keyword argument
    # 'parallel=True' was specified but no transformation for parallel execution was
    # possible."
    with pytest.warns(errors.NumbaWarning, match="parallel"):
        f = njit(parallel=True)(parallel_func)
        assert f(4) == 18
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(-3) == parallel_func(-3)


def truncating_div(a, b):
    c = a / b
    return c


def narrow_counter(n):
    k = 0
    for _ in range(n):
        k += 1
    return k


def float32_sum(x):
    acc = 0
    for v in x:
        acc += v
    return acc


def test_locals_declare_variable_types():
    """`locals=` fixes a variable's type; assignments convert to it (Numba's `seed_type`),
    checked against what the same conversions give in NumPy."""
    import numpy as np

    f = njit(locals={"c": nb.int64})(truncating_div)
    assert f(8, 3) == 2 and isinstance(f(8, 3), int)
    assert f(-7, 2) == int(np.int64(np.float64(-7 / 2)))  # truncation toward zero
    # Every version of a reassigned variable: wraps as uint8 does.
    assert njit(locals={"k": nb.uint8})(narrow_counter)(300) == 300 % 256
    x = np.arange(10.0) / 3
    want = np.float32(0)
    for v in x:
        want = np.float32(want + np.float32(v))
    got = njit(locals={"acc": nb.float32})(float32_sum)(x)
    assert got == float(want)
    if IMPL == "numba_rs":
        # A type name works too (Numba takes type objects only).
        assert njit(locals={"acc": "float32"})(float32_sum)(x) == got
        with pytest.raises(errors.TypingError, match="declared int64 in locals"):
            njit(locals={"c": nb.int64})(_tuple_into_int)(1)


def _tuple_into_int(a):
    c = (a, a)
    return c


def test_unknown_option_raises_key_error():
    # Numba: KeyError "Unrecognized options: {'foo'}. Known options are ..." (raised when
    # the decorator is applied, or at the latest when the function is first called).
    with pytest.raises(KeyError, match="foo"):
        njit(foo=1)(int_mix)(1, 2)


# --------------------------------------------------------------- namespace


def test_type_objects():
    assert nb.int64 == nb.types.int64
    assert nb.float32 == nb.types.float32
    assert nb.float64 == nb.types.float64
    assert str(nb.int64) == "int64"
    assert str(nb.float32) == "float32"
    assert nb.int64 != nb.float64


@pytest.mark.parametrize(
    "value,name",
    [
        (1, "int64"),
        (-(2**40), "int64"),
        (1.0, "float64"),
        (True, "bool"),
        (1j, "complex128"),
        (None, "none"),
        ((1, 2.0), "Tuple(int64, float64)"),
    ],
)
def test_typeof(value, name):
    assert str(nb.typeof(value)) == name


def test_typeof_equals_type_objects():
    assert nb.typeof(1) == nb.int64
    assert nb.typeof(1.5) == nb.float64
    assert nb.typeof(1) == nb.types.int64


def test_errors_module():
    assert issubclass(nb.errors.TypingError, Exception)
    assert issubclass(nb.errors.UnsupportedError, Exception)
    assert issubclass(nb.errors.NumbaWarning, Warning)
    assert issubclass(nb.errors.TypingError, nb.errors.NumbaError)


def test_config_and_version():
    assert nb.config is not None
    assert isinstance(nb.__version__, str) and nb.__version__


def test_signature_from_type_objects():
    sig = nb.int64(nb.int64, nb.float64)
    assert sig.return_type == nb.int64
    assert tuple(sig.args) == (nb.int64, nb.float64)

    @njit(sig)
    def scaled(n, x):
        return n * x

    # The float result is converted to the declared int64 return type (truncation).
    assert scaled(3, 2.5) == 7 and type(scaled(3, 2.5)) is int
    assert scaled(4, 0.5) == 2
    assert len(scaled.signatures) == 1
    assert tuple(scaled.signatures[0]) == (nb.int64, nb.float64)


def test_several_signatures_from_type_objects():
    @njit([nb.float64(nb.float64), nb.int64(nb.int64)])
    def inc(x):
        return x + 1

    assert inc(1) == 2 and type(inc(1)) is int
    assert inc(1.5) == 2.5
    assert len(inc.signatures) == 2


def test_nrt_false_refuses_returning_a_new_array_as_numba():
    # Numba without its runtime can return an array only when it was given it.
    @nb.njit(_nrt=False)
    def passthru(a):
        b = a
        return b

    @nb.njit(_nrt=False)
    def total(a):
        return np.arange(10).sum() + a.sum()

    @nb.njit(_nrt=False)
    def make(n):
        return np.arange(n)

    x = np.ones(3)
    assert passthru(x).base is x or passthru(x) is x
    assert total(x) == 48.0
    with pytest.raises(nb.errors.TypingError, match="Only accept returning of array passed into the function as argument"):
        make(4)
    np.testing.assert_array_equal(nb.njit(make.py_func)(4), np.arange(4))
