"""parallel=True: prange loops run as parfors on numba-rs's thread pool, checked against
the same function run by CPython (the oracle) on random inputs, with 1, 2 and
NUMBA_NUM_THREADS threads. Integer reductions are exact; float ones within tolerance
(the partial sums add in another order). The autouse fixture checks NRT balance."""

import functools
import math
import os
import subprocess
import sys
import textwrap
import threading
import re
import warnings

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, prange
from numba_rs.errors import NumbaParallelSafetyWarning, NumbaPerformanceWarning

RNG = np.random.default_rng(2024)


def both(f):
    """The parallel compilation of `f` and `f` itself (run by CPython: prange is range)."""
    return njit(parallel=True)(f), f


# ----------------------------------------------------------------- reductions


def sum_sq(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i] * a[i]
    return s


def int_sum(a):
    s = 0
    for i in prange(len(a)):
        s += a[i]
    return s


def sub_red(a):
    s = 100
    for i in prange(len(a)):
        s -= a[i]
    return s


def prod_red(a):
    p = 1.0
    for i in prange(len(a)):
        p *= a[i]
    return p


def div_red(a):
    p = 1.0
    for i in prange(len(a)):
        p /= a[i]
    return p


def binop_red(a):
    s = 0.0
    for i in prange(len(a)):
        s = s + 2.0 * a[i]
    return s


def min_red(a):
    m = a[0]
    for i in prange(len(a)):
        m = min(m, a[i])
    return m


def max_red(a):
    m = a[0]
    for i in prange(len(a)):
        m = max(a[i], m)
    return m


def cond_count(a, t):
    c = 0
    for i in prange(len(a)):
        if a[i] > t:
            c += 1
    return c


def two_reductions(a):
    s = 0.0
    n = 0
    for i in prange(a.size):
        if a[i] > 0.5:
            s += a[i]
            n += 1
    return s, n


@pytest.mark.parametrize("size", [0, 1, 7, 1000, 300_001])
def test_float_sum(nthreads, size):
    a = RNG.random(size)
    f, p = both(sum_sq)
    assert f(a) == pytest.approx(p(a), rel=1e-12, abs=1e-12)


def neg_zero_sum(a):
    s = -0.0
    for i in prange(a.shape[0]):
        s += a[i]
    return s


@pytest.mark.parametrize("size", [0, 5, 300_001])
def test_sum_of_negative_zeros_keeps_the_sign(nthreads, size):
    # Each division starts from -0.0, the exact identity of +: CPython's loop gives -0.0.
    for dtype in (np.float64, np.float32, np.complex128):
        a = np.full(size, -0.0, dtype=dtype)
        f, p = both(neg_zero_sum)
        got, want = f(a), p(a)
        assert got == want
        assert math.copysign(1.0, got.real) == math.copysign(1.0, want.real) == -1.0


@pytest.mark.parametrize("size", [0, 3, 100_003])
def test_integer_reductions_are_exact(nthreads, size):
    a = RNG.integers(-1000, 1000, size)
    for fn in (int_sum, sub_red):
        f, p = both(fn)
        assert f(a) == p(a)
    f, p = both(cond_count)
    b = RNG.random(size)
    assert f(b, 0.3) == p(b, 0.3)


def test_product_division_and_binop_reductions(nthreads):
    a = RNG.uniform(0.9, 1.1, 50_000)
    for fn in (prod_red, div_red, binop_red):
        f, p = both(fn)
        assert f(a) == pytest.approx(p(a), rel=1e-9)


@pytest.mark.parametrize("fn", [min_red, max_red])
def test_min_max_reductions(nthreads, fn):
    a = RNG.standard_normal(123_457)
    f, p = both(fn)
    assert f(a) == p(a)
    ints = RNG.integers(-(10**9), 10**9, 99_999)
    assert f(ints) == p(ints)


def test_several_reductions_in_one_loop(nthreads):
    a = RNG.random(200_000)
    f, p = both(two_reductions)
    s, n = f(a)
    s0, n0 = p(a)
    assert n == n0
    assert s == pytest.approx(s0, rel=1e-12)


def floordiv_red(a):
    s = 1000
    for i in prange(len(a)):
        s //= a[i]
    return s


def test_floordiv_reduction_is_rejected():
    f = njit(parallel=True)(floordiv_red)
    with pytest.raises(numba_rs.errors.NumbaValueError, match="Parallel floordiv reductions"):
        f(np.arange(1, 5))


def two_inner_loops(a, m):
    s = 0
    for i in prange(len(a)):
        for j in range(m):
            s += a[i] * j
        for j in range(m):
            s = s - a[i]  # not in place: Numba rejects only differing in-place operators
    return s


def inner_min(a):
    best = 10**9
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            best = min(best, a[i, j])
        best = min(best, a[i, 0] + 1)
    return best


@pytest.mark.parametrize("size", [3, 1000, 100_000])
def test_reduction_updated_in_several_inner_loops(nthreads, size):
    # Each reduce node combines alike (+ and -; min twice): one reduction, not a race.
    a = RNG.integers(-50, 50, size)
    f, p = both(two_inner_loops)
    assert f(a, 7) == p(a, 7)
    m = RNG.integers(-1000, 1000, (size, 4))
    # A race would keep the last division's minimum (and warn): the minimum is put in
    # the first rows, which the last division never sees.
    m[0, 1] = -5000
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaParallelSafetyWarning)
        f, p = both(inner_min)
        assert f(m) == p(m) == -5000


def conflicting_ops(n):
    c = 0
    for i in prange(n):
        c += 1
        if i > 10:
            c *= 1
    return c


def test_conflicting_reduction_operators_are_rejected():
    # Numba 0.68.1: UnsupportedRewriteError (an UnsupportedError) at the second operator.
    with pytest.raises(numba_rs.errors.UnsupportedError) as e:
        njit(parallel=True)(conflicting_ops)(9)
    assert "Reduction variable c has multiple conflicting reduction operators." in str(e.value)
    assert "c *= 1" in str(e.value)


# ----------------------------------------------------------------- loops writing arrays


def rows(a, out):
    n, m = a.shape
    for i in prange(n):
        acc = 0.0
        for j in range(m):
            acc += a[i, j] * (j + 1)
        out[i] = acc
    return out


def pairwise(x):
    n = x.shape[0]
    d = np.empty((n, n))
    for i in prange(n):
        for j in range(n):
            s = 0.0
            for k in range(x.shape[1]):
                t = x[i, k] - x[j, k]
                s += t * t
            d[i, j] = np.sqrt(s)
    return d


def mandel(h, w, it):
    out = np.zeros((h, w), dtype=np.int64)
    for y in prange(h):
        for x in range(w):
            c = complex(-2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h)
            z = 0j
            k = 0
            while k < it and abs(z) <= 2.0:
                z = z * z + c
                k += 1
            out[y, x] = k
    return out


def test_row_loop(nthreads):
    a = RNG.random((301, 17))
    f, p = both(rows)
    np.testing.assert_allclose(f(a, np.zeros(301)), p(a, np.zeros(301)), rtol=1e-13)


def test_pairwise_distances(nthreads):
    x = RNG.random((97, 3))
    f, p = both(pairwise)
    np.testing.assert_allclose(f(x), p(x), rtol=1e-13)


def test_mandelbrot(nthreads):
    f, p = both(mandel)
    np.testing.assert_array_equal(f(40, 50, 60), p(40, 50, 60))


def ranged(a, lo, hi, step):
    s = 0
    for i in prange(lo, hi, step):
        s += a[i] * (i + 1)
    return s


def two_args(a, lo, hi):
    out = np.zeros_like(a)
    for i in prange(lo, hi):
        out[i] = a[i] * 2
    return out


@pytest.mark.parametrize(
    "lo,hi,step", [(0, 1000, 1), (3, 997, 7), (999, -1, -1), (900, 10, -13), (5, 5, 1), (10, 2, 1)]
)
def test_prange_start_stop_step(nthreads, lo, hi, step):
    a = RNG.integers(0, 100, 1000)
    f, p = both(ranged)
    assert f(a, lo, hi, step) == p(a, lo, hi, step)
    g, q = both(two_args)
    if step == 1:
        np.testing.assert_array_equal(g(a, lo, hi), q(a, lo, hi))


def nested(a):
    n, m = a.shape
    s = 0.0
    for i in prange(n):
        for j in prange(m):
            s += a[i, j] * i
    return s


def test_nested_prange_inner_runs_serially(nthreads):
    a = RNG.random((64, 33))
    f, p = both(nested)
    assert f(a) == pytest.approx(p(a), rel=1e-12)


def nested_fill(n):
    a = np.empty((n, n))
    for i in prange(n):
        for j in prange(n):
            a[i, j] = i * 10 + j
    return a


def nested_rowsum(a):
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        s = 0.0
        for j in prange(a.shape[1]):
            s += a[i, j]
        out[i] = s
    return out


def nested_three(n):
    a = np.zeros((n, n, n))
    for i in prange(n):
        for j in prange(n):
            for k in prange(n):
                a[i, j, k] = i * 100 + j * 10 + k
    return a


def nested_in_range(a):
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        for r in range(2):
            acc = 0.0
            for j in prange(a.shape[1]):
                acc += a[i, j] * (r + 1)
            out[i] += acc
    return out


def nested_max_then_use(a):
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        m = a[i, 0]
        for j in prange(a.shape[1]):
            m = max(m, a[i, j])
        out[i] = m + i
    return out


def nested_numpy_in_inner(a):
    out = np.zeros((a.shape[0], a.shape[1]))
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            out[i, j] = np.sum(a[i, :] * a[i, j])
    return out


@pytest.mark.parametrize(
    "f, args",
    [
        (nested_fill, (37,)),
        (nested_rowsum, (RNG.random((300, 200)),)),
        (nested_three, (9,)),
        (nested_in_range, (RNG.random((50, 40)),)),
        (nested_max_then_use, (RNG.random((60, 70)),)),
        (nested_numpy_in_inner, (RNG.random((12, 30)),)),
    ],
)
def test_prange_nested_in_prange_is_a_nested_parfor(nthreads, f, args):
    """A `prange` in a `prange` body becomes a parfor nested in the outer one (Numba's
    nested parfors), with its own reductions; it runs serially inside each division.
    CPython's result is the oracle."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        got = njit(parallel=True)(f)(*args)
    np.testing.assert_allclose(got, f(*args), rtol=1e-12)


def test_nested_prange_is_numbered_and_reported_as_numba_does(capfd, monkeypatch):
    # Numba 0.68.1's lines for nested_fill: the inner loop (converted first, being the
    # smaller) is #0, the outer #1, which holds it.
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    f = njit(parallel=True)(nested_fill)
    np.testing.assert_array_equal(f(4), nested_fill(4))
    out = capfd.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith(("Parallel for-loop", "After fusion"))]
    first = int(re.search(r"#(\d+)", lines[0]).group(1))
    inner_line = nested_fill.__code__.co_firstlineno + 3
    want = [
        f"Parallel for-loop #{first} is produced from pattern '('prange', 'user', '')' at {__file__} ({inner_line})",
        f"Parallel for-loop #{first + 1} is produced from pattern '('prange', 'user', '')' at {__file__} ({inner_line - 1})",
        f"After fusion, parallel for-loop {first + 1} has nested Parfor(s) #1.",
        f"After fusion, function nested_fill has 1 parallel for-loop(s) #{{{first + 1}}}.",
    ]
    assert lines == want
    diag = f.overloads[f.signatures[0]].metadata["parfor_diagnostics"]
    assert diag.count_parfors() == 2
    assert dict(diag.nested_fusion_info) == {first + 1: [first]}
    f.parallel_diagnostics(level=4)
    text = capfd.readouterr().out
    assert f"+--{first + 1} (parallel)\n   +--{first} (serial)" in text


def sibling_loops(a):
    s = 0.0
    for i in prange(a.shape[0]):
        x = a[i]
        if x > 0.5:
            s += x * 2
        else:
            s += x
    t = 0.0
    for i in prange(a.shape[0]):
        t += a[i]
    return s + t


def test_loops_are_numbered_smallest_first_as_numba_converts_them(capfd, monkeypatch):
    # Numba converts loops in order of size: the second (smaller) loop gets the first id.
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    a = RNG.random(100)
    assert njit(parallel=True)(sibling_loops)(a) == pytest.approx(sibling_loops(a))
    out = capfd.readouterr().out
    made = re.findall(r"Parallel for-loop #(\d+) is produced .* \((\d+)\)", out)
    first_line = sibling_loops.__code__.co_firstlineno
    ids = {int(line) - first_line: int(i) for i, line in made}
    assert ids[9] + 1 == ids[2]
    # And, as in Numba, the two fuse (their sizes are both a.shape[0], computed twice).
    assert f"Parallel for-loop #{ids[9]} is fused into for-loop #{ids[2]}." in out


def sqrt_map_then_dot(a, out):
    for i in prange(a.shape[0]):
        out[i] = math.sqrt(a[i]) + 1.0
    s = 0.0
    for i in prange(a.shape[0]):
        s += out[i] * a[i]
    return s


def test_a_math_map_loop_and_a_float_reduction_loop_stay_apart(capfd, monkeypatch):
    # Fused, the vectorisable sqrt map would run at the pace of the dot product's serial
    # chain of additions (12.5 ms against 9 ms apart over 10^7 items, 2 threads); Numba
    # 0.68.1 leaves this pair apart too.
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    a = RNG.random(1000)
    out = np.empty(1000)
    want = sqrt_map_then_dot(a, np.empty(1000))
    assert njit(parallel=True)(sqrt_map_then_dot)(a, out) == pytest.approx(want, rel=1e-12)
    text = capfd.readouterr().out
    assert "is fused into" not in text
    assert "function sqrt_map_then_dot has 2 parallel for-loop(s)" in text


def test_an_allocation_fuses_with_the_prange_loop_over_its_length(capfd, monkeypatch):
    # Numba 0.68.1: np.zeros(a.shape[0]) and a prange over a.shape[0] fuse; the inner
    # prange is then nested in the fused loop.
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    a = RNG.random((40, 30))
    np.testing.assert_allclose(njit(parallel=True)(nested_rowsum)(a), nested_rowsum(a))
    out = capfd.readouterr().out
    ids = [int(i) for i in re.findall(r"Parallel for-loop #(\d+) is produced", out)]
    zeros, inner, outer = ids
    assert f"Parallel for-loop #{outer} is fused into for-loop #{zeros}." in out
    assert f"After fusion, parallel for-loop {zeros} has nested Parfor(s) #1." in out
    assert f"function nested_rowsum has 1 parallel for-loop(s) #{{{zeros}}}." in out


def uses_globals_and_calls(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += np.cos(a[i]) + abs(a[i] - 0.5)
    return s


def test_math_and_numpy_calls_in_body(nthreads):
    a = RNG.random(100_000)
    f, p = both(uses_globals_and_calls)
    assert f(a) == pytest.approx(p(a), rel=1e-11)


def monte_carlo(n):
    inside = 0
    for i in prange(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y <= 1.0:
            inside += 1
    return 4.0 * inside / n


def test_monte_carlo_uses_per_thread_generators(nthreads):
    f = njit(parallel=True)(monte_carlo)
    assert abs(f(400_000) - np.pi) < 0.02


def temporaries(a):
    s = 0.0
    for i in prange(a.shape[0]):
        row = a[i, :] * 2.0
        s += row.sum()
    return s


def test_array_temporaries_in_body_are_released(nthreads):
    a = RNG.random((500, 40))
    f, p = both(temporaries)
    assert f(a) == pytest.approx(p(a), rel=1e-12)


# ----------------------------------------------------------------- errors, races, options


def raises_in_body(a):
    s = 0.0
    for i in prange(len(a)):
        if a[i] < 0:
            raise ValueError("negative item")
        s += a[i]
    return s


def test_exception_in_body_propagates(nthreads):
    f = njit(parallel=True)(raises_in_body)
    a = RNG.random(100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the loop is parallel: no performance warning
        assert f(a) == pytest.approx(a.sum())
    a[77_777] = -1.0
    with pytest.raises(ValueError, match="negative item"):
        f(a)


@njit
def _checked_sum(row, x):
    if x < 0:
        raise ValueError("negative lead")
    return row.sum()


def raises_in_callee_with_temps(a):
    s = 0.0
    for i in prange(a.shape[0]):
        t = a[i] * 2.0  # a per-iteration array, live while the callee raises
        s += _checked_sum(t, a[i, 0])
    return s


def test_exception_from_callee_releases_body_temporaries(nthreads):
    # The body's own arrays are released when a callee's exception leaves the kernel
    # (the autouse fixture checks the NRT counters balance).
    f = njit(parallel=True)(raises_in_callee_with_temps)
    a = RNG.random((2_000, 8))
    assert f(a) == pytest.approx(2.0 * a.sum())
    a[1_500, 0] = -1.0
    a[30, 0] = -1.0
    with pytest.raises(ValueError, match="negative lead"):
        f(a)


def last_value(a):
    x = 0.0
    for i in prange(len(a)):
        x = a[i] * 2
    return x


def test_race_warns_and_keeps_the_last_iteration():
    a = RNG.random(10_000)
    # Numba names the variable as the user wrote it (`x`, not its SSA version `x.1`).
    with pytest.warns(NumbaParallelSafetyWarning, match="^Variable x used in parallel loop may be written to simultaneously"):
        f = njit(parallel=True)(last_value)
        r = f(a)
    assert r == last_value(a)


def test_compile_warnings_come_from_eager_compilation_too():
    # Numba warns while compiling: with a signature in the decorator, or `.compile(sig)`,
    # that is before any call (Numba's test_parfor_race_1 compiles eagerly).
    a = RNG.random(100)
    with pytest.warns(NumbaParallelSafetyWarning, match="^Variable x used in parallel loop"):
        f = njit("float64(float64[::1])", parallel=True)(last_value)
    assert f(a) == last_value(a)
    g = njit(parallel=True)(last_value)
    with pytest.warns(NumbaParallelSafetyWarning, match="^Variable x used in parallel loop"):
        g.compile("float64(float64[::1])")
    # Once per specialisation: calling it does not warn again.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g(a) == last_value(a)


def test_parallel_options_dict():
    with pytest.warns(NumbaPerformanceWarning, match="no transformation for parallel"):
        f = njit(parallel={"prange": False})(sum_sq)
        a = RNG.random(1000)
        assert f(a) == pytest.approx(sum_sq(a))
    with pytest.raises(NameError, match="Unrecognized parallel options"):
        njit(parallel={"bogus": True})(sum_sq)
    with pytest.raises(ValueError, match="bool or a dict"):
        njit(parallel="yes")(sum_sq)


def test_prange_serial_and_in_python():
    a = RNG.random(1000)
    assert list(prange(3)) == [0, 1, 2]
    assert njit(sum_sq)(a) == pytest.approx(sum_sq(a), rel=1e-12)


# ----------------------------------------------------------------- threading API


def test_thread_count_api():
    n = numba_rs.config.NUMBA_NUM_THREADS
    assert n >= 1
    old = numba_rs.get_num_threads()
    numba_rs.set_num_threads(1)
    assert numba_rs.get_num_threads() == 1
    numba_rs.set_num_threads(old)
    with pytest.raises(ValueError, match="between 1 and"):
        numba_rs.set_num_threads(0)
    with pytest.raises(ValueError, match="between 1 and"):
        numba_rs.set_num_threads(n + 1)
    with pytest.raises(TypeError):
        numba_rs.set_num_threads(1.5)
    assert numba_rs.get_thread_id() == 0
    prev = numba_rs.set_parallel_chunksize(1000)
    assert numba_rs.get_parallel_chunksize() == 1000
    numba_rs.set_parallel_chunksize(prev)
    assert numba_rs.config.THREADING_LAYER == os.environ.get("NUMBA_THREADING_LAYER", "default")


def thread_ids(n):
    out = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        out[i] = numba_rs.get_thread_id()
    return out, numba_rs.get_num_threads()


def test_thread_ids_from_jitted_code(nthreads):
    f = njit(parallel=True)(thread_ids)
    ids, n = f(200_000)
    assert n == nthreads
    assert ids.min() >= 0 and ids.max() < numba_rs.config.NUMBA_NUM_THREADS
    if nthreads == 1:
        assert ids.max() == 0


def test_chunksize_schedule_gives_the_same_result():
    a = RNG.random(100_000)
    f, p = both(sum_sq)
    prev = numba_rs.set_parallel_chunksize(777)
    try:
        assert f(a) == pytest.approx(p(a), rel=1e-12)
    finally:
        numba_rs.set_parallel_chunksize(prev)
    assert numba_rs.threading_layer() == "numba_rs"


def chunksize_seen(cs, n):
    res = np.zeros(n)
    inner = np.full(n, -13)
    with numba_rs.parallel_chunksize(cs):
        for i in prange(n):
            inner[i] = numba_rs.get_parallel_chunksize()
            res[i] = 13
    return res, inner, numba_rs.get_parallel_chunksize()


@pytest.mark.parametrize("n", [10, 997, 300_000])
def test_chunksize_reads_zero_inside_a_region(nthreads, n):
    """Numba resets the chunk size around a launch: every iteration (on the caller and
    on the workers, small regions run inline included) reads 0, and the block restores
    the caller's value after."""
    f = njit(parallel=True)(chunksize_seen)
    for cs in (1, 7):
        res, inner, after = f(cs, n)
        assert np.all(res == 13)
        assert np.all(inner == 0)
        assert after == 0


def test_setters_reject_non_integers_with_numbas_message():
    def bad_chunk():
        numba_rs.set_parallel_chunksize("invalid_type")

    def bad_threads():
        numba_rs.set_num_threads(1.5)

    with pytest.raises(numba_rs.errors.TypingError, match="The parallel chunksize must be an integer"):
        njit(bad_chunk)()
    with pytest.raises(numba_rs.errors.TypingError, match="The number of threads specified must be an integer"):
        njit(bad_threads)()


def test_concurrent_calls_from_python_threads():
    f = njit(parallel=True)(int_sum)
    a = RNG.integers(0, 1000, 200_000)
    want = int(a.sum())
    f(a)
    results = []

    def work():
        results.append(all(f(a) == want for _ in range(30)))

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == [True] * 4


def calls_parallel(a):
    s = 0
    for i in prange(4):
        s += inner_parallel(a)
    return s


inner_parallel = njit(parallel=True)(int_sum)


def test_parallel_function_called_from_a_parallel_loop():
    f = njit(parallel=True)(calls_parallel)
    a = RNG.integers(0, 10, 100_000)
    assert f(a) == 4 * int(a.sum())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only (absent on Windows)")
def test_pool_works_after_fork():
    code = textwrap.dedent(
        """
        import os, sys, numpy as np
        from numba_rs import njit, prange
        @njit(parallel=True)
        def f(a):
            s = 0
            for i in prange(len(a)):
                s += a[i]
            return s
        a = np.arange(1_000_000)
        assert f(a) == a.sum()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if f(a) == a.sum() else 1)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], timeout=120)
    assert r.returncode == 0


def heavy(n):
    s = 0.0
    for i in prange(n):
        s += math.sin(i * 1e-3) * 1e-6
    return s


def test_gil_is_released_while_the_pool_works():
    # Another Python thread runs *during* one long parallel call: its timestamps fall
    # well inside the call (with the GIL held, none could). Both cores may be busy with
    # the pool, so the ticker runs only when the OS gives it a slice: the call is made
    # long enough (about 0.1 s) for that.
    import time

    f = njit(parallel=True)(heavy)
    f(1000)
    stamps = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        time.sleep(0.01)
        inside = 0
        for _ in range(5):
            t0 = time.perf_counter()
            f(20_000_000)
            t1 = time.perf_counter()
            inside += sum(1 for x in list(stamps) if t0 + 0.005 < x < t1 - 0.005)
            if inside:
                break
    finally:
        stop.set()
        t.join()
    assert inside > 0


# ----------------------------------------------------------------- dumps


def test_debug_array_opt_dumps(capfd, monkeypatch):
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT", "1")

    def dumped(a):
        s = 0.0
        for i in prange(a.shape[0]):
            s += a[i]
        return s

    f = njit(parallel=True)(dumped)
    f(np.ones(10))
    out = capfd.readouterr().out
    assert "Parallel for-loop #" in out
    assert "is produced from pattern '('prange', 'user', '')'" in out
    assert "After fusion, function dumped has 1 parallel for-loop(s)" in out
    import re

    assert re.search(r"^-+begin parfor \d+-+$", out, re.M)
    assert re.search(r"^-+end parfor \d+-+$", out, re.M)
    assert "index_var =  parfor_index" in out
    assert "races =  set()" in out
    assert "LoopNest(index_variable = parfor_index" in out
    # The IR between the stages, under Numba's `dprint_func_ir` titles, in order.
    titles = re.findall(r"^-+IR (after [a-z ]+): (\S+?)-*$", out, re.M)
    assert [t for t, _ in titles] == ["after parfor pass", "after fusion", "after optimization"]
    assert {q for _, q in titles} == {dumped.__qualname__}


def test_parallel_diagnostics(capsys):
    f = njit(parallel=True)(sum_sq)
    f(np.ones(10))
    f.parallel_diagnostics(level=4)
    out = capsys.readouterr().out
    assert "Parallel Accelerator Optimizing:  Function sum_sq" in out
    assert "for i in prange(a.shape[0]):" in out and "| #" in out
    with pytest.raises(ValueError):
        f.parallel_diagnostics(level=5)


def test_warning_free_compile_of_a_plain_prange():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = njit(parallel=True)(sum_sq)
        f(np.ones(100))


def literal_bounds():
    n = 4
    a = np.zeros(n - 1)
    s = 0
    for i in prange(1, n):
        a[i - 1] = 2.0 * i
        s += i
    return a, s


def test_prange_bounds_held_in_literal_variables(nthreads):
    # `n = 4` types `n` as a literal; the kernel's loop arithmetic takes it as an int.
    got_a, got_s = njit(parallel=True)(literal_bounds)()
    want_a, want_s = literal_bounds()
    np.testing.assert_array_equal(got_a, want_a)
    assert got_s == want_s


def scheduled(a, lo):
    s = 0.0
    for i in prange(a.size):
        s += a[i]
    for i in prange(lo, a.size):
        a[i] = 0.0
    return s


def test_launches_call_numbas_scheduler_names():
    # As in Numba's LLVM: `do_scheduling_unsigned` for a loop from a known non-negative
    # start, `do_scheduling_signed` when the start is a variable.
    f = njit(parallel=True)(scheduled)
    assert f(np.arange(10.0), 3) == 45.0
    (res,) = f.overloads.values()
    llvm = res.library.get_llvm_str()
    assert "@do_scheduling_unsigned(" in llvm and "@do_scheduling_signed(" in llvm
    assert llvm == f.inspect_llvm(res.argtypes)
    assert "do_scheduling_unsigned" in res.library.get_asm_str()


def _llvm_functions(llvm):
    """The module's function definitions by name, each with its body's text."""
    out = {}
    for part in llvm.split("\ndefine ")[1:]:
        name = part.split("@", 1)[1].split("(", 1)[0].strip('"')
        out[name] = part.split("\n}", 1)[0]
    return out


def test_the_pool_path_is_outlined_into_a_launch_function():
    # Scheduling, the pool and the combination of the divisions live in
    # `<kernel>.launch`, so the function itself stays small enough for LLVM to inline
    # into its entry wrapper (a tiny loop then costs what the serial build costs).
    f = njit(parallel=True)(scheduled)
    a = RNG.random(1000)
    assert f(a.copy(), 3) == pytest.approx(scheduled(a.copy(), 3))
    funcs = _llvm_functions(f.inspect_llvm(f.signatures[0]))
    launches = [n for n in funcs if n.endswith(".launch")]
    assert len(launches) == 2
    for n in launches:
        assert "@do_scheduling_" in funcs[n] and "@numba_rs_parallel_for(" in funcs[n]
    (native,) = [n for n in funcs if "." not in n]
    assert native + ".entry" in funcs
    body = funcs[native]
    assert "@numba_rs_parallel_for(" not in body and "@do_scheduling_" not in body
    assert body.count(".launch(") == 2


def test_overloads_found_by_numbas_own_types():
    numba = pytest.importorskip("numba")
    f = njit(parallel=True)(scheduled)
    a = np.arange(4.0)
    f(a, 1)
    sig = (numba.typeof(a), numba.typeof(1))
    assert sig in f.overloads
    assert f.overloads[sig].entry_point(np.arange(4.0), 0) == 6.0
    with pytest.raises(KeyError):
        f.overloads[(numba.typeof(1.0),)]


def setters(n, chunk):
    numba_rs.set_num_threads(n)
    got = numba_rs.get_num_threads()
    old = numba_rs.set_parallel_chunksize(chunk)
    now = numba_rs.get_parallel_chunksize()
    numba_rs.set_parallel_chunksize(old)
    return got, old, now


def test_thread_setters_from_jitted_code():
    # Numba's set_num_threads / set_parallel_chunksize / get_parallel_chunksize work in
    # jitted code, with the same checks as from Python.
    f = njit(setters)
    before = numba_rs.get_num_threads()
    try:
        assert f(1, 8) == (1, 0, 8)
        assert numba_rs.get_num_threads() == 1  # for the calling thread, as in Numba
        assert numba_rs.get_parallel_chunksize() == 0
        top = numba_rs.config.NUMBA_NUM_THREADS
        with pytest.raises(ValueError, match=f"between 1 and {top}"):
            f(top + 1, 0)
        with pytest.raises(ValueError, match=f"between 1 and {top}"):
            f(0, 0)
        with pytest.raises(ValueError, match="chunksize must be greater"):
            f(1, -1)
    finally:
        numba_rs.set_num_threads(before)


def test_numbas_own_thread_setters_in_jitted_code():
    numba = pytest.importorskip("numba")

    def g():
        numba.set_num_threads(1)
        return numba.get_num_threads(), numba.get_parallel_chunksize()

    before = numba_rs.get_num_threads()
    try:
        assert njit(g)() == (1, 0)
    finally:
        numba_rs.set_num_threads(before)


# ------------------------------------------------------------ array reductions


def row_sum_inplace(a, s):
    for i in prange(a.shape[0]):
        s += a[i]
    return s


def row_sum_rebind(a):
    s = np.zeros(a.shape[1])
    for i in prange(a.shape[0]):
        s = s + a[i]
    return s


def two_array_reductions(a):
    s = np.zeros(a.shape[1])
    p = np.ones(a.shape[1])
    for i in prange(a.shape[0]):
        s -= a[i] * 2.0
        p *= 1.0 + a[i] * 1e-3
    return s, p


def int_histogram(idx, nbins):
    h = np.zeros(nbins, np.int64)
    for i in prange(idx.shape[0]):
        row = np.zeros(nbins, np.int64)
        row[idx[i]] = 1
        h += row
    return h


# 400_000 rows are enough work for the pool; the small ones run inline.
@pytest.mark.parametrize("rows", [0, 1, 5, 400_000])
def test_array_reduction_in_place_updates_the_argument(nthreads, rows):
    a = RNG.random((rows, 7))
    s = np.ones(7)
    want = row_sum_inplace(a, s.copy())
    got = njit(parallel=True)(row_sum_inplace)(a, s)
    assert got is s
    np.testing.assert_allclose(s, want)


@pytest.mark.parametrize("rows", [1, 3, 400_000])
def test_array_reductions_rebinding_and_several(nthreads, rows):
    a = RNG.random((rows, 4))
    np.testing.assert_allclose(njit(parallel=True)(row_sum_rebind)(a), row_sum_rebind(a))
    got = njit(parallel=True)(two_array_reductions)(a)
    for g, w in zip(got, two_array_reductions(a)):
        np.testing.assert_allclose(g, w)


def test_integer_array_reduction_is_exact(nthreads):
    idx = RNG.integers(0, 16, 400_000)
    got = njit(parallel=True)(int_histogram)(idx, 16)
    np.testing.assert_array_equal(got, np.bincount(idx, minlength=16))


def failing_rows(a, s):
    for i in prange(a.shape[0]):
        if a[i, 0] < 0:
            raise ValueError("negative row")
        s += a[i]
    return s


def test_array_reduction_releases_accumulators_when_a_division_raises(nthreads):
    a = RNG.random((400_000, 3))
    a[300_000, 0] = -1.0
    with pytest.raises(ValueError, match="negative row"):
        njit(parallel=True)(failing_rows)(a, np.zeros(3))


def sqrt_acc():
    acc = 0
    for i in prange(1):
        acc = math.sqrt(acc)
    return acc


def xor_acc():
    acc = 100
    for i in prange(2):
        acc ^= i + 2
    return acc


def doubled_acc(a):
    acc = 1.0
    for i in prange(a.size):
        acc = acc + acc * a[i]
    return acc


@pytest.mark.parametrize("f", [sqrt_acc, xor_acc])
def test_unsupported_use_of_an_accumulator_is_numbas_value_error(f):
    # Partial results of these cannot be combined: Numba rejects the loop.
    with pytest.raises(ValueError, match="Use of reduction variable acc in an unsupported"):
        njit(parallel=True)(f)()
    with pytest.raises(numba_rs.errors.TypingError):
        njit(parallel=True)(f)()
    # Serially (and with prange as range) they are ordinary loops.
    assert njit(f)() == f()


def test_accumulator_read_twice_is_rejected():
    with pytest.raises(ValueError, match="Use of reduction variable acc"):
        njit(parallel=True)(doubled_acc)(np.ones(3))


def branch_reductions(flag, n):
    # Numba issue 7630: a reduction in each branch; strip_phis leaves the copy for the
    # join in each loop header, which must run after the parfor, not in its body.
    result = 0
    if flag:
        for i in prange(n):
            result += i
    else:
        for i in prange(n):
            result -= 3
    return result


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("n", [0, 1, 1000])
def test_reductions_in_both_branches(nthreads, flag, n):
    fp, f = both(branch_reductions)
    assert fp(flag, n) == f(flag, n)


def read_acc_elsewhere(a, limit):
    # The accumulator read outside the computation of its new value: the worker sees
    # its partial sum, as in Numba (serially the same here, since the partial never
    # reaches the limit).
    s = 0.0
    hits = 0
    for i in prange(len(a)):
        if s > limit:
            hits += 1
        s += a[i]
    return s, hits


def test_accumulator_read_in_a_condition(nthreads):
    a = RNG.random(5000)
    s, hits = njit(parallel=True)(read_acc_elsewhere)(a, 1e9)
    es, ehits = read_acc_elsewhere(a, 1e9)
    assert s == pytest.approx(es)
    assert hits == ehits == 0


def overwrite_index(a):
    m = 0
    for i in prange(len(a)):
        m += a[i]
        if m == 2:
            i = m
    return m


def test_overwriting_the_loop_index_is_rejected():
    a = np.ones(10, np.int64)
    # Numba's UnsupportedRewriteError, an UnsupportedError.
    with pytest.raises(
        numba_rs.errors.UnsupportedRewriteError, match="Overwrite of parallel loop index"
    ) as e:
        njit(parallel=True)(overwrite_index)(a)
    assert isinstance(e.value, numba_rs.errors.UnsupportedError)
    assert f"line {overwrite_index.__code__.co_firstlineno + 5}" in str(e.value)
    assert njit(overwrite_index)(a) == overwrite_index(a)


# ------------------------------------------------------------ pndindex


def pnd_map(a):
    out = np.zeros_like(a)
    s = 0.0
    for idx in numba_rs.pndindex(a.shape):
        out[idx] = a[idx] * 2
        s += a[idx]
    return out, s


def pnd_ints(n, m):
    c = np.zeros((n, m), np.int64)
    t = 0
    for i, j in numba_rs.pndindex(n, m):
        c[i, j] = i * 100 + j
        t += i * j
    return c, t


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (3, 5), (700, 600), (20, 30, 40)])
def test_pndindex_loops_match_python(nthreads, shape):
    a = RNG.random(shape)
    out, s = njit(parallel=True)(pnd_map)(a)
    want_out, want_s = pnd_map(a)
    np.testing.assert_array_equal(out, want_out)
    assert s == pytest.approx(want_s)
    got = njit(parallel=True)(pnd_ints)(300, 700)
    want = pnd_ints(300, 700)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_pndindex_is_reported_as_numba_reports_it(capfd):
    import os

    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        njit(parallel=True)(pnd_ints)(2, 2)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    assert "pattern '('prange', 'pndindex', '')'" in capfd.readouterr().out


def test_numbas_own_pndindex():
    numba = pytest.importorskip("numba")

    def f(a):
        s = 0.0
        for idx in numba.pndindex(a.shape):
            s += a[idx]
        return s

    a = RNG.random((50, 40))
    assert njit(parallel=True)(f)(a) == pytest.approx(a.sum())
    assert njit(f)(a) == pytest.approx(a.sum())


# ----------------------------------------------------------------- allocation hoisting


def zeros_counter(a):
    s = 0.0
    for i in prange(a.shape[0]):
        t = np.zeros(3)
        t[i % 3] += a[i]
        t[(i + 1) % 3] += 1.0
        s += t.sum() + t[0] * 2
    return s


def ones_branchy(a, n):
    out = np.empty(a.shape[0])
    for i in prange(a.shape[0]):
        t = np.ones(n)
        for k in range(n):
            if (k + i) % 2 == 0:
                t[k] = a[i] * k
        out[i] = t.sum()
    return out


def escaping_view(a):
    out = np.empty((a.shape[0], 2))
    for i in prange(a.shape[0]):
        t = np.zeros(3)
        u = t[1:]
        u[0] = a[i]
        out[i, 0] = t[1]
        out[i, 1] = u.sum()
    return out


def last_row(a):
    t = np.zeros(2)
    for i in prange(a.shape[0]):
        t = np.empty(2)
        t[0] = a[i]
        t[1] = i
    return t


@pytest.mark.parametrize("n", [1, 7, 10_001])
def test_hoisted_allocations_start_afresh_each_iteration(nthreads, n):
    """An allocation made alike by every iteration is made once per thread (Numba's
    allocation hoisting): zeros and ones are refilled, so each iteration still starts
    from them, against CPython running the same loop."""
    a = RNG.random(n)
    par, ser = both(zeros_counter)
    assert par(a) == pytest.approx(ser(a), rel=1e-12)
    par, ser = both(ones_branchy)
    np.testing.assert_allclose(par(a, 5), ser(a, 5), rtol=1e-12)
    par, ser = both(escaping_view)
    np.testing.assert_array_equal(par(a), ser(a))


def test_an_array_read_after_the_loop_is_not_hoisted():
    a = RNG.random(50)
    par, ser = both(last_row)
    with pytest.warns(numba_rs.errors.NumbaParallelSafetyWarning):
        got = par(a)
    assert got.shape == (2,) and got[0] in a


def test_diagnostics_report_hoisted_allocations(capsys):
    """Numba's "Allocation hoisting" section names the allocation, its line and loop."""
    f = njit(parallel=True)(zeros_counter)
    f(RNG.random(10))
    f.parallel_diagnostics(level=3)
    out = capsys.readouterr().out
    line = zeros_counter.__code__.co_firstlineno + 3
    flat = " ".join(out.split())  # the message is wrapped at 80 columns, as Numba's
    assert f"derived from the instruction at {__file__} ({line}) is hoisted out of the" in flat
    assert "   Allocation:: t = np.zeros(3)\n    - numpy.empty() is used for the allocation." in out
    g = njit(parallel=True)(last_row)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g(RNG.random(5))
    g.parallel_diagnostics(level=3)
    assert "No allocation hoisting found" in capsys.readouterr().out


def test_inline_threshold_is_read_at_run_time():
    """A loop of a size known when compiling keeps its pooled path (the generated code
    names the scheduler); whether it runs inline is the runtime's threshold, which
    NUMBA_RS_INLINE_WORK sets: at 0 even four iterations go to the pool's threads."""
    code = textwrap.dedent(
        """
        import numpy as np
        import numba_rs
        from numba_rs import njit, prange

        @njit(parallel=True)
        def ids():
            out = np.zeros(4, dtype=np.int64)
            for i in prange(4):
                # Long enough that the other thread takes a division when pooled.
                acc = 0.0
                for k in range(20_000_000):
                    acc += k * 1e-9
                out[i] = numba_rs.get_thread_id() + (acc < 0)
            return out

        numba_rs.set_num_threads(2)
        got = ids()
        assert "@do_scheduling" in ids.inspect_llvm(ids.signatures[0])
        print(sorted(set(got.tolist())))
        """
    )
    def run(env_value):
        env = dict(os.environ, NUMBA_NUM_THREADS="2")
        if env_value is not None:
            env["NUMBA_RS_INLINE_WORK"] = env_value
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert run(None) == "[0]"  # below the default threshold: inline on the caller
    assert run("0") == "[0, 1]"  # every region pooled: both threads took a division


# ------------------------------------------------------------- prange fusion
# Two prange loops over one iteration space fuse unless one has a cross-iteration
# dependence (Numba's has_cross_iter_dep); the cases are Numba's test_parfors ones.


def fuse_map_then_read(a, b, n):
    for i in prange(n):
        a[i] = i * 2.0
    for i in prange(n):
        b[i] = a[i] + 1
    return b


def fuse_len_bounds(a, b):
    for i in prange(len(a)):
        a[i] = i
    for i in prange(len(a)):
        b[i] = a[i] * 3 + 1
    return b


def fuse_two_reductions(a, n):
    s = 0.0
    t = 0.0
    for i in prange(n):
        s += a[i]
    for i in prange(n):
        t += a[i] * 2
    return s, t


def fuse_tuple_const_index(a, tup, size):
    acc = 0
    for i in prange(size):
        a[i] = i + tup[i]
    for i in prange(size):
        acc += a[i] + tup[1]
    return acc


def no_fuse_index_calc(u, size):
    for i in prange(1, size - 1):
        for j in range((i + 1) % 2 + 1, size - 1, 2):
            u[i, j] = u[i + 1, j] + 1
    for i in prange(1, size - 1):
        for j in range(i % 2 + 1, size - 1, 2):
            u[i, j] = u[i + 1, j] + 1
    return u


def no_fuse_reversed_index(a, b, size):
    for i in prange(size):
        for j in range(size):
            a[i, j] = b[i, j] + 1
    for i in prange(size):
        for j in range(size):
            b[j, i] = 3
    return a[0, 0] + b[0, 0]


def no_fuse_index_then_constant(a, size):
    b = 0
    for i in prange(size):
        a[i] = i
    for i in prange(size):
        b += a[5]
    return b


def no_fuse_constant_then_index(a, b, size):
    for i in prange(size):
        b[i] = a[5]
    for i in prange(size):
        a[i] = i
    b[0] += a[0]
    return b


def no_fuse_reads_first_result(a, n):
    s = 0.0
    for i in prange(n):
        s += a[i]
    for i in prange(n):
        a[i] = a[i] / s
    return a


def no_fuse_other_space(a, n):
    for i in prange(n):
        a[i] = 1.0
    for i in prange(n - 1):
        a[i + 1] += a[i]
    return a


def fuse_numpy_then_loop(n, b):
    a = np.ones(n)
    for i in prange(n):
        b[i] = a[i] * 2 + i
    return b


def fuse_loop_then_expression(a):
    for i in prange(len(a)):
        a[i] = i * 0.5
    c = a * 2 + 1
    return c


def fuse_loop_then_reduction(a):
    for i in prange(a.shape[0]):
        a[i] = i
    return a.sum()


def no_fuse_loop_then_reversed_view(a):
    for i in prange(len(a)):
        a[i] = i
    return a[::-1] + 1


def fuse_loop_then_expression_with_argument(a, b):
    # Numba's array analysis asserts `a` and `b` equal in size, so the loop and the
    # expression share an iteration space.
    for i in prange(len(a)):
        a[i] = i
    return a + b


def no_fuse_expression_read_shifted(a):
    b = a + 1
    for i in prange(len(a)):
        if i + 1 < len(a):
            a[i] = b[i + 1]
    return a


def no_fuse_method_reads_whole_array(x):
    # Numba issue 7578: the loop reads all of `tmp` through a method call.
    A = np.zeros_like(x)
    tmp = np.cos(x)
    for i in prange(len(x)):
        A[i] = tmp.sum()
    return A


def no_fuse_loop_then_method(a, b):
    for i in prange(len(a)):
        a[i] = i * 2.0
    for i in prange(len(a)):
        b[i] = a.max() - a[i]
    return b


def fuse_empty_then_reductions(x):
    n = len(x)
    r = np.empty(n)
    for i in prange(n):
        r[i] = np.sqrt(x[i])
    return r.max() - r.min()


def fuse_reshape_then_ones(a):
    b = a.reshape(a.size)
    c = np.ones(a.size)
    return b + c


def fuse_shapes_built_twice(m, n):
    a = np.ones((m, n))
    b = np.zeros((m, n))
    return a + b


def fuse_zeros_like_loop_then_expression(a):
    b = np.zeros_like(a)
    for i in prange(len(a)):
        b[i] = a[i] * 2
    return b + a


def fuse_shape_unpacked_store_then_reduction(a):
    m, n = a.shape
    b = np.empty((m, n))
    b[:] = 3.0
    return (a * b).sum()


def no_fuse_reshapes_of_one_inferred_shape(x, y, n):
    # `-1` is inferred from each source: the two reshapes' sizes differ, so the loops
    # stay apart (Numba 0.68.1 fuses them and returns 0.0 here; CPython gives 15066.0).
    t = (-1, n)
    b = x.reshape(t)
    d = y.reshape(t)
    return b.sum() + 1000.0 * d.sum()


FUSION_CASES = [
    (no_fuse_method_reads_whole_array, lambda: (np.arange(10.0),), 2),
    (no_fuse_loop_then_method, lambda: (np.zeros(300), np.zeros(300)), 2),
    (fuse_numpy_then_loop, lambda: (1000, np.zeros(1000)), 1),
    (fuse_loop_then_expression, lambda: (np.zeros(500),), 1),
    (fuse_loop_then_reduction, lambda: (np.zeros(777),), 1),
    (no_fuse_loop_then_reversed_view, lambda: (np.zeros(20),), 2),
    (fuse_loop_then_expression_with_argument, lambda: (np.zeros(9), np.ones(9)), 1),
    # Shapes followed through creation calls and reshapes (counts as in Numba 0.68.1).
    (fuse_empty_then_reductions, lambda: (RNG.random(1000),), 1),
    (fuse_reshape_then_ones, lambda: (RNG.random((30, 7)),), 1),
    (fuse_shapes_built_twice, lambda: (13, 17), 1),
    (fuse_zeros_like_loop_then_expression, lambda: (RNG.random(501),), 1),
    (fuse_shape_unpacked_store_then_reduction, lambda: (RNG.random((40, 9)),), 1),
    (no_fuse_reshapes_of_one_inferred_shape, lambda: (np.arange(12.0), np.arange(6.0), 3), 2),
    (no_fuse_expression_read_shifted, lambda: (np.arange(10.0),), 2),
    (fuse_map_then_read, lambda: (np.zeros(1001), np.zeros(1001), 1001), 1),
    (fuse_len_bounds, lambda: (np.zeros(999), np.zeros(999)), 1),
    (fuse_two_reductions, lambda: (RNG.random(5000), 5000), 1),
    (fuse_tuple_const_index, lambda: (np.zeros(10), tuple(RNG.random(10)), 10), 1),
    (no_fuse_index_calc, lambda: (np.zeros((40, 40)), 40), 2),
    (no_fuse_reversed_index, lambda: (np.zeros((30, 30)), RNG.random((30, 30)), 30), 2),
    (no_fuse_index_then_constant, lambda: (np.zeros(10), 10), 2),
    (no_fuse_constant_then_index, lambda: (np.arange(10.0), np.zeros(10), 10), 2),
    (no_fuse_reads_first_result, lambda: (RNG.random(100), 100), 2),
    (no_fuse_other_space, lambda: (np.zeros(50), 50), 2),
]


@pytest.mark.parametrize("f, make, loops", FUSION_CASES)
def test_prange_loops_fuse_as_numbas_do(nthreads, capfd, f, make, loops):
    import copy
    import os

    args = make()
    want = f(*copy.deepcopy(args))
    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        got = njit(parallel=True)(f)(*copy.deepcopy(args))
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    out = capfd.readouterr().out
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert f"has {loops} parallel for-loop(s)" in out, out
    assert ("is fused into" in out) == (loops == 1)


def test_fusion_relies_on_numbas_size_assertion():
    # Fused, the loop over `len(a)` computes `a + b` too, which needs equal sizes: a
    # stretched length-1 operand raises Numba 0.68.1's AssertionError (checked against
    # it), while the same expression unfused still broadcasts as NumPy does.
    def add_only(a, b):
        return a + b

    got = njit(parallel=True)(add_only)(np.zeros(9), np.ones(1))
    np.testing.assert_array_equal(got, np.ones(9))
    del got
    f = njit(parallel=True)(fuse_loop_then_expression_with_argument)
    line = fuse_loop_then_expression_with_argument.__code__.co_firstlineno + 5
    for a, b in [(np.zeros(9), np.ones(1)), (np.zeros(1), np.ones(9))]:
        with pytest.raises(AssertionError) as e:
            f(a, b)
        assert str(e.value) == f"Sizes of a, b do not match on {__file__} ({line})"


def filled_then_summed(a, b):
    n = a.shape[0]
    c = np.empty(n)
    for i in prange(n):
        c[i] = math.sqrt(a[i]) * 2.0
    return (c + b).sum()


def filled_then_extremes(x, y):
    n = len(x)
    r = np.empty(n)
    for i in prange(n):
        r[i] = np.sqrt(x[i] ** 2 + y[i] ** 2)
    return r.max() - r.min()


def stored_under_condition(a):
    n = len(a)
    c = np.zeros(n)
    for i in prange(n):
        if a[i] > 0.5:
            c[i] = a[i]
    return c.sum()


def stored_in_inner_loop(a, m):
    n = len(a)
    c = np.empty(n)
    for i in prange(n):
        for j in range(m):
            c[i] = a[i] * j
    return c.sum() + c.max()


def stored_as_another_dtype(a):
    n = len(a)
    c = np.empty(n)
    for i in prange(n):
        c[i] = int(a[i] * 10)
    return c.sum()


@pytest.mark.parametrize("n", [0, 1, 5, 300_001])
def test_array_filled_and_read_in_one_fused_loop_is_never_stored(nthreads, n):
    # Numba's get/setitem forwarding after fusion: `c` is written and read at the same
    # position of the fused loop only, so its reads take the computed value and no
    # memory is allocated for it (nor for the temporary `c + b`).
    from numba_rs.runtime import rtsys

    a, b = RNG.random(n), RNG.random(n)
    f = njit(parallel=True)(filled_then_summed)
    g = njit(parallel=True)(filled_then_extremes)
    want = filled_then_summed(a, b)
    assert f(a, b) == pytest.approx(want, rel=1e-9)
    before = rtsys.get_allocation_stats().alloc
    assert f(a, b) == pytest.approx(want, rel=1e-9)
    if n:
        assert g(a, b) == pytest.approx(filled_then_extremes(a, b), rel=1e-12)
    assert rtsys.get_allocation_stats().alloc == before


@pytest.mark.parametrize("n", [1, 7, 300_001])
def test_stores_not_sure_to_run_are_kept(nthreads, n):
    # A store under a condition, one in an inner loop, or one converting its value
    # keeps the array: the reads must see what is in memory.
    from numba_rs.runtime import rtsys

    a = RNG.random(n)
    for f, args in [
        (stored_under_condition, (a,)),
        (stored_in_inner_loop, (a, 3)),
        (stored_as_another_dtype, (a,)),
    ]:
        before = rtsys.get_allocation_stats().alloc
        assert njit(parallel=True)(f)(*args) == pytest.approx(f(*args), rel=1e-9)
        assert rtsys.get_allocation_stats().alloc > before


def two_sums(a, b):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i]
        s += b[i]
    return s


def sum_then_subtract(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s = s + a[i]
        s -= 0.5
    return s


def two_maxima(a, b):
    m = -np.inf
    for i in prange(a.shape[0]):
        m = max(m, a[i])
        m = max(m, b[i])
    return m


def count_twice(a):
    c = 0
    for i in prange(a.shape[0]):
        c += 1
        c += 2
    return c


def product_then_divide(a):
    p = 1.0
    for i in prange(a.shape[0]):
        p *= a[i]
        p /= a[i] * 0.5
    return p


@pytest.mark.parametrize("n", [0, 3, 1_000_001])
def test_updates_in_a_row_make_one_reduction(nthreads, n):
    # Each update's accumulator is the previous update's result: the steps compose into
    # one reduction (Numba 0.68.1 rejects `s += x; s += y` with a ValueError, and gives
    # max twice right); with the thread pool, the partial results must all combine.
    a, b = RNG.random(n), RNG.random(n)
    b[n // 2 :] += 2.0
    assert njit(parallel=True)(two_sums)(a, b) == pytest.approx(two_sums(a, b), rel=1e-9)
    assert njit(parallel=True)(sum_then_subtract)(a) == pytest.approx(sum_then_subtract(a), rel=1e-9)
    assert njit(parallel=True)(two_maxima)(a, b) == two_maxima(a, b)
    assert njit(parallel=True)(count_twice)(a) == count_twice(a) == 3 * n
    small = RNG.random(min(n, 60)) + 0.5
    assert njit(parallel=True)(product_then_divide)(small) == pytest.approx(
        product_then_divide(small), rel=1e-9
    )


def caught_in_body(a):
    out = np.empty(a.shape[0])
    for i in prange(a.shape[0]):
        try:
            if a[i] < 0:
                raise ValueError("neg")
            out[i] = math.sqrt(a[i])
        except Exception:
            out[i] = -1.0
    return out


def jacobi_until(u0, tol, maxit):
    # A convergence loop around a parallel loop: `while err > tol and it < maxit`.
    u = u0.copy()
    err = tol + 1.0
    it = 0
    while err > tol and it < maxit:
        v = u.copy()
        for i in prange(1, u.shape[0] - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1])
        err = np.abs(v - u).max()
        u = v
        it += 1
    return u, it


def test_try_except_in_a_body_and_array_rebinding_release_once(nthreads):
    a = RNG.random(400_001) - 0.5
    for _ in range(3):
        np.testing.assert_array_equal(njit(parallel=True)(caught_in_body)(a), caught_in_body(a))
    u0 = RNG.random(2001)
    got, it = njit(parallel=True)(jacobi_until)(u0, 1e-3, 50)
    want, wit = jacobi_until(u0, 1e-3, 50)
    assert it == wit
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_threading_layer_once_a_parallel_function_is_compiled():
    # Numba's documented snippet: a small parallel call (run inline here), then the layer.
    code = textwrap.dedent(
        """
        import numpy as np, numba_rs
        try:
            numba_rs.threading_layer()
            raise SystemExit("no error before any parallel function")
        except ValueError as e:
            assert str(e) == "Threading layer is not initialized.", e
        @numba_rs.njit(parallel=True)
        def foo(a, b):
            return a + b
        x = np.arange(10.0)
        foo(x, x.copy())
        print(numba_rs.threading_layer())
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "numba_rs"


def raises_after_allocating(a):
    out = np.empty_like(a)
    tmp = a * 2.0
    for i in prange(a.shape[0]):
        if a[i] > 100:
            raise RuntimeError("too big")
        out[i] = tmp[i]
    return out


@njit
def helper_raises(x):
    if x > 1:
        raise ValueError("x > 1")
    return x


def raises_in_callee(a):
    out = np.ones(3)
    t = a + 1.0
    y = helper_raises(a[0])
    return out, t, y


@pytest.mark.parametrize("n", [3, 400_001])
def test_an_exception_releases_the_arrays_the_function_holds(nthreads, n):
    # The conftest fixture checks allocations balance: the arrays allocated before a
    # raise in a parallel region, or in a callee, are released on the way out.
    a = RNG.random(n)
    a[n // 2] = 200.0
    f = njit(parallel=True)(raises_after_allocating)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="too big"):
            f(a)
    g = njit(raises_in_callee)
    with pytest.raises(ValueError, match="x > 1"):
        g(np.array([5.0]))
    out, t, y = g(np.array([0.5]))
    assert y == 0.5 and t[0] == 1.5 and out.sum() == 3.0
    del out, t


# ------------------------------------------------------------ functools.reduce

def reduce_min_from(a):
    init_val = 10
    return functools.reduce(lambda x, y: min(x, y), a, init_val)


def reduce_sum_from_zero(a):
    return functools.reduce(lambda x, y: x + y, a, 0.0)


def reduce_range(n):
    return functools.reduce(lambda x, y: x + y, range(n), 0)


def reduce_without_initial(a):
    return functools.reduce(lambda x, y: x + y, a)


@pytest.mark.parametrize("size", [0, 7, 211, 400_000])
def test_reduce_over_an_array_is_a_reduction_parfor(nthreads, size, capfd, monkeypatch):
    """Numba's ConvertReducePass: `reduce(f, a, init)` over a 1-d array is a parfor whose
    accumulator is a reduction (pattern `('<f> function', 'reduction')`, Numba 0.68.1's
    ids and variable names); CPython's result is the oracle."""
    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    a = RNG.random(size)
    ints = RNG.integers(0, 100, size).astype(np.int32)
    assert njit(parallel=True)(reduce_min_from)(a) == reduce_min_from(a)
    assert njit(parallel=True)(reduce_min_from)(ints) == reduce_min_from(ints)
    assert njit(parallel=True)(reduce_sum_from_zero)(a) == pytest.approx(reduce_sum_from_zero(a), rel=1e-9)
    out = capfd.readouterr().out
    assert out.count("function', 'reduction')'") == 3, out
    assert "make_function" in out


def reduce_masked(a, t):
    return functools.reduce(lambda x, y: x + y, a[a > t], 0.0)


def reduce_masked_min(a, m):
    return functools.reduce(lambda x, y: min(x, y), a[m], 1000)


def reduce_masked_copy_read_again(a, t):
    b = a[a > t]
    return functools.reduce(lambda x, y: x + y, b, 0.0) + b.size


@pytest.mark.parametrize("size", [0, 7, 211, 400_000])
def test_reduce_over_a_masked_array_reads_the_array_where_the_mask_is_set(
    nthreads, size, capfd, monkeypatch
):
    """Numba's `_find_mask`: `reduce(f, a[mask], init)` loops over `a` where the mask is
    set, fused with the loop computing the mask, and never makes the filtered copy."""
    from numba_rs.runtime import rtsys

    monkeypatch.setenv("NUMBA_DEBUG_ARRAY_OPT_STATS", "1")
    a = RNG.random(size)
    f = njit(parallel=True)(reduce_masked)
    assert f(a, 0.5) == pytest.approx(reduce_masked(a, 0.5), rel=1e-9)
    out = capfd.readouterr().out
    assert "is fused into for-loop" in out and "1 parallel for-loop(s)" in out, out
    # One allocation per call: the mask; the serial build also allocates the copy.
    before = rtsys.get_allocation_stats().alloc
    f(a, 0.5)
    assert rtsys.get_allocation_stats().alloc - before == 1
    ints = RNG.integers(-500, 500, size)
    m = RNG.random(size) < 0.3
    assert njit(parallel=True)(reduce_masked_min)(ints, m) == reduce_masked_min(ints, m)
    # A copy something else reads is made, and the loop runs over it.
    g = njit(parallel=True)(reduce_masked_copy_read_again)
    assert g(a, 0.5) == pytest.approx(reduce_masked_copy_read_again(a, 0.5), rel=1e-9)


def test_reduce_over_a_mask_of_another_shape_is_numpys_index_error():
    with pytest.raises(IndexError):
        njit(parallel=True)(reduce_masked_min)(np.arange(5), np.ones(4, dtype=np.bool_))


def test_reduce_without_an_array_or_initial_value_stays_serial():
    # Numba rejects these under parallel=True; numba-rs runs them as the serial loop.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        assert njit(parallel=True)(reduce_range)(100) == reduce_range(100)
        a = RNG.random(50)
        assert njit(parallel=True)(reduce_without_initial)(a) == reduce_without_initial(a)
