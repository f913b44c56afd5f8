"""NumPy ufuncs beyond the operators and the `math` ones (`exp2 cbrt rint fabs spacing
signbit reciprocal positive deg2rad radians rad2deg degrees copysign fmax fmin fmod gcd lcm
ldexp logaddexp logaddexp2 nextafter float_power`), NumPy 2's second names (`np.acos`,
`np.pow`, ...), complex `log2 expm1 log1p exp2 rint`, and `np.finfo`/`np.iinfo`; every
result checked against NumPy's on the same inputs, edge values included (NaN, infinities,
signed zeros, zero divisors, integer extremes)."""

import warnings

import numpy as np
import pytest

import numba_rs

FLOATS = np.array([0.0, -0.0, 1.5, -2.25, 3.0, 1e-300, -7.5e10, np.inf, -np.inf, np.nan])
POS = np.array([0.5, 1.0, 2.0, 8.0, 27.0, 1e-10, 1e10])
INTS = np.array([0, 1, -1, 7, -12, 35, 2**40, -(2**40)], dtype=np.int64)


def jit1(name):
    return numba_rs.njit(eval(f"lambda a: np.{name}(a)"))


def jit2(name):
    return numba_rs.njit(eval(f"lambda a, b: np.{name}(a, b)"))


def same(got, want, rtol=1e-12, atol=0, zeros=True):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if not zeros:
            return
        # Signed zeros and infinities agree exactly.
        real = want.real if want.dtype.kind == "c" else want
        greal = got.real if got.dtype.kind == "c" else got
        mask = (real == 0) | np.isinf(real)
        assert np.array_equal(np.signbit(greal[mask]), np.signbit(real[mask]))
    else:
        assert np.array_equal(got, want)


def numpy(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


UNARY_FLOAT = ["exp2", "cbrt", "rint", "fabs", "spacing", "deg2rad", "radians",
               "rad2deg", "degrees", "reciprocal", "positive", "signbit"]


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_float_arrays(name, dtype):
    a = FLOATS.astype(dtype)
    want = numpy(getattr(np, name), a)
    got = numpy(jit1(name), a)
    same(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_scalars(name):
    f = jit1(name)
    for x in [1.5, -2.25, 0.0, 3]:
        want = numpy(getattr(np, name), x)
        got = numpy(f, x)
        same(got, want)


@pytest.mark.parametrize("name", ["exp2", "cbrt", "rint", "fabs", "spacing", "degrees",
                                  "signbit", "positive", "reciprocal"])
def test_unary_int_arrays(name):
    a = np.array([1, -2, 3, 5, -7], dtype=np.int32)
    same(numpy(jit1(name), a), numpy(getattr(np, name), a))


@pytest.mark.parametrize("name", ["log2", "expm1", "log1p", "exp2", "rint", "reciprocal",
                                  "positive"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_unary(name, dtype):
    z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 1e-9 + 1e-9j, 2.5 - 3.5j], dtype=dtype)
    want = numpy(getattr(np, name), z)
    got = numpy(jit1(name), z)
    # NumPy's complex64 loops run in single precision; ours in double, rounded after.
    single = dtype == np.complex64
    same(got, want, rtol=1e-5 if single else 1e-12, atol=1e-7 if single else 0)
    # A complex scalar too.
    same(numpy(jit1(name), complex(z[0])), numpy(getattr(np, name), complex(z[0])), 1e-5)


@pytest.mark.parametrize("name", ["cbrt", "fabs", "spacing", "degrees", "signbit",
                                  "copysign", "fmod", "gcd", "logaddexp", "nextafter"])
def test_complex_rejected(name):
    # NumPy has no complex loop for these; Numba's typing rejects them.
    z = np.array([1 + 2j])
    f = jit1(name) if name in UNARY_FLOAT or name in ("cbrt", "fabs") else jit2(name)
    args = (z,) if f.py_func.__code__.co_argcount == 1 else (z, z)
    with pytest.raises(numba_rs.errors.TypingError):
        f(*args)


BINARY_FLOAT = ["copysign", "fmax", "fmin", "fmod", "logaddexp", "logaddexp2",
                "nextafter", "float_power"]


@pytest.mark.parametrize("name", BINARY_FLOAT)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_float_arrays(name, dtype):
    a = np.repeat(FLOATS, len(FLOATS)).astype(dtype)
    b = np.tile(FLOATS, len(FLOATS)).astype(dtype)
    want = numpy(getattr(np, name), a, b)
    got = numpy(jit2(name), a, b)
    # Which zero fmax(0.0, -0.0) gives differs between NumPy's own scalar and SIMD loops.
    zeros = name not in ("fmax", "fmin")
    same(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12, zeros=zeros)


@pytest.mark.parametrize("name", ["fmax", "fmin", "fmod", "gcd", "lcm"])
@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16])
def test_binary_int_arrays(name, dtype):
    vals = INTS.astype(dtype)
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    want = numpy(getattr(np, name), a, b)
    got = numpy(jit2(name), a, b)
    same(got, want)


def test_int_extremes():
    a = np.array([np.iinfo(np.int64).min, -9, 9], dtype=np.int64)
    b = np.array([-1, 0, -4], dtype=np.int64)
    same(numpy(jit2("fmod"), a, b), numpy(np.fmod, a, b))
    same(jit2("gcd")(a, b), np.gcd(a, b))


def test_binary_broadcast_and_mixed_types():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    b = np.array([1.0, -1.0, 2.0, -0.0])
    for name in BINARY_FLOAT:
        zeros = name not in ("fmax", "fmin")
        same(numpy(jit2(name), a, b), numpy(getattr(np, name), a, b), rtol=1e-6, zeros=zeros)
        same(numpy(jit2(name), a, 2), numpy(getattr(np, name), a, 2), rtol=1e-6)
        same(numpy(jit2(name), 1.5, -0.5), numpy(getattr(np, name), 1.5, -0.5))
    i = np.array([12, 18, -8], dtype=np.int32)
    for name in ["gcd", "lcm", "fmod", "fmax"]:
        # A Python int is int64 to Numba (NumPy 2 would keep int32 for it).
        same(jit2(name)(i, 30), getattr(np, name)(i, np.int64(30)))


def test_ldexp():
    x = np.array([0.5, -1.25, 3.0, np.inf, np.nan], dtype=np.float32)
    e = np.array([1, 3, -2, 4, 0], dtype=np.int32)
    same(jit2("ldexp")(x, e), np.ldexp(x, e))
    same(jit2("ldexp")(x.astype(np.float64), 10), np.ldexp(x.astype(np.float64), 10))
    with pytest.raises(numba_rs.errors.TypingError):
        jit2("ldexp")(x, 1.5)


def test_float_power_complex():
    z = np.array([1 + 1j, 2 - 0.5j])
    same(jit2("float_power")(z, 2), np.float_power(z, 2))
    same(jit2("float_power")(np.array([2, 3], np.int32), -1), np.float_power(np.array([2, 3], np.int32), -1))


def test_gcd_rejects_floats():
    with pytest.raises(numba_rs.errors.TypingError):
        jit2("gcd")(np.array([1.0]), np.array([2.0]))


@pytest.mark.parametrize("alias, name", [("acos", "arccos"), ("asin", "arcsin"),
                                         ("atan", "arctan"), ("acosh", "arccosh"),
                                         ("asinh", "arcsinh"), ("atanh", "arctanh")])
def test_numpy2_unary_aliases(alias, name):
    a = np.array([0.25, 0.5, 0.75]) + (1.0 if name == "arccosh" else 0.0)
    same(jit1(alias)(a), getattr(np, name)(a))


def test_numpy2_binary_aliases():
    a = np.array([1.0, -2.0, 3.0])
    b = np.array([2.0, 0.5, -1.0])
    same(jit2("atan2")(a, b), np.arctan2(a, b))
    same(jit2("pow")(np.abs(a), b), np.power(np.abs(a), b))
    i = np.array([1, 2, 3])
    same(jit2("bitwise_left_shift")(i, 2), np.left_shift(i, 2))
    same(jit2("bitwise_right_shift")(i * 8, 2), np.right_shift(i * 8, 2))
    same(jit1("bitwise_invert")(i), np.invert(i))


def test_new_ufuncs_fuse_and_parallelise(nthreads):
    def f(a, b):
        return np.sum(np.logaddexp(a, b) + np.fmod(a, 3.0) * np.degrees(b) - np.cbrt(a))

    a = np.linspace(-5.0, 5.0, 10001)
    b = np.linspace(3.0, -2.0, 10001)
    want = f(a, b)
    np.testing.assert_allclose(numba_rs.njit(parallel=True)(f)(a, b), want, rtol=1e-9)
    np.testing.assert_allclose(numba_rs.njit(f)(a, b), want, rtol=1e-9)


# -- np.finfo / np.iinfo ------------------------------------------------------------

FINFO_FIELDS = ["eps", "epsneg", "iexp", "machep", "max", "maxexp", "min", "minexp",
                "negep", "nexp", "nmant", "precision", "resolution", "tiny", "bits"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex64, np.complex128])
def test_finfo_fields(dtype):
    @numba_rs.njit
    def every(x):
        return np.finfo(x.dtype)

    info = every(np.zeros(2, dtype))
    want = np.finfo(dtype)
    assert type(info).__name__ == "finfo"
    for field in FINFO_FIELDS:
        got, exp = getattr(info, field), getattr(want, field)
        assert got == exp, field
        assert type(got).__name__ in ("float", "int"), field


def test_finfo_forms_and_use():
    @numba_rs.njit
    def close(a, b):
        return np.abs(a - b) < 4 * np.finfo(np.float64).eps * np.abs(b)

    @numba_rs.njit
    def tiny(x):
        return np.finfo(x).tiny, np.finfo(np.float32).max

    assert close(1.0 + 2.0**-52, 1.0)
    assert not close(1.0 + 2.0**-40, 1.0)
    assert tiny(2.0) == (np.finfo(np.float64).tiny, float(np.finfo(np.float32).max))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64])
def test_iinfo(dtype):
    @numba_rs.njit
    def info(a):
        i = np.iinfo(a.dtype)
        return i.min, i.max, i.bits

    assert info(np.zeros(1, dtype)) == (np.iinfo(dtype).min, np.iinfo(dtype).max,
                                        np.iinfo(dtype).bits)


def test_iinfo_in_code():
    @numba_rs.njit
    def clamp_add(x, y):
        hi = np.iinfo(np.int32).max
        s = x + y
        return hi if s > hi else s

    assert clamp_add(2**31 - 5, 10) == 2**31 - 1
    assert clamp_add(1, 2) == 3


@pytest.mark.parametrize("src", ["np.iinfo(np.float64)", "np.iinfo(x)", "np.finfo(np.int32)",
                                 "np.iinfo(np.bool_)"])
def test_info_rejected(src):
    f = numba_rs.njit(eval(f"lambda x: {src}"))
    with pytest.raises(numba_rs.errors.TypingError, match="(finfo|iinfo)"):
        f(1.5)


# -- 0-d arrays ---------------------------------------------------------------------


def zero_d_exprs(a, b):
    return a + 1, a * a - b, np.sin(a), -a, np.isnan(a), np.maximum(a, 0.5), a > b


def test_zero_d_expressions_are_scalars():
    # NumPy gives scalars for ufuncs and operators over 0-d arrays; Numba types them so.
    a, b = np.array(2.5), np.array(4.0)
    want = zero_d_exprs(a, b)
    for jit in (numba_rs.njit, numba_rs.njit(parallel=True)):
        got = jit(zero_d_exprs)(a, b)
        assert got == tuple(w.item() for w in want)
        assert all(not isinstance(g, np.ndarray) for g in got)


def test_zero_d_with_others():
    @numba_rs.njit
    def mixed(a, v):
        a += 1.5  # in place: `a` stays the 0-d array
        s = 0.0
        for i in range(3):
            s += a * i
        return a, s, a * v

    a = np.array(2.0)
    out, s, prod = mixed(a, np.arange(3.0))
    assert out is a and a[()] == 3.5
    assert s == 10.5 and type(s) is float
    np.testing.assert_array_equal(prod, np.array(3.5) * np.arange(3.0))


def test_divmod():
    f = jit2("divmod")
    a = np.array([7, -7, 9, -3, 0], dtype=np.int64)
    b = np.array([2, 2, -4, -3, 5], dtype=np.int64)
    q, r = f(a, b)
    wq, wr = np.divmod(a, b)
    same(q, wq)
    same(r, wr)
    x = np.array([7.5, -7.5, 2.25, -0.0])
    q, r = f(x, 2.0)
    wq, wr = np.divmod(x, 2.0)
    same(q, wq)
    same(r, wr)
    # Scalars: the pair of numbers.
    assert f(-7, 2) == (-4, 1) == tuple(np.divmod(-7, 2))
    assert f(7.5, -2.0) == tuple(float(v) for v in np.divmod(7.5, -2.0))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_output_array_arguments(dtype):
    """A ufunc's output array given last (`np.add(a, b, out)`): the result broadcast and
    cast into it (NumPy's `same_kind` rule), the call's value `out` itself; scalar inputs
    too. NumPy runs the same calls."""
    import operator

    def unary(x, out):
        return np.absolute(x, out)

    def binary(x, y, out):
        np.add(x, y, out)
        np.multiply(out, y, out)
        return out

    def sqrt_into(x, out):
        np.sqrt(x, out)

    def both(x, y, q, r):
        return np.divmod(x, y, q, r)

    x = (np.arange(-3, 3) * 2).astype(dtype)
    o1, o2 = np.zeros_like(x), np.zeros_like(x)
    r1 = numba_rs.njit(unary)(x, o1)
    assert r1 is not None
    unary(x, o2)
    np.testing.assert_array_equal(o1, o2)
    s1, s2 = np.zeros(1, dtype=np.abs(x).dtype), np.zeros(1, dtype=np.abs(x).dtype)
    numba_rs.njit(unary)(x[0], s1)
    unary(x[0], s2)
    np.testing.assert_array_equal(s1, s2)
    y = dtype(2)
    b1, b2 = np.zeros((2, 6), dtype=dtype), np.zeros((2, 6), dtype=dtype)
    numba_rs.njit(binary)(x, y, b1)
    binary(x, y, b2)
    np.testing.assert_array_equal(b1, b2)
    if not np.issubdtype(dtype, np.complexfloating):
        q1, r1_, q2, r2 = (np.zeros_like(x) for _ in range(4))
        numba_rs.njit(both)(x, y, q1, r1_)
        both(x, y, q2, r2)
        np.testing.assert_array_equal(q1, q2)
        np.testing.assert_array_equal(r1_, r2)
    if np.issubdtype(dtype, np.integer):
        # float64 into an integer array: NumPy's UFuncTypeError, a TypingError here.
        with pytest.raises(TypeError):
            sqrt_into(x, np.zeros_like(x))
        with pytest.raises(numba_rs.errors.TypingError):
            numba_rs.njit(sqrt_into)(x, np.zeros_like(x))
    # `operator.iadd(a, b)` and friends on arrays write into `a`, as `a += b` does.
    for op in (operator.iadd, operator.isub, operator.imul):
        a1, a2 = x.copy(), x.copy()
        ns = {"op": op}
        exec("def f(a, b):\n    op(a, b)\n", ns)
        numba_rs.njit(ns["f"])(a1, x)
        op(a2, x)
        np.testing.assert_array_equal(a1, a2)


def test_nan_and_inf_predicates_of_complex_arrays():
    a = np.array([-0.0 - 1j, complex(np.nan, np.nan), complex(np.nan, 0), complex(0, np.inf),
                  1.5 + 1.5j, complex(-np.inf, np.nan)])
    for f in (np.isnan, np.isinf, np.isfinite):
        np.testing.assert_array_equal(numba_rs.njit(lambda a: f(a))(a), f(a))
        out = np.zeros(a.shape, bool)
        numba_rs.njit(lambda a, o: f(a, o))(a, out)
        np.testing.assert_array_equal(out, f(a))
        assert [numba_rs.njit(lambda v: f(v))(v) for v in a] == [f(v) for v in a]


def test_no_rewrites_option_with_signatures():
    def fn(x, y):
        x += y

    f = numba_rs.njit("void(float32[::1], float64[::1])", no_rewrites=True, _nrt=False)(fn)
    a = np.array([-1, 1.5, 3], dtype=np.float32)
    f(a, np.array([-5, 0, 2.5]))
    np.testing.assert_array_equal(a, np.array([-6, 1.5, 5.5], dtype=np.float32))


def test_complex_arrays_order_lexicographically():
    """`np.less` & co. order complex elements by real part, then imaginary part (NaN
    compares false), as NumPy's and Numba's ufuncs do; Numba's `<` on complex values
    (arrays too) is a TypingError."""
    a = np.array([1 + 2j, 1 + 1j, complex(np.nan, 0), 2 + 0j, complex(1, np.nan), 0j])
    b = np.array([1 + 1j, 1 + 1j, 0j, 1 + 5j, 1 + 0j, -0.0 + 0j])
    with np.errstate(invalid="ignore"):
        for name in ("less", "less_equal", "greater", "greater_equal"):
            ns = {"np": np}
            exec(f"def h(x, y):\n    return np.{name}(x, y)\n", ns)
            f = getattr(np, name)
            np.testing.assert_array_equal(numba_rs.njit(ns["h"])(a, b), f(a, b))
            out = np.zeros(a.shape, bool)
            exec(f"def k(x, y, o):\n    np.{name}(x, y, o)\n", ns)
            numba_rs.njit(ns["k"])(a.astype(np.complex64), b, out)
            np.testing.assert_array_equal(out, f(a.astype(np.complex64), b))
    # Numba's operators do not order complex numbers, arrays or scalars.
    with pytest.raises(numba_rs.errors.TypingError):
        numba_rs.njit(lambda x, y: x < y)(a, b)
    with pytest.raises(numba_rs.errors.TypingError):
        numba_rs.njit(lambda x, y: x < y)(1j, 2j)


def test_array_identity():
    """`a is b` of arrays (Numba's `array_is`: the same data, shape and strides); a
    ufunc's output argument is the array it returns."""

    def ident(a, b):
        c = a
        return a is c, a is b, np.add(a, a, b) is b, a is not b

    a, b = np.arange(4.0), np.zeros(4)
    assert numba_rs.njit(ident)(a, b) == ident(a.copy(), b.copy())
    same = numba_rs.njit(lambda x, y: x is y)
    assert same(a, a) and not same(a, a.copy())
    assert not same(a, a.reshape(2, 2).ravel()[::2].copy())
    assert not same(np.ones(3), np.ones(3, dtype=np.int64))  # different types


def test_complex_maximum_minimum_fmax_fmin():
    """NumPy's complex `maximum`/`minimum` (lexicographic, a NaN in either part
    propagates) and `fmax`/`fmin` (a NaN is ignored), as Numba's loops give them."""
    nan = np.nan
    a = np.array([1 + 2j, 1 + 1j, complex(nan, 0), 2 + 0j, complex(1, nan), 0j, complex(nan, 1)])
    b = np.array([1 + 1j, 1 + 3j, 0j, 1 + 5j, 1 + 0j, complex(0, nan), complex(nan, 2)])
    with np.errstate(invalid="ignore"):
        for name in ("maximum", "minimum", "fmax", "fmin"):
            ns = {"np": np}
            exec(f"def h(x, y):\n    return np.{name}(x, y)\n", ns)
            f = getattr(np, name)
            for x, y in ((a, b), (b, a), (a.astype(np.complex64), b.astype(np.complex64))):
                np.testing.assert_array_equal(numba_rs.njit(ns["h"])(x, y), f(x, y))


def test_output_array_by_keyword():
    """`np.add(a, b, out=c)`, `np.sqrt(x, out=y)`: the keyword form of the output array
    (NumPy's parameter names `x1, x2, out` / `x, out`); the call's value is `out`."""

    def f(a, b, o, p):
        r = np.add(a, b, out=o)
        np.sqrt(a, out=p)
        np.multiply(o, 2.0, out=o)
        return r is o

    a = np.arange(6.0).reshape(2, 3)
    b = np.ones((2, 3))
    o1, p1, o2, p2 = (np.zeros((2, 3)) for _ in range(4))
    assert numba_rs.njit(f)(a, b, o1, p1) is True
    assert f(a, b, o2, p2) is True
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(p1, p2)
    with pytest.raises(numba_rs.errors.TypingError):
        numba_rs.njit(lambda a, o: np.sqrt(a, where=o))(a, o1)
