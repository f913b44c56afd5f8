"""Compiled code used from several Python threads at once: the first call from 16
threads compiles once, `nogil=True` functions run in many threads, `parallel=True`
functions are called from several threads, and generators and typed containers are
shared between threads under the GIL. CPython's results are the oracle."""

import threading
import warnings

import numpy as np

from numba_rs import njit, prange
from numba_rs.typed import Dict, List


def run_threads(n, target):
    """Run target(k) in n threads released together by a barrier; re-raise any error."""
    barrier = threading.Barrier(n)
    errors = []

    def body(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def poly(x, n):
    s = 0.0
    for i in range(n):
        s += (x * i) % 7.0
    return s


def test_sixteen_threads_first_call_compile_once():
    # `parallel=True` over a loop with nothing to parallelise warns once per compile
    # (Numba's NumbaPerformanceWarning): the count of warnings is the count of compiles.
    f = njit(parallel=True)(poly)
    results = [None] * 16
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_threads(16, lambda k: results.__setitem__(k, f(float(k), 100)))
    assert results == [poly(float(k), 100) for k in range(16)]
    assert len(f.signatures) == 1
    compiles = [w for w in caught if "parallel=True" in str(w.message)]
    assert len(compiles) == 1, [str(w.message) for w in caught]


def test_sixteen_threads_first_call_of_different_functions_sharing_a_callee():
    helper = njit(lambda x: x * 3 + 1)
    fs = [njit(lambda x, k=k: helper(x) + k) for k in range(16)]
    results = [None] * 16

    def call(k):
        results[k] = fs[k](k)

    run_threads(16, call)
    assert results == [k * 3 + 1 + k for k in range(16)]
    assert len(helper.signatures) == 1


def collatz_total(lo, hi):
    total = 0
    for n in range(lo, hi):
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            total += 1
    return total


def test_nogil_functions_in_many_threads():
    f = njit(nogil=True)(collatz_total)
    f(1, 2)
    ranges = [(1 + 500 * k, 1 + 500 * (k + 1)) for k in range(12)]
    results = [None] * len(ranges)

    def call(k):
        for _ in range(3):
            results[k] = f(*ranges[k])

    run_threads(len(ranges), call)
    assert results == [collatz_total(*r) for r in ranges]


def test_nogil_array_work_in_threads_writes_disjoint_slices():
    @njit(nogil=True)
    def fill(a, lo, hi):
        for i in range(lo, hi):
            a[i] = np.sqrt(i) * 2.0
        return a[lo:hi].sum()

    a = np.zeros(80_000)
    sums = [None] * 8

    def call(k):
        sums[k] = fill(a, 10_000 * k, 10_000 * (k + 1))

    run_threads(8, call)
    want = np.sqrt(np.arange(80_000)) * 2.0
    np.testing.assert_allclose(a, want)
    np.testing.assert_allclose(sums, want.reshape(8, -1).sum(axis=1))


def test_parallel_functions_called_from_several_threads():
    @njit(parallel=True)
    def scaled_sum(a, c):
        s = 0.0
        for i in prange(a.shape[0]):
            s += a[i] * c
        return s

    @njit(parallel=True)
    def square(a):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = a[i] * a[i]
        return out

    a = np.arange(10_000, dtype=np.float64)
    sums = [None] * 6
    squares = [None] * 6

    def call(k):
        for _ in range(5):
            sums[k] = scaled_sum(a, float(k))
            squares[k] = square(a + k)

    run_threads(6, call)
    for k in range(6):
        assert abs(sums[k] - a.sum() * k) <= 1e-9 * max(1.0, a.sum() * k)
        np.testing.assert_array_equal(squares[k], (a + k) ** 2)


def test_generators_shared_by_two_threads_under_the_gil():
    @njit
    def evens(n):
        for i in range(n):
            if i % 2 == 0:
                yield i

    gen = evens(20_000)
    lock = threading.Lock()
    seen = [[], []]

    def consume(k):
        while True:
            with lock:  # a generator is not re-entrant (CPython raises if it is)
                try:
                    v = next(gen)
                except StopIteration:
                    return
            seen[k].append(v)

    run_threads(2, consume)
    assert sorted(seen[0] + seen[1]) == list(range(0, 20_000, 2))
    # Separate generators of one function in two threads need no lock.
    totals = [None, None]
    run_threads(2, lambda k: totals.__setitem__(k, sum(evens(1000 + k))))
    assert totals == [sum(range(0, 1000, 2)), sum(range(0, 1001, 2))]


def test_typed_containers_shared_by_two_threads_under_the_gil():
    @njit
    def add_items(d, lst, base, n):
        for i in range(n):
            d[base + i] = float(i)
            lst.append(base + i)
        return len(d)

    d = Dict.empty(key_type=np.int64, value_type=np.float64)
    lst = List.empty_list(np.int64)
    add_items(d, lst, -1, 1)  # compile first
    d.clear()
    lst.clear()

    def work(k):
        for j in range(50):
            add_items(d, lst, 1_000_000 * k + 100 * j, 100)
            # Python-side operations interleave with the other thread's compiled calls.
            d[-(k + 1) * 10_000 - j] = 0.5
            lst.append(-1)

    run_threads(2, work)
    assert len(d) == 2 * 50 * 100 + 2 * 50
    assert len(lst) == 2 * 50 * 100 + 2 * 50
    keys = sorted(k for k in d.keys() if k >= 0)
    want = sorted(1_000_000 * k + 100 * j + i for k in range(2) for j in range(50) for i in range(100))
    assert keys == want
    assert sorted(x for x in lst if x >= 0) == want
    assert all(d[key] == float(key % 100) for key in want)
