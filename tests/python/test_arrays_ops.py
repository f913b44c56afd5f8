"""Whole-array operations in jitted code against NumPy's own results: element-wise
operators and ufuncs (array with array of the same shape, or with a scalar), reductions,
basic slicing (views that share memory), slice assignment and copies. Every test also
checks, through the autouse fixture, that NRT allocations balance."""

import numpy as np
import pytest

from numba_rs import njit

SHAPES = [(0,), (1,), (7,), (3, 4), (2, 3, 2)]


def arrays(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 4.0, size=shape).astype(dtype)
    b = rng.uniform(0.5, 4.0, size=shape).astype(dtype)
    return a, b


def arith(a, b):
    return a + b, a - b, a * b, a / b, a * 2.5, 3.0 - a, a ** 2, -a


def compare(a, b):
    return a < b, a >= b, a == a, a != b


def ufuncs(a, b):
    return (np.sqrt(a), np.exp(a), np.log(a), np.sin(a), np.abs(-a), np.floor(a),
            np.add(a, b), np.multiply(a, 2.0), np.maximum(a, b), np.minimum(a, b),
            np.power(a, 2.0), np.arctan2(a, b), np.hypot(a, b))


def reductions(a):
    return a.sum(), a.prod(), a.mean(), np.sum(a)


def extremes(a):
    return a.min(), a.max(), np.min(a), np.max(a)


def close(got, expected):
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            close(g, e)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.shape == expected.shape
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    else:
        assert np.isclose(got, expected, rtol=1e-12), (got, expected)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_arithmetic_comparisons_and_ufuncs(shape):
    a, b = arrays(shape)
    for f in (arith, compare, ufuncs):
        close(njit(f)(a, b), f(a, b))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_integer_and_single_precision_arithmetic(dtype):
    a, b = arrays((9,), dtype)
    for f in (lambda x, y: x + y, lambda x, y: x * y - x):
        close(njit(f)(a, b), f(a, b))
    # An array times a Python int: Numba types the int as int64, so int32 arrays give
    # int64 (checked with Numba 0.68.1); NumPy 2 keeps int32. Values agree.
    got = njit(lambda x: x * 3)(a)
    np.testing.assert_allclose(got, a * 3)
    if dtype == np.int32:
        assert got.dtype == np.int64


@pytest.mark.parametrize("shape", [s for s in SHAPES if s != (0,)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.bool_])
def test_reductions(shape, dtype):
    a = arrays(shape)[0].astype(dtype)
    close(njit(extremes)(a), extremes(a))
    if dtype != np.bool_:
        close(njit(reductions)(a), reductions(a))


def test_reductions_of_empty_arrays():
    a = np.zeros(0)
    s, p, m, s2 = njit(reductions)(a)
    assert (s, p, s2) == (0.0, 1.0, 0.0) and np.isnan(m)
    with pytest.raises(ValueError, match="zero-size array"):
        njit(extremes)(a)


def slices_1d(a):
    return a[1:4], a[::2], a[::-1], a[-3:], a[2:100], a[5:1], a[1:-1:3]


def slices_2d(a):
    return a[1:], a[:, 1], a[1, :], a[::2, ::-1], a[1:3, 1:3]


@pytest.mark.parametrize("n", [0, 1, 6, 13])
def test_one_dimensional_slices(n):
    a = np.arange(float(n))
    close(njit(slices_1d)(a), slices_1d(a))


def test_slices_of_two_dimensional_arrays_and_created_arrays():
    a = np.arange(20.0).reshape(4, 5)
    close(njit(slices_2d)(a), slices_2d(a))
    make = njit(lambda n: np.ones((n, n))[1:, ::2])
    close(make(4), np.ones((4, 4))[1:, ::2])


def test_a_returned_slice_is_a_view_of_the_argument():
    a = np.arange(10.0)
    v = njit(lambda x: x[2:5])(a)
    v[0] = -1.0
    assert a[2] == -1.0


def assign(a, b):
    a[1:3] = 7.0
    a[3:5] = b[0:2]
    a[::-4] = 0
    return a.copy()


@pytest.mark.parametrize("n", [6, 9])
def test_slice_assignment_and_copy(n):
    a, b = np.arange(float(n)), np.arange(float(n), 0.0, -1.0)
    expected = assign(a.copy(), b)
    got_base = a.copy()
    got = njit(assign)(got_base, b)
    close(got, expected)
    close(got_base, expected)
    assert got.base is not got_base


def test_mismatched_shapes_are_value_errors():
    with pytest.raises(ValueError, match="broadcast"):
        njit(lambda x, y: x + y)(np.zeros(3), np.zeros(4))


def method_on_a_temporary(x, y):
    return (x * 2.0 + y).sum()


def test_a_method_keeps_its_temporary_array_alive():
    # Large enough that freed memory is returned to the OS: reading it after a premature
    # free would crash rather than read stale values.
    x = np.linspace(0.0, 1.0, 2_000_000)
    y = np.linspace(1.0, 2.0, 2_000_000)
    assert njit(method_on_a_temporary)(x, y) == pytest.approx(method_on_a_temporary(x, y))


def creation(n):
    return (np.arange(n), np.arange(1.0, 2.0, 0.25), np.arange(n, 0, -2), np.full((2, 3), 7.5),
            np.full(n, 3), np.zeros_like(np.ones(n)), np.ones_like(np.zeros((2, 2))))


def methods(n):
    a = np.arange(n * 2)
    e = a.reshape(2, -1)
    f = a.reshape((n, 2))
    b = np.zeros_like(e)
    b.fill(4)
    return (e, f, e.T, e.transpose(), a.astype(np.float32), e.ravel(), e.T.flatten(),
            a.cumsum(), a.cumprod(), e.argmax(), (a * -1).argmin(), b)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_creation_functions(n):
    close(njit(creation)(n), creation(n))


@pytest.mark.parametrize("n", [1, 3, 5])
def test_array_methods(n):
    close(njit(methods)(n), methods(n))


def test_bad_reshape_is_value_error():
    # Numba's messages (`normalize_reshape_value`); NumPy raises ValueError too.
    with pytest.raises(ValueError, match="^total size of new array must be unchanged$"):
        njit(lambda a: a.reshape(4, 4))(np.arange(10))
    with pytest.raises(ValueError, match="^multiple negative shape values$"):
        # Checked before a strided array is copied: nothing is left allocated.
        njit(lambda a: a.reshape(-1, -1))(np.arange(10.0)[::2])


@pytest.mark.parametrize("shape", [(-1307, 1), (-5,), (3, -2), (2, 6), (0, -1), (4, -1, 3)])
def test_reshape_infers_any_negative_dimension(shape):
    # NumPy takes any negative dimension as the one to infer.
    a = np.arange(12.0)
    f = njit(lambda a, s: a.reshape(s))
    try:
        want = a.reshape(shape)
    except ValueError:
        with pytest.raises(ValueError):
            f(a, shape)
        return
    np.testing.assert_array_equal(f(a, shape), want)
    np.testing.assert_array_equal(f(a[::-1], shape), a[::-1].reshape(shape))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
                                   ((1,), (5,)), ((4, 1), (4, 6)), ((0, 3), (3,))], ids=str)
def test_broadcasting(sa, sb):
    a = np.arange(float(np.prod(sa))).reshape(sa) + 1.0
    b = np.arange(float(np.prod(sb))).reshape(sb) * 0.5 + 2.0
    f = lambda x, y: (x + y, x * y - x, np.maximum(x, y), x < y)  # noqa: E731
    close(njit(f)(a, b), f(a, b))
    close(njit(f)(b, a), f(b, a))


def predicates(a, b):
    return (np.isnan(a), np.isinf(a), np.isfinite(a), np.where(a > b, a, b),
            np.where(a > 1.0, a, 0.0), np.clip(a, 1.0, 2.0), np.expm1(b), np.log1p(b),
            np.negative(a), np.square(b))


def statistics(a):
    return a.var(), a.std(), np.var(a), np.std(a), (a > 1.0).all(), (a > 1.0).any(), \
        np.all(a == a), np.any(a > 100.0)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 4)], ids=str)
def test_predicates_where_clip(shape):
    a, b = arrays(shape)
    a = a.copy()
    a.flat[0] = np.nan
    if a.size > 1:
        a.flat[1] = np.inf
    got, expected = njit(predicates)(a, b), predicates(a, b)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 4), (2, 3, 2)], ids=str)
def test_statistics_and_truth_reductions(shape):
    a, _ = arrays(shape)
    close(njit(statistics)(a), statistics(a))


@pytest.mark.parametrize("num", [0, 1, 2, 9])
def test_linspace(num):
    f = lambda n: (np.linspace(0.0, 1.0, n), np.linspace(-3, 5, n), np.linspace(2.0, 2.5))  # noqa: E731
    close(njit(f)(num), f(num))


def along_axis(a, ax):
    return (a.sum(axis=ax), np.sum(a, ax), a.prod(ax), a.mean(axis=ax), np.min(a, axis=ax),
            a.max(ax), np.mean(a, axis=ax))


def sum_prod_axis(a, ax):
    return a.sum(axis=ax), np.prod(a, axis=ax)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (3, 0)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_reductions_along_an_axis(shape, dtype, layout):
    a = (np.arange(int(np.prod(shape))) % 7 + 1).astype(dtype).reshape(shape)
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "A":
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    f = njit(along_axis)
    for ax in range(-a.ndim, a.ndim):
        if a.shape[ax] == 0:
            # NumPy's mean of nothing warns and min/max raise: sum and prod only.
            got, expected = njit(sum_prod_axis)(a, ax), sum_prod_axis(a, ax)
        else:
            got, expected = f(a, ax), along_axis(a, ax)
        for g, e in zip(got, expected):
            assert np.shape(g) == np.shape(e)
            # Scalars come back as Python numbers, as Numba returns them.
            if isinstance(e, np.ndarray):
                assert g.dtype == e.dtype

            np.testing.assert_allclose(g, e, rtol=1e-6)


def test_reduction_axis_out_of_bounds_is_value_error():
    with pytest.raises(ValueError, match="axis"):
        njit(lambda a: a.sum(axis=2))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="axis"):
        njit(lambda a: np.sum(a, -3))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        njit(lambda a: a.max(axis=1))(np.ones((2, 0)))


def complex_means(a):
    return a.mean(), np.mean(a), a.mean(axis=0), np.mean(a, axis=1), a.sum(axis=1)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_means_and_sums(dtype):
    rng = np.random.default_rng(5)
    a = (rng.random((3, 4)) + 1j * rng.random((3, 4))).astype(dtype)
    for x in (a, a.T, a[:, ::2]):
        for g, e in zip(njit(complex_means)(x), complex_means(x)):
            np.testing.assert_allclose(g, e, rtol=1e-5)


def test_complex_orderings_are_typing_errors():
    # Numba orders complex numbers only in the min/max reductions and ufuncs
    # (lexicographically, tested in test_arrays_reductions_more.py and
    # test_ufuncs_more.py); argmax and clip have no order.
    from numba_rs.errors import TypingError

    a = np.array([1 + 2j, 3 - 1j])
    for f in (lambda a: a.argmax(), lambda a: np.clip(a, 0, 1)):
        with pytest.raises(TypingError):
            njit(f)(a)


def identities(n):
    return (np.eye(n), np.eye(n, n + 2), np.eye(n, 3, 1), np.eye(n, 4, -2), np.identity(n),
            np.eye(n, dtype=np.int32), np.identity(n, np.uint8), np.eye(n, k=1),
            np.eye(N=n, M=2, k=-1, dtype=np.float32))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_eye_and_identity(n):
    close(njit(identities)(n), identities(n))


def parts(a):
    return a.real.copy(), a.imag.copy(), a.real.sum(), a.T.imag, a.real + a.imag


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_and_imag_are_views_of_complex_arrays(dtype):
    a = (np.arange(6) + 1j * np.arange(6, 12)).astype(dtype).reshape(2, 3)
    for x in (a, a[:, ::2], np.asfortranarray(a)):
        close(njit(parts)(x), parts(x))

    def write(a):
        a.imag[:] = 5.0
        a.real[0, 0] = -1.0

    got, expected = a.copy(), a.copy()
    njit(write)(got)
    write(expected)
    np.testing.assert_array_equal(got, expected)
    x = np.arange(3.0)
    assert njit(lambda x: x.real)(x) is x


def test_item():
    assert njit(lambda a: a.item())(np.array([[2.5]])) == 2.5
    assert njit(lambda a: a.item())(np.array([7], dtype=np.int8)) == 7
    with pytest.raises(ValueError, match="size 1"):
        njit(lambda a: a.item())(np.ones(2))


def like_and_write(a):
    z = np.zeros_like(a)
    z[0, 1] = 5.0
    z[1, 2] = 7.0
    return (z, np.full_like(a, 2.5), np.full_like(a, 3, np.int32),
            np.full_like(a, fill_value=1.5, dtype="float32"), np.empty_like(a).shape)


@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_like_functions_keep_layout_and_index_correctly(order):
    a = np.arange(12.0).reshape(3, 4)
    a = {"C": a, "F": np.asfortranarray(a), "A": a[:, ::-1]}[order]
    got, expected = njit(like_and_write)(a), like_and_write(a)
    close(got, expected)
    assert got[0].flags.f_contiguous == expected[0].flags.f_contiguous


# In-place operators write into the array (NumPy's `np.add(a, x, out=a)`): the caller and
# every alias see the change, and the statement's value is the same array.


def iadd_alias(a, x):
    b = a
    a += x
    return a, b


def all_inplace(a, x):
    a += x
    a -= 1
    a *= x
    a /= 2
    a **= 1
    return a


def int_inplace(a, k):
    a += k
    a *= 3
    a //= 2
    a %= 7
    a <<= 1
    a >>= 1
    a &= 5
    a |= 8
    a ^= 1
    return a


@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_inplace_operators_modify_the_array(shape):
    f = njit(iadd_alias)
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    want = a.copy()
    iadd_alias(want, 2.5)
    got, alias = f(a, 2.5)
    assert got is a and alias is a
    np.testing.assert_array_equal(a, want)
    x, y = np.random.random(shape), np.random.random(shape) + 1
    want = all_inplace(x.copy(), y)
    r = njit(all_inplace)(x, y)
    assert r is x
    np.testing.assert_allclose(x, want)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_inplace_operators_keep_the_dtype(dtype):
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    want = int_inplace(a.copy(), 3)
    got = njit(int_inplace)(a, 3)
    assert got is a and a.dtype == dtype
    np.testing.assert_array_equal(a, want)


def test_inplace_broadcasts_the_operand_and_handles_overlap():
    f = njit(iadd_alias)
    a = np.arange(6.0).reshape(2, 3)
    want = a + np.array([1.0, 2.0, 3.0])
    f(a, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a, want)

    def shift(a):
        a[1:] += a[:-1]
        return a

    b = np.arange(6.0)
    np.testing.assert_array_equal(njit(shift)(b.copy()), shift(b.copy()))


def test_inplace_output_shape_must_match_as_in_numpy():
    f = njit(iadd_alias)
    for a, x in [(np.zeros((1, 3)), np.ones((2, 3))), (np.zeros(3), np.ones((1, 3)))]:
        with pytest.raises(ValueError):
            a.copy().__iadd__(x)  # the oracle: NumPy raises too
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            f(a, x)


def test_inplace_cast_follows_same_kind():
    from numba_rs.errors import TypingError

    f = njit(iadd_alias)
    with pytest.raises(TypingError, match="Cannot cast ufunc 'add' output from dtype"):
        f(np.zeros(3, np.int64), np.ones(3))
    # A float array takes an int operand; an int scalar fits a small int array.
    a = np.zeros(3)
    f(a, np.arange(3))
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    u = np.full(3, 250, np.uint8)
    f(u, 3)
    np.testing.assert_array_equal(u, np.full(3, 253, np.uint8))


def dtype_type_fill(a):
    for i in range(len(a)):
        a[i] = a.dtype.type(i) / 3
    return a, a.dtype.type(7)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int16, np.uint8, np.complex128])
def test_dtype_type_makes_elements(dt):
    """`a.dtype.type(x)`: the element class, as in NumPy (Numba returns the scalar boxed
    as a Python number)."""
    got, g7 = njit(dtype_type_fill)(np.zeros(5, dt))
    want, w7 = dtype_type_fill(np.zeros(5, dt))
    np.testing.assert_array_equal(got, want)
    assert g7 == w7 and type(g7) is type(w7.item())


OPERATOR_UFUNCS = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
                   "floor_divide", "remainder", "mod", "greater", "greater_equal", "less",
                   "less_equal", "equal", "not_equal"]


def _ufunc_call(name, nin):
    g = {"np": np}
    params = ", ".join("xy"[:nin])
    exec(f"def f({params}):\n    return np.{name}({params})", g)
    return g["f"]


@pytest.mark.parametrize("name", OPERATOR_UFUNCS)
def test_operator_ufuncs_match_numpy(name):
    """The ufuncs that are operators (`np.bitwise_and` is `&`): NumPy's values and dtypes
    for arrays of ints, uint8 and bools, arrays with scalars, and scalars, serially and
    under parallel=True (where they fuse into array expressions)."""
    import warnings
    ufunc = getattr(np, name)
    f = _ufunc_call(name, 2)
    a = np.arange(-5, 15)
    b = (np.arange(20) % 7) + 1
    cases = [(a, b), (a, 3), (7, b), (a.astype(np.uint8), b.astype(np.uint8)),
             (a > 3, b > 3), (a.reshape(4, 5), b[:5])]
    if not name.endswith("shift") and not name.startswith("bitwise"):
        cases.append((a * 0.5, b))
    for x, y in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = ufunc(x, y)
        for got in (njit(f)(x, y), njit(parallel=True)(f)(x, y)):
            assert got.dtype == want.dtype, (x, y)
            np.testing.assert_array_equal(got, want)
    assert njit(f)(7, 3) == ufunc(7, 3)


def test_invert_ufuncs_match_numpy():
    for name in ["invert", "bitwise_not"]:
        f = _ufunc_call(name, 1)
        for x in [np.arange(-3, 9), np.arange(-3, 9) > 2, np.arange(9, dtype=np.uint8)]:
            want = getattr(np, name)(x)
            got = njit(f)(x)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        # On a bool, NumPy's invert is `not` (Python's `~True` is -2).
        assert njit(f)(True) is False and njit(f)(5) == ~5


def test_bool_arrays_take_numpys_int8_loops_and_reject_subtraction():
    from numba_rs.errors import TypingError
    a = np.array([True, False, True])
    b = np.array([True, True, False])
    for op in ["a // b", "a % b", "a ** b", "a << b", "a >> b", "a + b", "a * b", "a / b"]:
        g = {}
        exec(f"def f(a, b):\n    return {op}", g)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = eval(op)
            got = njit(g["f"])(a, b)
        if op == "a / b":
            # Numba's loop choice without float16: bools divide in float32 (NumPy's
            # float16 loop is skipped; NumPy itself gives float64 here).
            assert got.dtype == np.float32, op
        else:
            assert got.dtype == want.dtype, op
        np.testing.assert_array_equal(got, want)

    def sub(a, b):
        return a - b
    with pytest.raises(TypingError):
        njit(sub)(a, b)


def sign_and_inverse_hyperbolics(a):
    return np.sign(a), np.arcsinh(a), np.arctanh(np.tanh(a)), np.arccosh(np.cosh(a) + 1.0)


@pytest.mark.parametrize(
    "a",
    [
        np.array([-3, 0, 5, -1], dtype=np.int64),
        np.array([-2.5, 0.0, -0.0, np.nan, 3.0, -np.inf]),
        np.array([-1.5, 0.0, 2.0], dtype=np.float32),
    ],
)
def test_sign_and_inverse_hyperbolic_ufuncs(a):
    got = njit(sign_and_inverse_hyperbolics)(a)
    with np.errstate(all="ignore"):
        want = sign_and_inverse_hyperbolics(a)
    assert got[0].dtype == want[0].dtype
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6 if a.dtype == np.float32 else 1e-14)
    # +0 for either zero, as NumPy gives.
    assert not np.signbit(got[0][a == 0]).any()
    for x in a[:3]:
        assert njit(lambda v: np.sign(v))(x) == np.sign(x)


def test_sign_of_unsigned_integers():
    a = np.array([0, 7, 200], dtype=np.uint8)
    got = njit(lambda v: np.sign(v))(a)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.sign(a))


def logical_ufuncs(a, b):
    return (
        np.logical_and(a, b),
        np.logical_or(a > 0, b),
        np.logical_xor(a, b),
        np.logical_not(a),
        np.logical_and(a > -1, a < 2),
    )


def test_logical_ufuncs():
    # The truth of each operand (NaN is true), a bool array, as NumPy computes them.
    a = np.array([-2, 0, 3, 1])
    b = np.array([0.0, 1.5, np.nan, 0.0])
    for g, w in zip(njit(logical_ufuncs)(a, b), logical_ufuncs(a, b)):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w)
    scalar = njit(lambda x, y: (np.logical_and(x, y), np.logical_or(x, y), np.logical_not(x)))
    for x, y in [(2, 0.0), (0, 1j), (0.0, 0)]:
        assert scalar(x, y) == (np.logical_and(x, y), np.logical_or(x, y), np.logical_not(x))
