"""Array comprehensions: `np.array([expr for x in it])` (and the same loop written with a
list and `append`) compiled without a list, as Numba's `_inline_arraycall` does, serially
and under parallel=True (its `comprehension` option makes the loop an internal prange).
Lists that are only read (`np.array([1.0, 2.0, x])`, a loop over a written-out list) are
compiled as tuples. Each function is checked against CPython running it with NumPy (the
oracle) on random inputs; the autouse fixture in conftest.py checks NRT balance."""

import math
import os
import re

import numpy as np
import pytest

import numba_rs
from numba_rs import njit
from numba_rs.errors import TypingError

RNG = np.random.default_rng(11)


def check(f, *args, parallel, dtype=None):
    expected = f(*args)
    got = njit(parallel=parallel)(f)(*args)
    # An empty list makes NumPy's float64; Numba's dtype is the element type whatever
    # the length (test_empty_range_gives_an_empty_array). Where values mix ints and
    # floats, Numba's dtype is their unified type (`dtype`).
    if dtype is not None:
        assert got.dtype == dtype
    elif expected.size:
        assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    return got


def scaled(a, n):
    return np.array([a[i] * 2.5 for i in range(n)])


def offset(a, lo, hi):
    return np.array([a[i] - i for i in range(lo, hi)])


def stepped(n):
    return np.array([i * 0.5 for i in range(1, n, 3)])


def over_array(a):
    return np.array([math.sqrt(x) + 1 for x in a])


def over_rows(m):
    return np.array([r.sum() for r in m])


def over_tuple(t):
    return np.array([x * 3 for x in t])


def enumerated(a):
    return np.array([i * x for i, x in enumerate(a)])


def with_dtype_kw(n):
    return np.array([i / 3 for i in range(n)], dtype=np.float32)


def with_dtype_positional(a):
    return np.array([x * 10 for x in a], np.int32)


def appended(n):
    out = []
    for i in range(n):
        out.append(i * i - 3)
    return np.array(out)


def mixed_values(a):
    return np.array([x if x > 0.5 else 0 for x in a])


def bools(a):
    return np.array([x > 0.5 for x in a])


def matrix(a, n, m):
    return np.array([[a[i] * j + i for j in range(m)] for i in range(n)])


def cube(n, m, k):
    return np.array([[[i * 100 + j * 10 + q for q in range(k)] for j in range(m)] for i in range(n)])


def kmeans_step(A, centroids):
    # Numba's kmeans example: a distance matrix, the labels and the new centroids, each
    # an array comprehension, inside an outer loop.
    N, D = A.shape
    k = centroids.shape[0]
    for _ in range(2):
        dist = np.array(
            [[math.sqrt(np.sum((A[i, :] - centroids[j, :]) ** 2)) for j in range(k)] for i in range(N)]
        )
        labels = np.array([dist[i, :].argmin() for i in range(N)])
        centroids = np.array(
            [[np.sum(A[labels == i, j]) / max(np.sum(labels == i), 1) for j in range(D)] for i in range(k)]
        )
    return centroids


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_one_dimensional(parallel, n, nthreads):
    a = RNG.random(max(n, 1))
    check(scaled, a, n, parallel=parallel)
    check(offset, a, min(2, n), n, parallel=parallel)
    check(stepped, n, parallel=parallel)
    check(over_array, a[:n], parallel=parallel)
    check(enumerated, a[:n], parallel=parallel)
    check(appended, n, parallel=parallel)
    check(mixed_values, a[:n], parallel=parallel, dtype=np.float64)
    check(bools, a[:n], parallel=parallel)


@pytest.mark.parametrize("parallel", [False, True])
def test_iterables_and_dtypes(parallel):
    check(over_rows, RNG.random((5, 4)), parallel=parallel)
    check(over_tuple, (1.5, 2.0, -3.0), parallel=parallel)
    got = check(with_dtype_kw, 10, parallel=parallel)
    assert got.dtype == np.float32
    got = check(with_dtype_positional, RNG.random(9), parallel=parallel)
    assert got.dtype == np.int32


def test_empty_range_gives_an_empty_array():
    # Numba allocates `n` items for range(n) and fails on a negative n; the iterator's
    # length is used here, as Python's list would be empty. The dtype is the element
    # type (int64), as Numba infers it, where NumPy makes an empty list float64.
    def neg(n):
        return np.array([i for i in range(-n)])

    got = njit(neg)(3)
    assert got.shape == (0,) and got.dtype == np.int64


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (4, 5), (200, 30)])
def test_nested_comprehensions_make_one_array(parallel, shape, nthreads):
    a = RNG.random(max(shape[0], 1))
    if shape[0]:
        check(matrix, a, *shape, parallel=parallel)
    else:
        # NumPy makes `np.array([])` of an empty outer list (shape (0,)); the inner
        # sizes are known before the loop here, so the result is (0, m), as Numba's.
        got = njit(parallel=parallel)(matrix)(a, *shape)
        assert got.shape == shape and got.dtype == np.float64
    check(cube, shape[0] % 7 + 1, shape[1] % 5 + 1, 3, parallel=parallel)


@pytest.mark.parametrize("parallel", [False, True])
def test_kmeans_example(parallel, nthreads):
    A = RNG.random((200, 4))
    c = RNG.random((3, 4))
    check(kmeans_step, A, c, parallel=parallel)


def stats(capfd, f, *args, parallel=True):
    os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"] = "1"
    try:
        njit(parallel=parallel)(f)(*args)
    finally:
        del os.environ["NUMBA_DEBUG_ARRAY_OPT_STATS"]
    return capfd.readouterr().out


def test_parallel_comprehension_is_a_parfor(capfd):
    # Numba 0.68.1 prints, for `return np.array([a[i] * 2.5 for i in range(n)])`:
    # Parallel for-loop #0 is produced from pattern '('prange', 'internal',
    # (('"array comprehension"', 'closure of'), Loc(filename=F, line=L, col=None)))' at F (L)
    out = stats(capfd, scaled, np.ones(4), 4)
    line = scaled.__code__.co_firstlineno + 1
    file = scaled.__code__.co_filename
    # Loop ids count up over the process, as Numba's do.
    expected = (
        f"is produced from pattern '('prange', 'internal', "
        f"(('\"array comprehension\"', 'closure of'), Loc(filename={file}, line={line}, "
        f"col=None)))' at {file} ({line})"
    )
    m = re.search(r"Parallel for-loop #(\d+) " + re.escape(expected), out)
    assert m, out
    assert f"has 1 parallel for-loop(s) #{{{m.group(1)}}}" in out


def test_comprehension_option_off_keeps_the_loop_serial(capfd):
    out = stats(capfd, stepped, 10, parallel={"comprehension": False})
    assert "is produced" not in out
    # Still compiled without a list.
    np.testing.assert_array_equal(njit(parallel={"comprehension": False})(scaled)(np.ones(3), 3), scaled(np.ones(3), 3))


def test_stepped_range_is_not_parallelised(capfd):
    # As in Numba: only range(n) and range(m, n) loops index the array by their own index.
    out = stats(capfd, stepped, 10)
    assert "is produced" not in out


def test_a_filtered_comprehension_builds_a_list_first():
    def filtered(a):
        return np.array([x for x in a if x > 0])

    a = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(njit(filtered)(a), filtered(a))


def test_arrays_of_arrays_of_unknown_shape_are_a_typing_error():
    def rows(n):
        return np.array([np.ones(3) * i for i in range(n)])

    def ragged(n):
        return np.array([[j for j in range(i)] for i in range(n)])

    for f in (rows, ragged):
        with pytest.raises(TypingError, match="array comprehension's values must be scalars") as e:
            njit(f)(3)
        assert re.search(r"File .*test_array_comprehensions.py", str(e.value))


def test_the_list_used_elsewhere_is_not_rewritten():
    # `len(out)` inside the loop reads the list: it must stay a list, never a
    # half-filled array.
    def reads_list(n):
        out = []
        for i in range(n):
            out.append(len(out))
        return np.array(out)

    np.testing.assert_array_equal(njit(reads_list)(3), reads_list(3))


def test_serial_result_matches_numba_rs_parallel_result(nthreads):
    a = RNG.random(50_000)
    ser = njit(over_array)(a)
    par = njit(parallel=True)(over_array)(a)
    np.testing.assert_array_equal(ser, par)
    assert numba_rs.get_num_threads() == nthreads


# ------------------------------------------------------------ lists that are only read


def lit_array(x):
    return np.array([1.0, 2.0, x])


def lit_dtype(i):
    return np.array([i], np.int64) * 3


def lit_dtype_kw(i):
    return np.array([i, 2], dtype=np.float32) / 2


def lit_nested(x, y):
    return np.array([[x, y], [y, x], [x + y, 0]])


def lit_mixed(i):
    # Numba unifies the items (int and float make float64), as NumPy does here.
    return np.array([i, 2.5])


def lit_reads(x):
    steps = [1, 0, -1]
    s = 0
    for v in steps:
        s += v * x
    return s + len(steps) + steps[x % 3] + (x in [1, 2, 3])


def lit_asarray(a):
    return np.asarray([a[0], a[1] * 2]) + np.asarray((a[1], 2), np.float32) + np.asarray(a[0])


def lit_rows(h):
    e = np.zeros((3, 3))
    for i in range(2):
        e[i] = [h, h * 2, 3]
    e[2] = (1, 2, h)
    e[0, 1:] = [7, 8]
    return e


def lit_in_prange(a):
    out = np.empty(a.shape[0])
    for i in numba_rs.prange(a.shape[0]):
        w = np.array([0.25, 0.5, 0.25])
        out[i] = (a[i] * w).sum()
    return out


@pytest.mark.parametrize("parallel", [False, True])
def test_lists_only_read_compile_as_tuples(parallel):
    check(lit_array, 3.5, parallel=parallel)
    check(lit_dtype, 4, parallel=parallel)
    check(lit_dtype_kw, 4, parallel=parallel)
    check(lit_nested, 2, 5, parallel=parallel)
    check(lit_mixed, 7, parallel=parallel)
    for x in range(-3, 4):
        assert njit(parallel=parallel)(lit_reads)(x) == lit_reads(x)
    check(lit_asarray, RNG.random(3), parallel=parallel)
    check(lit_rows, 1.5, parallel=parallel)
    check(lit_in_prange, RNG.random(50), parallel=parallel)


def test_a_row_of_the_wrong_length_is_numpys_value_error():
    # The array is the caller's: an array the function allocated before raising would
    # leak (the README's known gap for raises from runtime helpers).
    def bad(e, h):
        e[0] = [h, h]
        return e

    with pytest.raises(ValueError):
        bad(np.zeros((2, 3)), 1.0)
    # Numba's message for it.
    with pytest.raises(ValueError, match="cannot assign slice from input of different size"):
        njit(bad)(np.zeros((2, 3)), 1.0)


def test_a_list_that_is_changed_or_kept_stays_a_list():
    def appended(n):
        xs = [1, 2]
        xs.append(n)
        return np.array(xs)

    def returned():
        return [1, 2]

    def passed(a):
        return np.sum([a[0], a[1]])

    np.testing.assert_array_equal(njit(appended)(3), appended(3))
    assert njit(returned)() == returned()
    # A list where NumPy wants an array: a typing error (as in Numba), never a tuple.
    with pytest.raises(TypingError, match="list"):
        njit(passed)(np.ones(2))
