"""Rewrites: fused array expressions checked against NumPy (values, dtypes, broadcasting,
allocations), and the built-in untyped rewrites checked against CPython running the same
functions (raises, static getitems, static powers, print)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.runtime import rtsys

RNG = np.random.default_rng(20261123)


def allocations(f, *args):
    """NRT allocations made by one warm call (the result included)."""
    f(*args)
    before = rtsys.get_allocation_stats().alloc
    r = f(*args)
    after = rtsys.get_allocation_stats().alloc
    del r
    return after - before


def data(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(1, 9, size=shape).astype(dtype)
    return (RNG.random(shape) + 0.5).astype(dtype)


def axpy(a, x, y):
    return a * x + y


def sqrt_exp(x, y, z):
    return np.sqrt(x) * y + np.exp(z)


def six_ops(a, b, c):
    return ((a + b) * c - a / b) * c + -c


def compare_mix(a, b, c):
    return (a < b) & ~(b >= c) | (a == c)


def mixed_ufuncs(a, b, c):
    return np.maximum(a, b) - np.minimum(b, c) * np.abs(a - c) + np.add(a, c)


def floor_mod(a, b, c):
    return (a // b) + (c % b) * a


EXPRS = [axpy, sqrt_exp, six_ops, mixed_ufuncs, floor_mod]
SHAPES = [
    ((7,), (7,), (7,)),
    ((3, 4), (3, 4), (3, 4)),
    ((3, 1), (1, 4), (4,)),
    ((2, 3, 4), (4,), (3, 1)),
    ((5,), (), (5,)),
]


@pytest.mark.parametrize("py", EXPRS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_array_expressions_match_numpy(py, shapes, dtype):
    if py is floor_mod and not np.issubdtype(dtype, np.integer):
        dtype = np.float64
    args = [data(s, dtype) if s else dtype(3) for s in shapes]
    if py is axpy:
        # A typed scalar: Numba types Python floats and ints as float64 and int64, which
        # NumPy 2 promotes only for NumPy scalars.
        args[0] = np.float64(2.5) if dtype in (np.float64, np.float32) else np.int64(3)
    expected = py(*args)
    got = njit(py)(*args)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_boolean_expressions_match_numpy(shapes):
    args = [data(s, np.float64) if s else 0.5 for s in shapes]
    expected = compare_mix(*args)
    got = njit(compare_mix)(*args)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)


def literal_mix(a):
    return a + 1, a * 2.5, np.add(a, 1), a**2


def test_python_scalars_are_typed_as_numba_types_them():
    # Numba types Python ints and floats as int64 and float64 but lets an int combine
    # with float32 as float32 (checked against Numba 0.68.1); NumPy 2 would keep int32.
    got = njit(literal_mix)(np.arange(4, dtype=np.int32))
    assert [r.dtype for r in got] == [np.int64, np.float64, np.int64, np.int64]
    got = njit(literal_mix)(np.arange(4, dtype=np.float32))
    assert [r.dtype for r in got] == [np.float32, np.float64, np.float32, np.float32]
    for g, e in zip(got, literal_mix(np.arange(4, dtype=np.float32))):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_mixed_dtypes_follow_numpy_promotion():
    # Dtypes whose mixes NumPy and Numba promote alike (for int32 with float32 Numba
    # picks float32 where NumPy picks float64; numba-rs follows Numba).
    a = data((6,), np.int16)
    b = data((6,), np.float32)
    c = data((6,), np.float64)
    got = njit(six_ops)(a, b, c)
    expected = six_ops(a, b, c)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_bad_broadcast_is_numpy_value_error():
    f = njit(axpy)
    with pytest.raises(ValueError, match="could not be broadcast"):
        f(2.0, np.ones(3), np.ones(4))


def test_one_allocation_for_axpy():
    x, y = np.ones(1000), np.arange(1000.0)
    assert allocations(njit(axpy), 2.0, x, y) == 1


def test_one_allocation_for_sqrt_times_plus_exp():
    x, y, z = np.ones(1000), np.arange(1000.0), np.zeros(1000)
    assert allocations(njit(sqrt_exp), x, y, z) == 1


def chain3(a, x, y):
    t = a * x
    u = t + y
    v = np.sqrt(u) - 1.0
    return v


def test_chain_over_three_statements_is_one_allocation():
    x, y = RNG.random(100), RNG.random(100)
    f = njit(chain3)
    np.testing.assert_allclose(f(2.0, x, y), chain3(2.0, x, y))
    assert allocations(f, 2.0, x, y) == 1


def across_blocks(x, y, flag):
    t = x * 2.0
    if flag:
        s = 3.0
    else:
        s = 4.0
    return t + y * s


def test_fusion_across_blocks():
    x, y = RNG.random(50), RNG.random(50)
    f = njit(across_blocks)
    for flag in (True, False):
        np.testing.assert_allclose(f(x, y, flag), across_blocks(x, y, flag))
    assert allocations(f, x, y, True) == 1


def write_between(a, x):
    t = a * x
    a[0] = 100.0
    return t + 1.0


def test_no_fusion_across_a_write():
    a, x = np.arange(5.0), np.ones(5)
    expected = write_between(a.copy(), x)
    got = njit(write_between)(a.copy(), x)
    np.testing.assert_array_equal(got, expected)


def test_no_fusion_across_a_call():
    @njit
    def clobber(a):
        a[:] = 0.0

    @njit
    def caller(a, x):
        t = a * x
        clobber(a)
        return t + 1.0

    a, x = np.arange(5.0), np.ones(5)
    np.testing.assert_array_equal(caller(a.copy(), x), np.arange(5.0) + 1.0)


def loop_use(x, n):
    t = x * 2.0
    acc = np.zeros_like(x)
    for _ in range(n):
        acc = acc + t
    return acc


def test_loop_use_is_not_recomputed_wrongly():
    x = RNG.random(10)
    np.testing.assert_allclose(njit(loop_use)(x, 4), loop_use(x, 4))


def inplace(out, a, x, y):
    out[:] = a * x + y


def test_inplace_store_allocates_nothing():
    x, y = np.ones(1000), np.arange(1000.0)
    out = np.empty(1000)
    f = njit(inplace)
    f(out, 2.0, x, y)
    np.testing.assert_allclose(out, 2.0 * x + y)
    before = rtsys.get_allocation_stats().alloc
    f(out, 3.0, x, y)
    assert rtsys.get_allocation_stats().alloc == before
    np.testing.assert_allclose(out, 3.0 * x + y)


def inplace_2d(out, x, y):
    out[1:, :] = np.sqrt(x) + y


def test_inplace_store_into_a_view_broadcasts():
    out = np.zeros((4, 3))
    x = RNG.random((3, 3))
    y = RNG.random(3)
    expected = out.copy()
    inplace_2d(expected, x, y)
    njit(inplace_2d)(out, x, y)
    np.testing.assert_allclose(out, expected)


def test_inplace_store_shape_mismatch_raises():
    out = np.zeros(4)
    with pytest.raises(ValueError):
        njit(inplace)(out, 2.0, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="could not be broadcast"):
        njit(inplace)(out, 2.0, np.ones(3), np.ones(4))


def reverse_plus(a):
    a[:] = a[::-1] + 1.0


def shift_scale(a):
    a[1:] = a[:-1] * 2.0


def same_place(a):
    a[:] = a * a + 1.0


@pytest.mark.parametrize("py", [reverse_plus, shift_scale, same_place], ids=lambda f: f.__name__)
def test_inplace_store_with_aliasing_matches_numpy(py):
    a = np.arange(8.0)
    expected = a.copy()
    py(expected)
    njit(py)(a)
    np.testing.assert_array_equal(a, expected)


def test_inplace_same_array_needs_no_copy():
    a = np.arange(100.0)
    f = njit(same_place)
    f(a.copy())
    before = rtsys.get_allocation_stats().alloc
    f(a)
    assert rtsys.get_allocation_stats().alloc == before


def unary_ops(a, b):
    return -a + (+b) * 2


def test_unary_operators():
    a, b = data((4, 5), np.int64), data((4, 5), np.int64)
    np.testing.assert_array_equal(njit(unary_ops)(a, b), unary_ops(a, b))


def invert_ints(a):
    return ~a + 1


def test_invert_integers_and_booleans():
    a = data((9,), np.int64)
    np.testing.assert_array_equal(njit(invert_ints)(a), invert_ints(a))
    m = data((9,), np.bool_)
    np.testing.assert_array_equal(njit(lambda m: ~m & m)(m), ~m & m)


def pow_const(x):
    return x**2 + x**3 - x**-1


def test_static_power_matches_numpy_on_arrays():
    x = RNG.random(20) + 0.5
    np.testing.assert_allclose(njit(pow_const)(x), pow_const(x), rtol=1e-14)


def scalar_pows(x, n):
    return x**2, x**3, x**-2, x**0, n**3, n**0


def test_static_power_on_scalars_matches_cpython():
    got = njit(scalar_pows)(1.7, 5)
    expected = scalar_pows(1.7, 5)
    for g, e in zip(got, expected):
        assert g == pytest.approx(e, rel=1e-15)
        assert type(g) is type(e)


def static_items(t, a):
    return t[1] + t[-1] + a[0] + a[-1]


def test_static_getitem_on_tuples_and_arrays():
    t = (1, 2.5, 4)
    a = np.arange(6.0)
    assert njit(static_items)(t, a) == static_items(t, a)


def static_row(a):
    return a[1]


def test_static_getitem_of_a_2d_array_is_a_view():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(njit(static_row)(a), a[1])


def const_raise(x):
    if x > 0:
        raise ValueError("positive", 3)
    return x


def dynamic_raise(x):
    if x > 0:
        raise KeyError("bad key", x, "tail")
    return x


def raise_in_try(x):
    try:
        if x > 0:
            raise IndexError("inner", x)
    except KeyError:
        return 0
    return x


@pytest.mark.parametrize(
    "py", [const_raise, dynamic_raise, raise_in_try], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("x", [5, 7])
def test_raises_match_cpython(py, x):
    with pytest.raises(Exception) as expected:
        py(x)
    with pytest.raises(Exception) as got:
        njit(py)(x)
    assert type(got.value) is type(expected.value)
    assert got.value.args == expected.value.args
    assert njit(py)(-1) == -1


def prints(x, s):
    print(x, 2.5, "text", s, x > 1)
    r = print("alone")
    return r is None


def test_print_statement_matches_cpython(capfd):
    capfd.readouterr()
    prints(3, 4.5)
    expected = capfd.readouterr().out
    assert njit(prints)(3, 4.5)
    got = capfd.readouterr().out
    assert got == expected


def test_rewriting_trace_under_dump_ir(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "import numpy as np\n"
        "from numba_rs import njit\n"
        "@njit\n"
        "def f(a, x, y):\n"
        "    return a * x + y\n"
        "f(2.0, np.ones(3), np.ones(3))\n"
    )
    env = dict(os.environ, NUMBA_DUMP_IR="1")
    out = subprocess.run(
        [sys.executable, str(src)], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "REWRITING (RewriteArrayExprs):" in out
    assert (
        "arrayexpr(expr=(<built-in function add>, [(<built-in function mul>, "
        "[Var(a, m.py:3), Var(x, m.py:3)]), Var(y, m.py:3)]), ty=array(float64, 1d, C))"
    ) in out


def divisions(a, b):
    return a / b, a // b, a % b


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_array_division_by_zero_follows_numpy(dtype):
    # Element-wise operations have NumPy's semantics (inf, nan or 0), not Python's
    # ZeroDivisionError, fused or not.
    a = np.array([1, -2, 0, 3], dtype=dtype)
    b = np.array([0, 0, 0, 2], dtype=dtype)
    with np.errstate(all="ignore"):
        expected = divisions(a, b)
    got = njit(divisions)(a, b)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    fused = njit(lambda a, b: (a + 0) / b * 2)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fused(a, b), (a + 0) / b * 2)


def test_scalar_division_by_zero_still_raises():
    with pytest.raises(ZeroDivisionError):
        njit(lambda x, y: x / y)(1.0, 0.0)


def shifts(a, b):
    return (a << b) + (a >> 1)


def test_array_shifts():
    a = data((8,), np.int64)
    b = data((8,), np.int64)
    np.testing.assert_array_equal(njit(shifts)(a, b), shifts(a, b))


def test_no_rewrites_keeps_operations_separate():
    """`no_rewrites=True` (Numba's flag) turns the array-expression rewrite off: each
    operation makes its own array (two for `a * x + y`), with the same values."""
    x, y = np.ones(1000), np.arange(1000.0)
    plain = njit(no_rewrites=True)(axpy)
    assert allocations(plain, 2.0, x, y) == 2
    assert allocations(njit(axpy), 2.0, x, y) == 1
    np.testing.assert_array_equal(plain(2.0, x, y), axpy(2.0, x, y))
    with pytest.raises(KeyError, match="Unrecognized options"):
        njit(no_rewritez=True)(axpy)
