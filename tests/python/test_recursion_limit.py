"""Recursion that exhausts the stack raises RecursionError (CPython's behaviour) instead of
crashing the interpreter (Numba's): `numba_nrt::stack_guard` and the probe compiled code
runs before each recursive call."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

import numba_rs
from numba_rs import njit

DEEP = 10**8  # far beyond any thread's stack at a few dozen bytes per frame


@njit
def depth(n):
    if n == 0:
        return 0
    return 1 + depth(n - 1)


@njit
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@njit
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def py_depth(n):
    return 0 if n == 0 else 1 + py_depth(n - 1)


def test_shallow_recursion_matches_cpython():
    assert depth(500) == py_depth(500) == 500
    assert is_even(10) is True and is_odd(7) is True


def test_too_deep_raises_recursion_error_and_the_function_still_works():
    for _ in range(3):
        with pytest.raises(RecursionError, match="maximum recursion depth exceeded"):
            depth(DEEP)
    # Deeper than CPython allows: the native stack holds far more frames.
    assert depth(100_000) == 100_000


def test_mutual_recursion_raises_recursion_error():
    with pytest.raises(RecursionError):
        is_even(DEEP)
    assert is_even(1000) is True


def test_recursion_error_is_catchable_by_the_python_caller():
    def caller():
        try:
            return depth(DEEP)
        except RecursionError as e:
            return type(e).__name__
    assert caller() == "RecursionError"


def test_in_other_threads_with_and_without_the_gil():
    @njit(nogil=True)
    def down(n):
        if n == 0:
            return 0
        return 1 + down(n - 1)

    results = []

    def work(f):
        try:
            results.append(f(DEEP))
        except RecursionError:
            results.append("RecursionError")
        results.append(f(1000))

    threads = [threading.Thread(target=work, args=(f,)) for f in (depth, down, down)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(str, results)) == ["1000"] * 3 + ["RecursionError"] * 3


def _run(code, env=None):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_allocating_recursion_recovers_without_deadlock():
    # Each frame holds an array: the stack runs out while the runtime allocates, so
    # this checks the fault is taken at the probe (in compiled code), never inside
    # malloc (whose lock a recovery would leave held). Run in a child: the abandoned
    # frames' arrays are not released (documented), which this process's NRT counters
    # would count.
    r = _run("""
        import numpy as np
        from numba_rs import njit

        @njit
        def grow(n):
            a = np.zeros(4)
            if n == 0:
                return a.sum()
            return grow(n - 1) + a[1] + 1.0

        for _ in range(3):
            try:
                grow(10**8)
            except RecursionError:
                print("RecursionError")
        print(grow(100), np.ones(3).sum())
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["RecursionError"] * 3 + ["100.0", "3.0"]


def test_cached_recursive_function_is_guarded(tmp_path):
    src = tmp_path / "recmod.py"
    src.write_text(textwrap.dedent("""
        from numba_rs import njit

        @njit(cache=True)
        def depth(n):
            if n == 0:
                return 0
            return 1 + depth(n - 1)
        """))
    code = """
        import sys
        sys.path.insert(0, %r)
        import recmod
        try:
            recmod.depth(10**8)
        except RecursionError:
            print("RecursionError")
        print(recmod.depth(10), sum(recmod.depth.stats.cache_hits.values()))
        """ % str(tmp_path)
    first = _run(code)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["RecursionError", "10", "0"]
    second = _run(code)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["RecursionError", "10", "1"]


def test_other_segfaults_still_reach_faulthandler():
    # A fault that is not a stack overflow of a guarded call goes to the handler that
    # was there before (here CPython's faulthandler), as without numba_rs.
    r = _run("""
        import ctypes, faulthandler
        from numba_rs import njit
        faulthandler.enable()
        print(njit(lambda n: n)(1), flush=True)

        @njit
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        depth(10)
        ctypes.string_at(1)
        """)
    assert r.returncode != 0
    assert r.stdout.strip() == "1"
    assert "Fatal Python error: Segmentation fault" in r.stderr


def test_generator_body_recursing_too_deeply_raises():
    @njit
    def gen(n):
        yield depth(10)
        yield depth(n)

    g = gen(DEEP)
    assert next(g) == 10
    with pytest.raises(RecursionError):
        next(g)
    assert list(gen(50)) == [10, 50]
