"""Soak: 10^6 calls of functions that allocate (arrays, lists, dicts, strings, exceptions
raised and caught), with the NRT allocation counters balanced and resident memory flat.
Each function's result is checked against CPython's on a sample of calls."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.runtime import rtsys

CALLS = 10**6


def resident_bytes():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize()


def make_array(i):
    a = np.arange(8) * i
    return a.sum() + a[3]


def make_list(i):
    xs = [i, i + 1]
    xs.append(i * 2)
    return len(xs) + xs[-1]


def make_dict(i):
    d = {i: 1.5, i + 1: 2.5}
    d[i + 2] = 0.5
    return d[i] + d.get(i + 2, 0.0) + len(d)


def make_string(i):
    s = str(i) + "-" + "ab" * (i % 3)
    return len(s.upper())


def raise_and_catch(i):
    try:
        if i % 2 == 0:
            raise ValueError("even", i)
        return 1
    except ValueError:
        return 2


def raise_to_caller(i):
    if i % 5 == 0:
        raise KeyError(i)
    return i


CASES = [make_array, make_list, make_dict, make_string, raise_and_catch]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_a_million_allocating_calls_balance_and_stay_flat(fn):
    f = njit(fn)
    for i in range(1000):  # warm up: compile, and let the allocators settle
        assert f(i) == fn(i)
    before = rtsys.get_allocation_stats()
    rss_before = resident_bytes()
    for i in range(CALLS):
        f(i)
    after = rtsys.get_allocation_stats()
    grew = resident_bytes() - rss_before
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
    # Each call allocated (or raised, which allocates its exception's arguments).
    assert after.alloc - before.alloc >= CALLS // 2
    assert grew < 4 << 20, f"resident memory grew by {grew} bytes over {CALLS} calls"
    for i in (0, 1, 7, 999_999):
        assert f(i) == fn(i)


def test_a_million_exceptions_raised_to_python():
    f = njit(raise_to_caller)
    f(1)
    before = rtsys.get_allocation_stats()
    rss_before = resident_bytes()
    raised = 0
    for i in range(CALLS):
        try:
            f(i)
        except KeyError:
            raised += 1
    after = rtsys.get_allocation_stats()
    grew = resident_bytes() - rss_before
    assert raised == CALLS // 5
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
    assert grew < 4 << 20, f"resident memory grew by {grew} bytes"
