"""parallel=True on NumPy code: array expressions and whole-array sum/prod/mean become
parfors (and fuse), checked against the same function run by CPython with NumPy (the
oracle) on random inputs, with 1, 2 and NUMBA_NUM_THREADS threads. Integer results are
exact; float reductions within tolerance (partial sums add in another order). The
autouse fixture in conftest.py checks NRT balance."""

import re
import warnings

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, prange
from numba_rs.errors import NumbaPerformanceWarning

RNG = np.random.default_rng(7)
# Large enough that the runtime splits the loop over the pool, and small ones that run
# inline.
SIZES = [0, 1, 7, 1000, 400_000]


def par(f):
    return njit(parallel=True)(f)


def stats(capfd, f, *args, parallel=True):
    """Compile and run `f` with `parallel=` and NUMBA_DEBUG_ARRAY_OPT_STATS; its result
    and what the compilation printed."""
    import os

    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        r = njit(parallel=parallel)(f)(*args)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    return r, capfd.readouterr().out


def fusions(out):
    """The (fused, into) loop ids the stats report."""
    return [
        (int(a), int(b))
        for a, b in re.findall(r"Parallel for-loop #(\d+) is fused into for-loop #(\d+)", out)
    ]


def produced(out):
    return [int(x) for x in re.findall(r"Parallel for-loop #(\d+) is produced", out)]


# ------------------------------------------------------------ array expressions


def axpy(a, x, y):
    return a * x + y


def trig(x, y):
    return np.sin(x) * np.cos(y) + np.sqrt(np.abs(x - y))


def cmp_expr(x, y):
    return (x > y) & (x > 0.5)


def int_expr(a, b):
    return (a * 3 + b) // 2 - (a % 5)


@pytest.mark.parametrize("n", SIZES)
def test_axpy_matches_numpy(nthreads, n):
    x, y = RNG.random(n), RNG.random(n)
    np.testing.assert_allclose(par(axpy)(2.5, x, y), axpy(2.5, x, y), rtol=0, atol=0)


@pytest.mark.parametrize("n", [5, 300_000])
def test_ufunc_tree(nthreads, n):
    x, y = RNG.random(n), RNG.random(n)
    np.testing.assert_allclose(par(trig)(x, y), trig(x, y), rtol=1e-15)


@pytest.mark.parametrize("n", [5, 300_000])
def test_boolean_result(nthreads, n):
    x, y = RNG.random(n), RNG.random(n)
    r = par(cmp_expr)(x, y)
    assert r.dtype == np.bool_
    np.testing.assert_array_equal(r, cmp_expr(x, y))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_expression_exact(nthreads, dtype):
    a = RNG.integers(0, 100, 200_001).astype(dtype)
    b = RNG.integers(0, 100, 200_001).astype(dtype)
    r = par(int_expr)(a, b)
    # Numba types the literal as int64 (unlike NumPy 2's weak scalars): the serial
    # compilation gives the dtype, NumPy in int64 the values.
    assert r.dtype == njit(int_expr)(a, b).dtype
    np.testing.assert_array_equal(r, int_expr(a.astype(np.int64), b.astype(np.int64)))


def test_two_dimensional_and_broadcasting(nthreads):
    m = RNG.random((700, 600))
    row = RNG.random(600)
    col = RNG.random((700, 1))
    f = par(axpy)
    np.testing.assert_array_equal(f(2.0, m, m), axpy(2.0, m, m))
    np.testing.assert_array_equal(f(2.0, m, row), axpy(2.0, m, row))
    np.testing.assert_array_equal(f(2.0, m, col), axpy(2.0, m, col))
    # A stretched axis of length 1 in the first operand, as NumPy broadcasts.
    np.testing.assert_array_equal(f(2.0, col, row), axpy(2.0, col, row))


def test_non_contiguous_operands(nthreads):
    m = RNG.random((500, 400))
    t = m.T  # F order
    s = m[::2, ::3]
    f = par(axpy)
    np.testing.assert_array_equal(f(1.5, t, t), axpy(1.5, t, t))
    np.testing.assert_array_equal(f(1.5, s, s), axpy(1.5, s, s))


def test_complex_expression(nthreads):
    z = RNG.random(100_000) + 1j * RNG.random(100_000)
    w = RNG.random(100_000) + 1j * RNG.random(100_000)
    np.testing.assert_allclose(par(axpy)(2 - 1j, z, w), axpy(2 - 1j, z, w), rtol=1e-15)


def test_size_mismatch_is_numbas_assertion():
    # Numba 0.68.1's array analysis asserts the sizes before the parallel loop:
    # AssertionError('Sizes of x, y do not match on <file> (<line>)'), naming the
    # expression's arrays and the statement's line.
    f = par(axpy)
    line = axpy.__code__.co_firstlineno + 1
    with pytest.raises(AssertionError) as e:
        f(1.0, np.ones(3), np.ones(4))
    assert str(e.value) == f"Sizes of x, y do not match on {__file__} ({line})"
    # The serial code keeps NumPy's error.
    with pytest.raises(ValueError, match="could not be broadcast"):
        njit(axpy)(1.0, np.ones(3), np.ones(4))


def test_length_one_axes_still_broadcast(nthreads):
    # Unlike Numba (whose assertion also rejects a run-time length of 1), an axis of
    # length 1 stretches as in NumPy and the serial code.
    x, y = RNG.random((5, 1)), RNG.random(7)
    np.testing.assert_array_equal(par(axpy)(2.0, x, y), axpy(2.0, x, y))
    np.testing.assert_array_equal(par(axpy)(2.0, y[:1], y), axpy(2.0, y[:1], y))


def test_slices_of_unequal_length_assert():
    def shifted(a, m):
        (n,) = a.shape
        return a[0 : n - 2] + a[1:m]

    a = RNG.random(10)
    np.testing.assert_array_equal(par(shifted)(a, 9), shifted(a, 9))
    with pytest.raises(AssertionError, match="do not match on"):
        par(shifted)(a, 10)


def store_sum(a, b, c):
    a[:] = b + c
    return a


def store_slice(a, b):
    a[1:3] = b
    return a


def store_column(a, b):
    a[:, 1] = b
    return a


def scale_in_place(a, b):
    a *= b
    return a


def line_of(f, k=1):
    return f.__code__.co_firstlineno + k


def test_store_and_in_place_sizes_are_numbas_assertions(nthreads):
    # Numba 0.68.1 asserts a store's value against its target, after the value
    # expression's own leaves, and an in-place operator's operands (checked against
    # Numba's own output for these functions).
    at = lambda f: f"on {__file__} ({line_of(f)})"  # noqa: E731
    cases = [
        (store_sum, (np.zeros(5), np.ones(3), np.ones(3)), "a, $binop_add8.2"),
        (store_sum, (np.zeros(5), np.ones(3), np.ones(4)), "b, c"),
        (store_slice, (np.zeros(5), np.ones(3)), "a, b"),
        (store_column, (np.zeros((2, 5)), np.ones(3)), "a, b"),
        (scale_in_place, (np.zeros(5), np.ones(3)), "a, b"),
    ]
    for f, args, names in cases:
        with pytest.raises(AssertionError) as e:
            par(f)(*args)
        assert str(e.value) == f"Sizes of {names} do not match {at(f)}"
        # Serially these are NumPy's (and Numba's serial) ValueErrors.
        with pytest.raises(ValueError):
            njit(f)(*[x.copy() for x in args])
    # Shapes that agree (or broadcast, as in NumPy) store as NumPy does.
    for f, args in [
        (store_sum, (np.zeros(5), RNG.random(5), RNG.random(1))),
        (store_slice, (np.zeros(5), RNG.random(2))),
        (store_slice, (np.zeros(5), RNG.random(1))),
        (store_column, (np.zeros((4, 3)), RNG.random(4))),
        (scale_in_place, (RNG.random((3, 4)), RNG.random(4))),
    ]:
        got = par(f)(*[x.copy() for x in args])
        np.testing.assert_array_equal(got, f(*[x.copy() for x in args]))


def joins(a, b):
    return (
        np.concatenate((a, b)),
        np.concatenate((a, b, a), axis=1),
        np.stack((a, a)),
        np.hstack((a, b)),
        np.vstack((a, b)),
        np.dstack((b, b)),
    )


def join_rows(a, b):
    return np.concatenate((a, b, a), axis=1)


def test_joins_assert_their_fixed_axes_as_numba(nthreads):
    # Numba's array analysis asserts the axes a join keeps before the call:
    # `Sizes of a_size0.N, b_size0.N` for concatenate (its shape variables; ours carry
    # no SSA suffix), whole arrays for stack. (A raise frees nothing allocated before
    # it, so each failing join is alone in its function.)
    a, b = RNG.random((2, 3)), RNG.random((2, 3))
    got = par(joins)(a, b)
    for g, w in zip(got, joins(a, b)):
        np.testing.assert_array_equal(g, w)
    del got, g  # the results are NRT arrays the fixture counts
    with pytest.raises(AssertionError) as e:
        par(join_rows)(a, RNG.random((3, 3)))
    where = f"on {__file__} ({line_of(join_rows)})"
    assert str(e.value) == f"Sizes of a_size0, b_size0 do not match {where}"
    with pytest.raises(ValueError, match="dimension 0"):
        njit(join_rows)(a, RNG.random((3, 3)))

    def stacked(a, b):
        return np.stack((a, b))

    with pytest.raises(AssertionError, match=r"^Sizes of a, b do not match on "):
        par(stacked)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="same shape"):
        njit(stacked)(np.ones(3), np.ones(4))


def dot(a, b):
    return np.dot(a, b)


@pytest.mark.parametrize(
    "sa, sb, names",
    [((2, 3), (4, 2), "a_size1, b_size0"), ((3,), (4, 2), "a_size0, b_size0"), ((2, 3), (4,), "a_size1, b_size0")],
)
def test_dot_asserts_the_contracted_axis(sa, sb, names):
    with pytest.raises(AssertionError) as e:
        par(dot)(np.ones(sa), np.ones(sb))
    assert str(e.value) == f"Sizes of {names} do not match on {__file__} ({line_of(dot)})"
    a, b = RNG.random(sa), RNG.random(sb[:-1] + (sa[-1],) if len(sb) == 1 else (sa[-1],) + sb[1:])
    np.testing.assert_allclose(par(dot)(a, b), np.dot(a, b), rtol=1e-12)


def join_in_loop(a, b, n):
    t = 0.0
    for i in prange(n):
        t += np.concatenate((a, b), axis=1).sum() + i
    return t


def test_join_assertion_in_a_parallel_loop(nthreads):
    a, b = RNG.random((2, 3)), RNG.random((2, 2))
    assert par(join_in_loop)(a, b, 50) == pytest.approx(join_in_loop(a, b, 50), rel=1e-12)
    with pytest.raises(AssertionError, match="Sizes of a_size0, b_size0 do not match"):
        par(join_in_loop)(a, RNG.random((3, 2)), 50)


def test_division_follows_numpy(nthreads):
    def div(a, b):
        return a / b

    a = np.array([1.0, -1.0, 0.0, 2.0] * 50_000)
    b = np.array([0.0, 0.0, 0.0, 4.0] * 50_000)
    with np.errstate(all="ignore"):
        e = div(a, b)
    np.testing.assert_array_equal(par(div)(a, b), e)


def test_expression_parfor_is_reported(capfd):
    x = RNG.random(10)
    _, out = stats(capfd, axpy, 2.0, x, x)
    assert re.search(
        r"Parallel for-loop #\d+ is produced from pattern "
        r"'array expression \(\(a mul x\) add y\)' at .*test_parallel_numpy.py \(\d+\)",
        out,
    ), out


# ------------------------------------------------------------ reductions


def np_sum(a):
    return np.sum(a)


def m_sum(a):
    return a.sum()


def np_prod(a):
    return np.prod(a)


def m_prod(a):
    return a.prod()


def np_mean(a):
    return np.mean(a)


def m_mean(a):
    return a.mean()


@pytest.mark.parametrize("f", [np_sum, m_sum, np_mean, m_mean])
@pytest.mark.parametrize("n", SIZES[1:])
def test_float_reductions(nthreads, f, n):
    a = RNG.random(n)
    assert par(f)(a) == pytest.approx(f(a), rel=1e-12)


@pytest.mark.parametrize("f", [np_sum, m_sum])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint32, np.bool_])
def test_integer_sums_exact(nthreads, f, dtype):
    a = RNG.integers(0, 100, 300_001).astype(dtype)
    r = par(f)(a)
    e = f(a)
    assert r == e
    assert type(r) is type(njit(f)(a))  # boxed as the serial compilation boxes it


@pytest.mark.parametrize("f", [np_prod, m_prod])
def test_products(nthreads, f):
    a = 1.0 + RNG.random(200_000) * 1e-5
    assert par(f)(a) == pytest.approx(f(a), rel=1e-12)
    k = RNG.integers(-3, 4, 300_000)
    assert par(f)(k) == f(k)  # integer product: exact (wrapping, as NumPy)


def test_reductions_of_two_dimensional_and_strided(nthreads):
    m = RNG.random((600, 500))
    for a in (m, m.T, m[::3, 1::2]):
        assert par(m_sum)(a) == pytest.approx(a.sum(), rel=1e-12)
        assert par(np_mean)(a) == pytest.approx(a.mean(), rel=1e-12)


def test_empty_reductions():
    e = np.zeros(0)
    assert par(np_sum)(e) == 0.0
    assert par(np_prod)(e) == 1.0
    assert np.isnan(par(m_mean)(e))


def np_var_std(a):
    return np.var(a), np.std(a)


def m_var_std(a):
    return a.var(), a.std()


@pytest.mark.parametrize("f", [np_var_std, m_var_std])
def test_variance_and_standard_deviation(nthreads, f):
    """Two parfors (the mean, then the squared distances), against NumPy and the serial
    build, for float, integer, complex, strided and empty arrays."""
    m = RNG.random((400, 301))
    cases = [RNG.standard_normal(100_001), m, m.T[::2], RNG.integers(-50, 50, 7_777),
             RNG.random(5_000) + 1j * RNG.random(5_000), np.array([3.5])]
    for a in cases:
        got = par(f)(a)
        np.testing.assert_allclose(got, f(a), rtol=1e-11)
        np.testing.assert_allclose(got, njit(f)(a), rtol=1e-11)
    with np.errstate(all="ignore"):
        assert np.isnan(par(f)(np.zeros(0))).all()


def test_variance_reports_numbas_loops(capfd):
    _, out = stats(capfd, np_var_std, RNG.random(100))
    assert "(('mean', 'numpy')" in out and "(('var', 'numpy')" in out and "(('std', 'numpy')" in out


def fill_then_use(a, v):
    s0 = a.sum()
    a.fill(v)
    return s0, a.sum(), a + 1


def test_fill_is_a_parfor_that_fuses(nthreads, capfd):
    """`a.fill(v)` writes every element (any layout, the value cast to the dtype) and
    fuses with the element-wise work after it, as in Numba."""
    for a in [RNG.random(10_001), np.zeros((30, 41), dtype=np.int32)[:, ::3]]:
        want_a = a.copy()
        want = fill_then_use(want_a, 2.5)
        got = par(fill_then_use)(a, 2.5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_array_equal(a, want_a)
    _, out = stats(capfd, fill_then_use, np.zeros(50), 1.0)
    assert "(('fill', Var(a, " in out
    assert fusions(out), out


def linspace_scaled(a, b, n):
    x = np.linspace(a, b, n)
    return x * 2


def linspace_default(a, b):
    return np.linspace(a, b)


def test_linspace_is_a_parfor(nthreads, capfd):
    """Numba's parallel `np.linspace`: the same values NumPy gives (bit for bit, `stop`
    exactly at the end), a negative count NumPy's ValueError."""
    for args in [(0.0, 1.0, 5), (-3, 7, 100_001), (2.5, 2.5, 1), (1.0, 0.0, 0)]:
        np.testing.assert_array_equal(par(linspace_scaled)(*args), np.linspace(*args) * 2)
    np.testing.assert_array_equal(par(linspace_default)(1, 9), np.linspace(1, 9))
    with pytest.raises(ValueError, match="must be non-negative"):
        par(linspace_scaled)(0.0, 1.0, -2)
    _, out = stats(capfd, linspace_scaled, 0.0, 1.0, 10)
    assert "(('linspace', 'numpy')" in out


@pytest.mark.parametrize(
    "args", [(2, 4 + 5j), (2, 5 + 4j, 30), (-2.5 - 1j, 1j, 7), (3j, 2, 1), (1e300 + 3j, -3.5j, 1001)]
)
def test_complex_linspace_matches_numpy_bit_for_bit(nthreads, args):
    """A complex end gives a complex128 linspace, bit-equal to NumPy's (which scales
    each part of the span by 1/div), serially and as a parfor."""
    f = linspace_default if len(args) == 2 else np.linspace
    fn = linspace_default if len(args) == 2 else (lambda a, b, n: np.linspace(a, b, n))
    want = f(*args)
    for got in (par(fn)(*args), njit(fn)(*args)):
        assert got.dtype == want.dtype == np.complex128
        np.testing.assert_array_equal(got, want)


def arange_stop(n):
    return np.arange(n) * 2


def arange_bounds(a, b, c):
    return np.arange(a, b, c)


def arange_dtype(a, b):
    return np.arange(a, b, dtype=np.float32)


ARANGE_CASES = [
    (arange_stop, (11,)),
    (arange_stop, (0,)),
    (arange_stop, (-4,)),
    (arange_stop, (30.5,)),
    (arange_stop, (complex(4, 5),)),
    (arange_bounds, (10, -7, -3)),
    (arange_bounds, (0.1, 1.25, 0.25)),
    (arange_bounds, (1 + 1j, 10 + 5j, 1 + 0.5j)),
    (arange_bounds, (-1 - 1j, 3 + 9j, 0.5 + 1j)),
    (arange_dtype, (3, 100_003)),
]


@pytest.mark.parametrize("f, args", ARANGE_CASES)
def test_arange_is_a_parfor(nthreads, f, args):
    """Numba's parallel `np.arange` (`arange_parallel_impl`): NumPy's values and dtype for
    int, float and complex bounds and an explicit dtype."""
    want = f(*args)
    for got in (par(f)(*args), njit(f)(*args)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_arange_parfor_fuses_and_checks_its_step(capfd):
    _, out = stats(capfd, arange_stop, 10)
    assert "(('arange', 'numpy')" in out
    assert fusions(out), out
    with pytest.raises(ZeroDivisionError):
        par(arange_bounds)(0, 10, 0)
    with pytest.raises(ZeroDivisionError):
        par(arange_bounds)(0.0, 1.0, 0.0)


def iadd(a, b):
    a += b
    return a


def imul(a, b):
    a *= b
    return a


def ifloordiv(a, b):
    a //= b
    return a


def shift_add(a):
    x = a[1:]
    x += a[:-1]
    return a


INPLACE_CASES = [
    (iadd, lambda: (np.arange(10) + 10, np.arange(10) + 100)),
    (iadd, lambda: (RNG.random((300, 70)), RNG.random(70))),
    (iadd, lambda: (RNG.random((30, 7)), 2.5)),
    (iadd, lambda: (np.asfortranarray(RNG.random((50, 60))), RNG.random((50, 60)))),
    (imul, lambda: (np.arange(20_001, dtype=np.int32), np.int32(3))),
    (ifloordiv, lambda: (np.arange(-10, 10), np.array([3, 0] * 10))),
]


@pytest.mark.parametrize("f, make", INPLACE_CASES)
def test_inplace_operators_on_arrays_are_parfors(nthreads, capfd, f, make):
    """`a op= b` on an array (Numba's ConvertInplaceBinop): NumPy's values in `a`, `b`
    broadcast, the result `a` itself."""
    a, b = make()
    want_a = a.copy()
    with np.errstate(all="ignore"):
        want = f(want_a, b)
    got_a = a.copy()
    got, out = stats(capfd, f, got_a, b)
    assert got is got_a
    np.testing.assert_array_equal(got, want)
    assert "('inplace_binop', '')" in out


def test_inplace_operator_reads_an_overlapping_operand_before_writing(nthreads):
    a = np.arange(1000.0)
    np.testing.assert_array_equal(par(shift_add)(a.copy()), shift_add(a.copy()))


def test_inplace_operator_checks_the_output_shape_and_can_be_switched_off(capfd):
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        par(iadd)(np.zeros(3), np.zeros((2, 3)))
    a = np.ones(5)
    _, out = stats(capfd, iadd, a, a * 2, parallel={"inplace_binop": False})
    assert "inplace_binop" not in out
    np.testing.assert_array_equal(a, 3.0)


def set_all(a, v):
    a[:] = v
    return a


def test_setitem_option_switches_setitem_parfors_off(capfd):
    a = np.zeros(7)
    _, out = stats(capfd, set_all, a, 2.0, parallel={"setitem": False})
    assert "Parallel for-loop" not in out
    np.testing.assert_array_equal(a, 2.0)
    _, out = stats(capfd, set_all, a, 3.0)
    assert "Parallel for-loop" in out
    np.testing.assert_array_equal(a, 3.0)


def vdot(a, b):
    return np.dot(a, b)


def test_vector_dot_stays_serial(nthreads, capfd):
    """`np.dot` of vectors stays the serial BLAS call under parallel=True: Numba's
    reduction loop (`dotvv_parallel_impl`) measured half the speed of the BLAS dot up to
    10^5 items on this machine, and parallel code must not lose to serial. A matrix times
    a vector too: Numba's row loop (`dotmv_parallel_impl`) ran at 0.17x-0.48x of the
    serial product (vectorised, and threaded itself for large operands) on 50x50 to
    2000x2000 matrices."""
    a, b = RNG.random(10_001), RNG.random(10_001)
    f = par(vdot)
    # Numba's warning that parallel=True found nothing to parallelise.
    with pytest.warns(numba_rs.errors.NumbaPerformanceWarning):
        assert f(a, b) == pytest.approx(np.dot(a, b), rel=1e-12)
    with pytest.raises(ValueError, match=r"incompatible array sizes .*\(vector \* vector\)"):
        f(a, b[:7])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out = stats(capfd, vdot, a[:10], b[:10])
        assert "(('dot', 'numpy')" not in out
        m = RNG.random((300, 200))
        r, out = stats(capfd, vdot, m, b[:200])
    assert "(('dot', 'numpy')" not in out
    np.testing.assert_allclose(r, m @ b[:200], rtol=1e-12)


def test_complex_and_float32_sums(nthreads):
    z = RNG.random(100_000) + 1j * RNG.random(100_000)
    assert par(m_sum)(z) == pytest.approx(z.sum(), rel=1e-12)
    f32 = RNG.random(100_000).astype(np.float32)
    r = par(m_sum)(f32)
    assert float(np.float32(r)) == r  # accumulated in float32, as NumPy does
    assert r == pytest.approx(f32.sum(), rel=1e-4)


def test_reduction_with_axis_stays_serial_and_correct():
    def by_axis(a):
        return a.sum(axis=0)

    m = RNG.random((50, 40))
    with pytest.warns(NumbaPerformanceWarning):
        f = par(by_axis)
        np.testing.assert_allclose(f(m), by_axis(m))


# ------------------------------------------------------------ fusion


def pipeline(a, b, c):
    d = a * b + np.sin(c)
    s = np.sum(d)
    t = a.sum()
    m = d.mean()
    return d, s + t + m


def test_fusion_of_expression_and_reductions_over_its_result(capfd, nthreads):
    a, b, c = (RNG.random(300_000) for _ in range(3))
    (d, total), out = stats(capfd, pipeline, a, b, c)
    ed, etotal = pipeline(a, b, c)
    np.testing.assert_allclose(d, ed, rtol=1e-15)
    assert total == pytest.approx(etotal, rel=1e-12)
    ids = [int(x) for x in re.findall(r"Parallel for-loop #(\d+) is produced", out)]
    assert len(ids) == 4
    fused = re.findall(r"Parallel for-loop #(\d+) is fused into for-loop #(\d+)\.", out)
    # np.sum(d) and d.mean() loop over d; a.sum() loops over `a`, which Numba's array
    # analysis asserts equal in size to b and c (so to d): all three join d's loop, as
    # in Numba 0.68.1.
    assert sorted(fused) == sorted([(str(i), str(ids[0])) for i in ids[1:]])
    assert re.search(r"After fusion, function pipeline has 1 parallel for-loop\(s\)", out)


def chain(a):
    b = a * 2.0
    c = b + 1.0
    return b, c, c.sum()


def test_fusion_of_a_chain_through_a_kept_intermediate(capfd, nthreads):
    a = RNG.random((400, 300))
    (b, c, s), out = stats(capfd, chain, a)
    eb, ec, es = chain(a)
    np.testing.assert_array_equal(b, eb)
    np.testing.assert_array_equal(c, ec)
    assert s == pytest.approx(es, rel=1e-12)
    assert len(re.findall(r"is fused into", out)) == 2
    assert re.search(r"has 1 parallel for-loop\(s\)", out)


def normalise(a):
    s = a.sum()
    return a / s


def test_no_fusion_across_a_reduction_the_next_loop_reads(capfd, nthreads):
    a = RNG.random(200_000)
    r, out = stats(capfd, normalise, a)
    np.testing.assert_allclose(r, normalise(a), rtol=1e-12)
    assert "is fused into" not in out


def shifted(a):
    b = a + 1.0
    c = b[1:] + b[:-1]
    return c.sum()


def test_no_fusion_when_a_loop_reads_other_positions(capfd, nthreads):
    a = RNG.random(100_001)
    r, out = stats(capfd, shifted, a)
    assert r == pytest.approx(shifted(a), rel=1e-12)
    # c's loop reads views of b, not b at its own position: only c.sum() joins c's loop.
    b_loop, c_loop, sum_loop = produced(out)
    assert fusions(out) == [(sum_loop, c_loop)]


def broadcast_then_sum(a, b):
    d = a + b
    return d.sum() + a.sum()


def test_broadcast_result_fused_with_operand_loop(capfd):
    # As in Numba 0.68.1: d.sum() and a.sum() both join d's loop, the latter on the
    # strength of the expression's size assertion (a's shape is d's).
    a = RNG.random((300, 200))
    b = RNG.random(200)
    r, out = stats(capfd, broadcast_then_sum, a, b)
    assert r == pytest.approx(broadcast_then_sum(a, b), rel=1e-12)
    d_loop, d_sum, a_sum = produced(out)
    assert sorted(fusions(out)) == sorted([(d_sum, d_loop), (a_sum, d_loop)])


def test_fused_broadcast_of_a_length_one_axis_raises_numbas_assertion():
    # With a stretched as NumPy would, a's loop would be shorter than d's: Numba's
    # assertion (its text, checked against Numba 0.68.1) raises instead.
    line = broadcast_then_sum.__code__.co_firstlineno + 1
    with pytest.raises(AssertionError) as e:
        par(broadcast_then_sum)(RNG.random((300, 1)), RNG.random(200))
    assert str(e.value) == f"Sizes of a, b do not match on {__file__} ({line})"


# ------------------------------------------------------------ mixed and options


def mixed(a):
    b = np.sqrt(a) + 1.0
    s = 0.0
    for i in prange(b.shape[0]):
        s += b[i] * i
    return s + b.mean()


def test_prange_and_numpy_parfors_together(nthreads):
    a = RNG.random(300_000)
    assert par(mixed)(a) == pytest.approx(mixed(a), rel=1e-12)


def test_numpy_option_off_keeps_serial():
    x = RNG.random(100)
    with pytest.warns(NumbaPerformanceWarning, match="no transformation for parallel"):
        f = njit(parallel={"numpy": False})(axpy)
        np.testing.assert_array_equal(f(2.0, x, x), axpy(2.0, x, x))


def test_fusion_option_off(capfd):
    a = RNG.random(100)
    (b, c, s), out = stats(capfd, chain, a, parallel={"fusion": False})
    assert "is fused into" not in out
    assert re.search(r"has 3 parallel for-loop\(s\)", out)
    assert s == pytest.approx(chain(a)[2])


def test_no_warning_when_numpy_code_parallelises():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        par(axpy)(1.0, np.ones(10), np.ones(10))


def test_parallel_loops_listed_in_diagnostics(capsys):
    f = par(pipeline)
    a = RNG.random(10)
    f(a, a, a)
    f.parallel_diagnostics(level=1)
    out = capsys.readouterr().out
    assert re.search(r"d = a \* b \+ np\.sin\(c\)-+\| #\d+", out), out
    assert re.search(r"t = a\.sum\(\)-+\| #\d+", out), out
    # After fusion d's loop took np.sum(d), a.sum() and d.mean(), as in Numba's report.
    ids = [int(x) for x in re.findall(r"\| #(\d+)", out)]
    first, _s, t, m = ids
    assert f"+--{first} (parallel, fused with loop(s): {_s}, {t}, {m})" in out, out
    assert f"Parallel region 0 (loop #{first}) had 3 loop(s) fused." in out
    assert "Parallel region 1" not in out
    f.parallel_diagnostics(level=3)
    out = capsys.readouterr().out
    assert f"+--{first} has the following loops fused into it:" in out
    # Wrapped at 80 columns, as Numba's print_wrapped does.
    assert "there are 1 parallel for-\nloop(s) (originating from loops labelled:" in out


# ------------------------------------------------------------ temporaries


def norm_of(a, b):
    d = a * b
    return np.sqrt(np.sum(d * d)) + d.mean()


def sum_of_sum(a, b):
    return np.sum(a + b)


@pytest.mark.parametrize("n", [0, 3, 250_000])
def test_temporaries_removed_after_fusion_keep_results(nthreads, n):
    a, b = RNG.random(n), RNG.random(n)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of nothing
        e = norm_of(a, b)
    r = par(norm_of)(a, b)
    if n == 0:
        assert np.isnan(r) and np.isnan(e)
    else:
        assert r == pytest.approx(e, rel=1e-12)


def test_removed_temporary_still_checks_broadcasting():
    f = par(sum_of_sum)
    m = RNG.random((300, 200))
    assert f(m, m[0]) == pytest.approx(sum_of_sum(m, m[0]), rel=1e-12)
    assert f(m, m[:, :1]) == pytest.approx(sum_of_sum(m, m[:, :1]), rel=1e-12)
    # Numba's size assertion, though the temporary itself is never stored.
    with pytest.raises(AssertionError, match="do not match on"):
        f(np.ones(3), np.ones(4))


# ------------------------------------------------------------ code written for Numba


def test_numba_prange_and_thread_queries_in_code_written_for_numba():
    # Real Numba's own objects are the input here, so it runs only where Numba is
    # installed (this machine's .venv; the CI venv has no Numba).
    numba = pytest.importorskip("numba")

    def f(a):
        s = 0.0
        for i in numba.prange(a.shape[0]):
            s += a[i]
        return s, numba.get_num_threads() >= 1

    from numba import prange as nprange

    def g(a):
        s = 0.0
        for i in nprange(a.shape[0]):
            s += a[i]
        return s

    a = RNG.random(100_000)
    s, ok = par(f)(a)
    assert s == pytest.approx(a.sum(), rel=1e-12) and ok
    assert par(g)(a) == pytest.approx(a.sum(), rel=1e-12)


def test_numpy_c_named_dtype_aliases():
    def make(n):
        return np.zeros(n, dtype=np.int_) + np.ones(n, dtype=np.intc), np.empty(0, np.single)

    r, e = par(make)(5), make(5)
    assert r[0].dtype == e[0].dtype and r[1].dtype == e[1].dtype
    np.testing.assert_array_equal(r[0], e[0])


# ------------------------------------------------------------ min / max


def extremes(a):
    return a.min(), a.max(), np.min(a), np.amax(a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8, np.uint16, np.bool_])
def test_min_max_match_numpy(nthreads, dtype):
    a = (RNG.random(300_001) * 200 - 100).astype(dtype)
    r = par(extremes)(a)
    assert r == extremes(a)
    assert r == njit(extremes)(a)  # and the serial compilation, value and type
    assert [type(x) for x in r] == [type(x) for x in njit(extremes)(a)]


def test_min_max_nan_propagates_like_numpy(nthreads):
    a = RNG.random(200_000)
    a[123_457] = np.nan
    assert all(np.isnan(x) for x in par(extremes)(a))


def test_min_max_of_empty_is_numpys_error():
    def mn(a):
        return a.min()

    def mx(a):
        return np.max(a)

    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        par(mn)(np.zeros(0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        par(mx)(np.zeros((3, 0)))


def spread(a, b):
    d = a * b
    return d.max() - d.min() + d.sum()


def test_min_max_fuse_with_the_loop_they_read(capfd, nthreads):
    a, b = RNG.random((300, 400)), RNG.random((300, 400))
    r, out = stats(capfd, spread, a, b)
    assert r == pytest.approx(spread(a, b), rel=1e-12)
    assert len(re.findall(r"is fused into", out)) == 3
    assert re.search(r"has 1 parallel for-loop\(s\)", out)


# ------------------------------------------------------------ creation and random draws


def zeros_ones(n):
    a = np.zeros(n)
    b = np.ones((n, 3), np.int32)
    c = np.ones(n, dtype=np.complex128)
    d = np.zeros((2, n), np.bool_)
    return a, b, c, d


@pytest.mark.parametrize("n", SIZES)
def test_zeros_and_ones_match_numpy(nthreads, n):
    got = par(zeros_ones)(n)
    for g, w in zip(got, zeros_ones(n)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_zeros_and_ones_become_numpy_mapping_parfors(capfd):
    r, out = stats(capfd, zeros_ones, 10)
    assert "'('zeros function', 'NumPy mapping')'" in out
    assert "'('ones function', 'NumPy mapping')'" in out
    assert len(produced(out)) == 4


def created_then_used(n):
    a = np.ones(n)
    b = np.zeros(n)
    return np.sum(a * 2.0 + b)


def test_created_arrays_of_one_shape_fuse(capfd, nthreads):
    r, out = stats(capfd, created_then_used, 1000)
    assert r == 2000.0
    ids = produced(out)
    # ones, zeros, the expression and the sum: one loop.
    assert len(ids) == 4
    assert sorted(fusions(out)) == sorted((i, ids[0]) for i in ids[1:])


def negative_zeros(n):
    return np.zeros(n)


def test_creation_errors_as_numpy():
    with pytest.raises(ValueError, match="negative dimensions"):
        par(negative_zeros)(-1)


def draws(n):
    np.random.seed(42)
    return (
        np.random.random(n),
        np.random.normal(1.0, 2.0, (n, 2)),
        np.random.randint(0, 10, n),
        np.random.rand(n, 2),
        np.random.randn(n),
        np.random.uniform(-1.0, 1.0, n),
        np.random.exponential(2.0, n),
        np.random.standard_normal(n),
    )


def test_random_draws_on_one_thread_equal_the_serial_sequence():
    # One thread runs every loop inline on the caller, whose generator the seed set:
    # the draws come in C order, loop after loop, as the serial code draws them.
    old = numba_rs.get_num_threads()
    numba_rs.set_num_threads(1)
    try:
        got = par(draws)(1000)
    finally:
        numba_rs.set_num_threads(old)
    want = njit(draws)(1000)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_random_draws_in_parallel_have_the_distributions(nthreads):
    n = 200_000
    r, nrm, ri, rnd, rn, un, ex, sn = par(draws)(n)
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.01
    assert nrm.shape == (n, 2) and abs(nrm.mean() - 1.0) < 0.03 and abs(nrm.std() - 2.0) < 0.03
    assert ri.dtype == np.int64 and ri.min() == 0 and ri.max() == 9
    assert rnd.shape == (n, 2) and 0 <= rnd.min() and rnd.max() < 1
    assert abs(rn.mean()) < 0.02 and abs(rn.std() - 1) < 0.02
    assert -1 <= un.min() and un.max() < 1
    assert ex.min() >= 0 and abs(ex.mean() - 2.0) < 0.05
    assert abs(sn.std() - 1) < 0.02
    # Each thread draws from its own generator: no two positions repeat a sequence.
    assert len(np.unique(r)) == n


def test_random_loops_keep_their_order(capfd):
    def two(n):
        np.random.seed(1)
        a = np.random.random(n)
        b = np.random.random(n)
        return a, b

    (a, b), out = stats(capfd, two, 10)
    assert len(produced(out)) == 2 and fusions(out) == []
    np.random.seed(1)
    assert np.array_equal(a, np.random.random(10))
    assert np.array_equal(b, np.random.random(10))


def test_random_draw_fuses_with_the_expression_reading_it(capfd):
    def scaled(n):
        return np.random.random(n) * 2.0

    r, out = stats(capfd, scaled, 1000)
    assert len(fusions(out)) == 1
    assert r.shape == (1000,) and 0 <= r.min() and r.max() < 2


# ------------------------------------------------------------ argmin / argmax


def arg_all(a):
    return np.argmin(a), np.argmax(a), a.argmin(), a.argmax()


@pytest.mark.parametrize(
    "make",
    [
        lambda: RNG.random(1_000_000),
        lambda: RNG.random((700, 900)),
        lambda: RNG.random(2_000)[::-3],
        lambda: RNG.integers(-5, 5, 999_999),
        lambda: RNG.integers(0, 3, 500_000).astype(np.uint8),
        lambda: RNG.random(400_000) > 0.5,
        lambda: np.array([3.0, 1.0, 1.0, np.nan, 0.0, np.nan]),
        lambda: np.full(300_000, 7.0),
    ],
)
def test_argmin_argmax_match_numpy(nthreads, make):
    a = make()
    assert par(arg_all)(a) == arg_all(a)


def test_argmin_argmax_first_nan_and_first_tie_across_divisions(nthreads):
    a = RNG.random(1_000_000)
    a[[10, 600_000]] = -5.0  # a tie: the first position wins
    a[[900_000]] = 9.0
    assert par(arg_all)(a) == arg_all(a) == (10, 900_000, 10, 900_000)
    a[[700_000, 800_000]] = np.nan  # the first NaN wins both
    assert par(arg_all)(a) == arg_all(a) == (700_000,) * 4


def test_argmin_of_empty_is_numpys_error():
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        par(arg_all)(np.zeros(0))


def test_argmax_fuses_with_the_expression_it_reads(capfd):
    def k(a):
        d = a * 2
        return d.argmax(), d.sum()

    r, out = stats(capfd, k, np.arange(10.0))
    assert r == (9, 90.0)
    assert "(('argmax', 'numpy')" in out and len(fusions(out)) == 2


# ------------------------------------------------------------ setitem


def set_expr(out, a, b):
    out[:] = a * b + 1.0
    return out


def set_shifted(a):
    a[1:] = a[:-1] + 1.0  # the source overlaps the destination: read from a copy
    return a


def set_mask(a, m):
    a[m] = 7
    return a


def set_cols(a, v):
    a[:, 1:3] = v
    return a


def set_slice(a, r):
    a[2:-2] = r
    a[0] = 5
    return a


@pytest.mark.parametrize("n", [0, 5, 1_000_000])
def test_setitem_of_expressions_and_overlaps(nthreads, n):
    a, b = RNG.random(n), RNG.random(n)
    np.testing.assert_array_equal(par(set_expr)(np.zeros(n), a, b), set_expr(np.zeros(n), a, b))
    x = np.arange(float(n))
    np.testing.assert_array_equal(par(set_shifted)(x.copy()), set_shifted(x.copy()))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_masked_setitem(nthreads, dtype):
    a = RNG.integers(0, 100, (800, 700)).astype(dtype)
    m = a > 50
    np.testing.assert_array_equal(par(set_mask)(a.copy(), m), set_mask(a.copy(), m))
    with pytest.raises(IndexError, match="boolean index did not match"):
        par(set_mask)(a.copy(), m[:-1])


def mask_from_self(a, m):
    a[m] = a[m]
    return a


def mask_from_other(a, m, c):
    a[m] = c[m]
    return a


def mask_from_reversed(a, m):
    a[m] = a[::-1][m]  # the source overlaps the destination in another order
    return a


def mask_after_a_write(a, m, c):
    v = c[m]
    c[:] = 0  # the copy holds the values from before this store
    a[m] = v
    return a, c


@pytest.mark.parametrize("shape", [(0,), (1001,), (300, 200)])
def test_masked_store_of_a_masked_array_is_a_parfor(nthreads, capfd, shape):
    a = RNG.random(shape)
    m = RNG.random(shape) > 0.4
    c = RNG.integers(0, 9, shape)
    for f, args in [
        (mask_from_self, (a, m)),
        (mask_from_other, (a, m, c)),
        (mask_from_reversed, (a, m)),
        (mask_after_a_write, (a, m, c)),
    ]:
        r, out = stats(capfd, f, *[x.copy() for x in args])
        expected = f(*[x.copy() for x in args])
        if isinstance(expected, tuple):
            for g, e in zip(r, expected):
                np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_array_equal(r, expected)
        if f is not mask_after_a_write:
            # One store loop, and no filtered copy of the source left to allocate.
            assert "('setitem', '')" in out and len(produced(out)) == 1, f.__name__
    with pytest.raises(IndexError, match="boolean index did not match"):
        par(mask_from_other)(a.copy(), m, np.zeros(tuple(d + 1 for d in shape)))


def test_setitem_into_views_broadcasts(nthreads):
    a = RNG.random((400_000, 5))
    np.testing.assert_array_equal(par(set_cols)(a.copy(), 2.5), set_cols(a.copy(), 2.5))
    v = np.array([1.0, 2.0])
    np.testing.assert_array_equal(par(set_cols)(a.copy(), v), set_cols(a.copy(), v))
    r = RNG.random(999_996)
    x = RNG.random(1_000_000)
    np.testing.assert_array_equal(par(set_slice)(x.copy(), r), set_slice(x.copy(), r))
    # Numba's array analysis asserts the value's size against the target's.
    with pytest.raises(AssertionError, match=r"^Sizes of out, \$binop_add"):
        par(set_expr)(np.zeros(3), np.ones(4), np.ones(4))


def test_setitem_parfors_are_reported_and_not_fused(capfd):
    def two(out, a):
        out[:] = a * 2.0
        c = out + 1.0  # reads what the store wrote: stays after it
        return c

    a = np.arange(10.0)
    r, out = stats(capfd, two, np.zeros(10), a)
    np.testing.assert_array_equal(r, a * 2.0 + 1.0)
    assert "pattern '('setitem', '')'" in out and fusions(out) == []


def fill_then_store(n, v):
    a = np.ones(n)
    a[:] = v * 2 + 1
    return a


def grid_then_store(n, v):
    g = np.zeros((n, 3))
    g[:, :] = v
    b = g * 2.0
    return b


def store_part(n, v):
    a = np.ones(n)
    a[1:] = v  # not the whole array: a view's loop, not fused
    return a


@pytest.mark.parametrize("n", [0, 1, 1000, 300_000])
def test_whole_array_store_fuses_with_its_allocation(capfd, nthreads, n):
    # Numba 0.68.1 prints, for `a = np.ones(n); a[:] = 7`: setitem loop #0, ones loop
    # #1, "Parallel for-loop #0 is fused into for-loop #1." (its setitem pass runs first).
    r, out = stats(capfd, fill_then_store, n, 3)
    np.testing.assert_array_equal(r, fill_then_store(n, 3))
    first = min(produced(out))
    assert re.search(rf"#{first} is produced from pattern '\('setitem', ''\)'", out)
    assert fusions(out) == [(first, first + 1)]
    r, out = stats(capfd, grid_then_store, n, 2.5)
    np.testing.assert_array_equal(r, grid_then_store(n, 2.5))
    assert len(fusions(out)) == 2  # zeros, the store and the product: one loop
    r, out = stats(capfd, store_part, n, 4.0)
    np.testing.assert_array_equal(r, store_part(n, 4.0))
    assert fusions(out) == []


# ------------------------------------------------------- parfor_diagnostics metadata


def diag_array_expr():
    n = 10
    a = np.ones(n)
    b = np.zeros(n)
    return a + b


def diag_argmin():
    n = 10
    a = np.ones(n)
    return np.argmin(a)


def diag_hoisting():
    n = 10
    m = 5
    acc = 0
    for i in prange(n):
        temp = np.zeros((m,))
        for j in range(m):
            temp[j] = i
        acc += temp[-1]
    return acc


def diag_unfused(n):
    a = np.ones(n + 1)
    acc = 0
    for i in prange(n):
        acc += a[i]
    return acc


def _diagnostics(f, *args):
    d = par(f)
    np.testing.assert_allclose(d(*args), f(*args))
    sig = d.signatures[0]
    return d, d.overloads[sig].metadata["parfor_diagnostics"]


def test_parfor_diagnostics_metadata_records_fusion(capsys):
    """`overloads[sig].metadata['parfor_diagnostics']` as Numba fills it: three NumPy
    parfors, the two later ones fused into the first (ids relative to the first)."""
    _, diag = _diagnostics(diag_array_expr)
    assert diag.count_parfors() == 1
    ((into, fused),) = diag.fusion_info.items()
    assert [x - into for x in fused] == [1, 2]
    assert diag.nested_fusion_info == {}
    diag.dump(3)
    assert "fused" in capsys.readouterr().out


def test_parfor_diagnostics_metadata_names_replaced_functions():
    _, diag = _diagnostics(diag_argmin)
    assert diag.count_parfors() == 1
    assert [v[0] for v in diag.replaced_fns.values()] == [("argmin", "numpy")]
    ((into, fused),) = diag.fusion_info.items()
    assert fused == [into + 1]


def test_parfor_diagnostics_metadata_counts_loops_and_hoisting():
    _, diag = _diagnostics(diag_hoisting)
    assert len(diag.hoisted_allocations()) == 1
    _, diag = _diagnostics(diag_unfused, 10)
    assert diag.count_parfors() == 2
    assert diag.fusion_info == {}
    serial = njit(diag_unfused)
    serial(3)
    assert "parfor_diagnostics" not in serial.overloads[serial.signatures[0]].metadata


def test_parallel_diagnostics_reports_the_signature_asked_for(capsys):
    d = par(diag_unfused)
    d(3)
    d(np.int32(3))
    d.parallel_diagnostics(d.signatures[1], level=1)
    out = capsys.readouterr().out
    assert out.count("Parallel Accelerator Optimizing") == 1
    # Two loops, neither fused: Numba's report has no region for either.
    assert "Parallel structure is already optimal." in out
    d.parallel_diagnostics(level=1)  # every signature, one report each
    assert capsys.readouterr().out.count("Parallel Accelerator Optimizing") == 2


def diag_user_varname():
    n = 10
    x = np.ones(n)
    a = np.sin(x)
    b = np.cos(a * a)
    acc = 0
    for i in prange(n - 2):
        for j in prange(n - 1):
            acc += b[i] + b[j + 1]
    return acc


def test_fusion_reports_say_why_in_numbas_words(capsys):
    d, diag = _diagnostics(diag_user_varname)
    messages = [r.message for r in diag.fusion_reports]
    assert any(m.startswith("- fusion succeeded: parallel for-loop #") for m in messages)
    # The size of the NumPy loops is named by the user's variable, as Numba names it.
    assert any(
        "- fusion failed: loop dimension mismatched in axis 0. slice(0, n, 1) != " in m
        for m in messages
    ), messages
    d.parallel_diagnostics(level=4)
    out = capsys.readouterr().out
    first = diag.fusion_reports[0]
    assert f"  Trying to fuse loops #{first.first} and #{first.second}:" in out


def diag_fill():
    n = 10
    a = np.ones(n)
    a[:] = 7
    return a


def diag_chain(a, b):
    c = a + b
    d = np.sin(c)
    return d.sum() + c.mean()


def diag_single(x):
    acc = 0.0
    for i in prange(x.shape[0]):
        acc += x[i]
    return acc


def _report(dispatcher, level):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        dispatcher.parallel_diagnostics(level=level)
    text = buf.getvalue()
    # Loop ids are process-wide counters: number them by rank. Ids sharing a source
    # line are listed in IR order, which differs (same ids, other order): sorted.
    pattern = r"(?:(?<=#)|(?<=\+--)|(?<=loop\(s\): ))\d+(?:, \d+)*"
    found = sorted({int(x) for m in re.findall(pattern, text) for x in m.split(", ")})
    rank = {x: k for k, x in enumerate(found)}

    def renumber(m):
        return ", ".join(str(rank[x]) for x in sorted(int(p) for p in m.group(0).split(", ")))

    return re.sub(pattern, renumber, text)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_parallel_diagnostics_layout_matches_numba(level):
    # The oracle is Numba 0.68.1 itself, where installed (this machine's .venv; the CI
    # venv has no Numba): the same functions, the same report, loop ids renumbered.
    numba = pytest.importorskip("numba")
    cases = [(diag_fill, ()), (diag_single, (np.ones(5),))]
    if level < 3:
        # Numba fuses `diag_chain`'s four loops in another order (its level-3 fusion
        # tree is a chain 0 <- 1 <- 2, 3; numba-rs's is 0 <- 1, 2, 3): same regions.
        cases.append((diag_chain, (np.ones(4), np.ones(4))))
    for f, args in cases:
        import types

        # Each compiler sees its own prange.
        g = types.FunctionType(f.__code__, {**f.__globals__, "prange": numba.prange})
        ours, theirs = njit(parallel=True)(f), numba.njit(parallel=True)(g)
        np.testing.assert_array_equal(ours(*args), theirs(*args))
        assert _report(ours, level) == _report(theirs, level)


# ------------------------------------------------------------ NumPy code in a prange body


def row_sumsq(a):
    out = np.empty(a.shape[0])
    for i in prange(a.shape[0]):
        out[i] = np.sum(a[i, :] ** 2)
    return out


def row_stats(a):
    out = np.empty((a.shape[0], 4))
    for i in prange(a.shape[0]):
        r = np.sqrt(a[i, :] * 2 + 1)
        out[i, 0] = r.max()
        out[i, 1] = r.mean()
        out[i, 2] = (a[i, :] - 0.5).min()
        out[i, 3] = np.argmax(a[i, :] * -1.0)
    return out


def row_total(a):
    # The body's reduction feeds the loop's own reduction.
    s = 0.0
    for i in prange(a.shape[0]):
        s += (a[i, :] * a[i, :]).sum()
    return s


def row_kept(a, out):
    # The expression's array is kept (stored into the output row): it stays an array.
    for i in prange(a.shape[0]):
        t = a[i, :] * 3.0
        out[i, :] = t
        out[i, 0] = t.sum()
    return out


def scratch_sum(a):
    # A hoisted scratch array read by a nested reduction stays hoisted.
    s = 0.0
    for i in prange(a.shape[0]):
        t = np.zeros(3)
        t[0] = a[i]
        t[1] = a[i] * 2.0
        s += t.sum()
    return s


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (7, 5), (300, 50)])
def test_numpy_code_in_a_prange_body(shape, nthreads):
    a = RNG.random(shape)
    np.testing.assert_allclose(par(row_sumsq)(a), row_sumsq(a), rtol=1e-12)
    if shape[1]:
        np.testing.assert_allclose(par(row_stats)(a), row_stats(a), rtol=1e-12)
    np.testing.assert_allclose(par(row_total)(a), row_total(a), rtol=1e-9)
    out = np.zeros(shape)
    np.testing.assert_allclose(par(row_kept)(a, out.copy()), row_kept(a, out.copy()), rtol=1e-12)
    v = RNG.random(shape[0] * 3)
    np.testing.assert_allclose(par(scratch_sum)(v), scratch_sum(v), rtol=1e-9)


def test_nested_parfors_are_reported_as_numba_does(capfd):
    # Numba 0.68.1 converts NumPy code before loops: the body's array expression and
    # sum are #0 and #1, the prange loop #2 (here relative to the first id). Numba
    # leaves the two nested loops apart ("has nested Parfor(s) #2", it prints the count);
    # numba-rs fuses them, so one is left.
    r, out = stats(capfd, row_sumsq, np.ones((3, 4)))
    np.testing.assert_array_equal(r, row_sumsq(np.ones((3, 4))))
    ids = produced(out)
    assert len(ids) == 3 and ids == sorted(ids)
    first = ids[0]
    lines = out.splitlines()
    assert lines[0].startswith(f"Parallel for-loop #{first} is produced from pattern 'array expression (")
    assert "(('sum', 'numpy')" in lines[1]
    assert lines[2].startswith(f"Parallel for-loop #{first + 2} is produced from pattern '('prange', 'user', '')'")
    assert fusions(out) == [(first + 1, first)]
    assert f"After fusion, parallel for-loop {first + 2} has nested Parfor(s) #1." in out
    assert f"After fusion, function row_sumsq has 1 parallel for-loop(s) #{{{first + 2}}}." in out


def test_nested_parfors_in_diagnostics(capsys):
    f = par(row_sumsq)
    f(np.ones((3, 4)))
    f.parallel_diagnostics(level=3)
    text = capsys.readouterr().out
    outer = int(re.search(r"\+--(\d+) is a parallel loop", text).group(1))
    assert f"+--{outer - 2} --> rewritten as a serial loop" in text
    assert f"+--{outer - 2} (serial, fused with loop(s): {outer - 1})" in text
    flat = " ".join(text.split())
    assert "had 1 loop(s) fused and 1 loop(s) serialized as part of the larger" in flat
    # One region: the nested loop is not a region of its own.
    assert "Parallel region 1" not in text


def test_scratch_array_read_by_a_nested_reduction_is_still_hoisted(capsys):
    f = par(scratch_sum)
    f(np.ones(10))
    f.parallel_diagnostics(level=3)
    flat = " ".join(capsys.readouterr().out.split())
    assert "is hoisted out of the parallel loop" in flat
    assert f._hoisted_allocations()[0][2] == "numpy.zeros"


def test_numpy_option_off_leaves_the_body_serial(capfd):
    r, out = stats(capfd, row_sumsq, np.ones((3, 4)), parallel={"numpy": False})
    np.testing.assert_array_equal(r, row_sumsq(np.ones((3, 4))))
    assert len(produced(out)) == 1
    assert "nested" not in out


def test_dot_method_asserts_as_the_function():
    def mdot(a, b):
        return a.dot(b)

    with pytest.raises(AssertionError, match=r"^Sizes of a_size1, b_size0 do not match on "):
        par(mdot)(np.ones((2, 3)), np.ones((4, 2)))
    a, b = RNG.random((3, 4)), RNG.random((4, 2))
    np.testing.assert_allclose(par(mdot)(a, b), a.dot(b), rtol=1e-12)


def masked_reductions(a, t):
    m = a > t
    return np.sum(a[m]), a[m].mean(), a[a > t].min(), np.max(a[a > t]), np.prod(a[a < -t])


def masked_min(a, t):
    return np.min(a[a > t])


@pytest.mark.parametrize("shape", [(1000,), (37, 29), (0,)], ids=str)
def test_reductions_over_a_masked_array_read_it_in_place(nthreads, shape):
    # `np.sum(a[mask])` and its kin read `a` where the mask is set (Numba makes the
    # filtered copy first); NumPy is the oracle, an empty selection raises its error.
    # (A raise frees nothing allocated before it, as in Numba: the raising case is a
    # function of its own.)
    from numba_rs.runtime import rtsys

    a = RNG.standard_normal(shape) * 0.1
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        par(masked_min)(a, 10.0)
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        masked_min(a, 10.0)
    if a.size == 0:
        return
    f = par(masked_reductions)
    got, want = f(a, 0.05), masked_reductions(a, 0.05)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # Only the four masks are allocated, not the five filtered copies.
    before = rtsys.get_allocation_stats().alloc
    f(a, 0.05)
    assert rtsys.get_allocation_stats().alloc - before == 4
    ints = RNG.integers(-50, 50, shape)
    assert f(ints, 3) == masked_reductions(ints, 3)
    assert par(masked_min)(ints, 3) == masked_min(ints, 3)


def copy_then_write(a, m):
    b = a[m]
    a[:] = 0.0
    return b.sum(), b.size


def test_masked_reduction_keeps_a_copy_taken_before_a_write(nthreads):
    a = RNG.random(500)
    m = a > 0.5
    assert par(copy_then_write)(a.copy(), m) == pytest.approx(copy_then_write(a.copy(), m))


def test_masked_reduction_with_a_mask_of_another_shape_is_numpys_index_error():
    def f(a, m):
        return np.sum(a[m])

    with pytest.raises(IndexError):
        par(f)(np.ones(5), np.ones(4, dtype=np.bool_))
    with pytest.raises(IndexError):
        np.ones(5)[np.ones(4, dtype=np.bool_)]
