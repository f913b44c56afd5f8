"""`heapq` on lists in nopython code, against CPython's `heapq` on the same data: the
heap's layout after each operation (so ties land where CPython puts them), popped
order, `nsmallest`/`nlargest`, and Numba's typing errors."""

import heapq
import random

import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

RNG = random.Random(7)


def ops(h, items):
    heapq.heapify(h)
    out = []
    for x in items:
        heapq.heappush(h, x)
        out.append(heapq.heappushpop(h, x - 1))
        out.append(heapq.heapreplace(h, x + 1))
    while h:
        out.append(heapq.heappop(h))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_heap_operations_match_cpython(seed):
    rng = random.Random(seed)
    data = [rng.randint(-5, 5) for _ in range(rng.randint(1, 30))]
    items = [rng.randint(-5, 5) for _ in range(rng.randint(1, 10))]
    a, b = list(data), list(data)
    assert njit(ops)(a, items) == ops(b, items)
    assert a == b

    fa, fb = [x / 3 for x in data], [x / 3 for x in data]
    assert njit(ops)(fa, [x / 3 for x in items]) == ops(fb, [x / 3 for x in items])


def test_heapify_keeps_cpythons_layout():
    @njit
    def hf(h):
        heapq.heapify(h)

    for n in (1, 2, 7, 100):
        data = [RNG.randint(0, 9) for _ in range(n)]
        a, b = list(data), list(data)
        hf(a)
        heapq.heapify(b)
        assert a == b


def test_nsmallest_nlargest():
    @njit
    def nbest(n, data):
        return heapq.nsmallest(n, data), heapq.nlargest(n, data)

    data = [RNG.randint(0, 50) for _ in range(60)]
    for n in (-1, 0, 1, 5, 60, 70):
        assert nbest(n, data) == (heapq.nsmallest(n, data), heapq.nlargest(n, data))


def test_errors_like_numba():
    @njit
    def push(h, x):
        heapq.heappush(h, x)

    with pytest.raises(TypingError, match="heap argument must be a list"):
        push((1, 2), 3)
    with pytest.raises(TypingError, match="heap type must be the same as item type"):
        push([1.0], 3)
