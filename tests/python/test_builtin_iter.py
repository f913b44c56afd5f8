"""`iter()` and `next()` over every iterable nopython code iterates, and loops over
tuples (unrolled by LLVM now), against CPython running the same functions. The autouse
fixture checks NRT allocations balance."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError


def resume_tuple(t):
    it = iter(t)
    s = 0
    for x in it:
        s += x
        if x == 2:
            break
    for x in it:
        s += 10 * x
    # Exhausted: a third loop sees nothing.
    for x in it:
        s += 100 * x
    return s


def nested_tuple_loops(t):
    s = 0.0
    for a in t:
        for b in t:
            s += a * b - a
    return s


def neighbours(i, j, n, m):
    out = 0
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di != 0 or dj != 0:
                out = out * 7 + ((i + di) % n) * m + (j + dj) % m
    return out


def array_rest(a):
    it = iter(a)
    first = next(it)
    s = 0.0
    for x in it:
        s += x - first
    return s, next(it, -1.0)


def list_head(items):
    it = iter(items)
    a = next(it)
    b = next(it)
    return a * 10 + b + sum(it)


def zip_rest(a, b):
    it = iter(zip(a, b))
    x, y = next(it)
    s = x * y
    for p, q in it:
        s += p - q
    return s


def iter_of_iter(t):
    it = iter(t)
    same = iter(it)
    next(same)
    return next(it)


@pytest.mark.parametrize(
    "fn, args",
    [
        (resume_tuple, ((1, 2, 3, 4),)),
        (resume_tuple, ((5,),)),
        (resume_tuple, ((2, 2, 2),)),
        (nested_tuple_loops, ((1.5, -2.0, 3.25, 4.0, 5.0),)),
        (nested_tuple_loops, ((1.0,),)),
        (neighbours, (0, 0, 3, 4)),
        (neighbours, (2, 3, 3, 4)),
        (array_rest, (np.arange(6.0),)),
        (list_head, ([3, 4, 5, 6],)),
        (list_head, ([3, 4],)),
        (zip_rest, (np.arange(4), np.arange(4)[::-1].copy())),
        (iter_of_iter, ((7, 8, 9),)),
    ],
)
def test_matches_cpython(fn, args):
    got = njit(fn)(*args)
    want = fn(*args)
    assert got == pytest.approx(want) if not isinstance(want, tuple) else got == want


def test_iter_of_a_generator():
    @njit
    def squares(n):
        for i in range(n):
            yield i * i

    @njit
    def rest(n):
        it = iter(squares(n))
        next(it)
        return sum(it)

    assert rest(5) == sum(i * i for i in range(1, 5))
    assert rest(1) == 0


def test_long_tuple_loop_keeps_its_order():
    # 20 items: past the unrolled select chain, read through memory.
    t = tuple(float(i * i - 7) for i in range(20))

    def weighted(t):
        s = 0.0
        k = 1.0
        for x in t:
            s += x * k
            k += 1.0
        return s

    assert njit(weighted)(t) == weighted(t)


def test_next_of_exhausted_iterator_raises_stop_iteration():
    def f(t):
        it = iter(t)
        next(it)
        return next(it)

    assert f((1, 2)) == njit(f)((1, 2))
    with pytest.raises(StopIteration):
        njit(f)((1,))


def test_iter_of_a_number_is_a_typing_error():
    def f(x):
        return next(iter(x))

    with pytest.raises(TypingError, match="iter"):
        njit(f)(3)
