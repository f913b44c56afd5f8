"""Python sets in nopython code (Numba's `Set(T, reflected=...)`): `set()`, literals,
`set(iterable)`, set comprehensions, membership, the methods and operators with their
in-place forms, iteration, sets of numbers, tuples and strings, reflected set arguments
written back. CPython's result for the same function is the oracle (sets compare
unordered; small-int sets iterate in CPython's order); NRT counts are balanced after
every test (the conftest fixture)."""

import copy
import random

import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

RNG = random.Random(5)
INT_DATA = [[1], [3, 1, 2, 3], [7, 7, 7], [-4, 7, 0, -4, 9, 7, 1]] + [
    [RNG.randint(-6, 6) for _ in range(RNG.randint(1, 15))] for _ in range(6)
]


def same(f, *args):
    ja = copy.deepcopy(args)
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001 - the exception type is the behaviour
        with pytest.raises(type(e)):
            njit(f)(*ja)
        return
    got = njit(f)(*ja)
    assert got == want, (args, got, want)
    assert ja == args, "reflected arguments differ"


def test_building_and_membership():
    def f(a, probes):
        s = set()
        for x in a:
            s.add(x)
        t = set(a)
        u = {x * 2 for x in a if x > 0}
        return len(s), [p in s for p in probes], s == t, u, bool(s), {1, 2, 3}

    for a in INT_DATA:
        same(f, a, [0, 1, 2, 7, -4, 100])


def test_small_int_sets_iterate_in_cpythons_order():
    def f(a):
        s = set()
        for x in a:
            s.add(x)
        return list(s)

    for a in INT_DATA + [list(range(40, 0, -3)), [64, 1, 33, 2, 100, 8, 9, 17, -5]]:
        same(f, a)


@pytest.mark.parametrize("a", INT_DATA[:5])
@pytest.mark.parametrize("b", INT_DATA[:5])
def test_operators_and_methods(a, b):
    def ops(x, y):
        s, t = set(x), set(y)
        return (s | t, s & t, s - t, s ^ t, s == t, s != t, s <= t, s < t, s >= t, s > t,
                s.union(t), s.intersection(t), s.difference(t), s.symmetric_difference(t),
                s.issubset(t), s.issuperset(t), s.isdisjoint(t))

    def inplace(x, y):
        s, t = set(x), set(y)
        s |= t
        u = set(x)
        u &= t
        v = set(x)
        v -= t
        w = set(x)
        w ^= t
        p, q, r = set(x), set(x), set(x)
        p.intersection_update(t)
        q.difference_update(t)
        r.symmetric_difference_update(t)
        return s, u, v, w, p, q, r

    same(ops, a, b)
    same(inplace, a, b)


def test_remove_discard_pop_clear_copy():
    def f(a, gone):
        s = set(a)
        s.discard(gone)
        s.discard(gone)
        c = s.copy()
        out = []
        while len(s) > 0:
            out.append(s.pop())
        c.clear()
        return out, c, len(c)

    def remove_missing(a):
        s = set(a)
        s.remove(1000)

    def pop_empty(a):
        s = set(a)
        s.clear()
        return s.pop()

    for a in INT_DATA:
        same(f, a, a[0])
    with pytest.raises(KeyError):
        njit(remove_missing)([1, 2])
    with pytest.raises(KeyError):
        njit(pop_empty)([1])


def test_tuples_floats_and_strings():
    def tuples(n):
        return {(i % 3, float(i % 2)) for i in range(n)}

    def floats(a):
        s = set(a)
        return s, 0.5 in s, -0.0 in s

    def strings(words):
        s = set(words)
        s.add("é" + "x")
        s.discard(words[0])
        return s, "b" in s

    same(tuples, 10)
    same(floats, [0.5, 0.0, 1.25, 0.5])
    same(strings, ["a", "b", "日本", "a", "éx"])


def test_reflection_writes_changes_back():
    @njit
    def grow(s):
        s.add(42)
        s.discard(1)
        return len(s)

    @njit
    def reads(s):
        return 2 in s

    @njit
    def same_set_back(s):
        s.add(5)
        return s

    x = {1, 2}
    assert grow(x) == 2 and x == {2, 42}
    y = {2, 3}
    assert reads(y) and y == {2, 3}
    z = {7}
    r = same_set_back(z)
    assert r is z and z == {5, 7}


def test_boundary_and_typing_errors_like_numba():
    f = njit(lambda s: len(s))
    with pytest.raises(TypingError, match="can't infer type of empty set"):
        f(set())
    with pytest.raises(TypeError, match="can't unbox heterogeneous set"):
        f({1, 2.5})

    @njit
    def mixed(a, b):
        return set(a).union(set(b))

    with pytest.raises(TypingError, match="All Sets must be of the same type"):
        mixed([1, 2], [1.5])


def test_unique_items_in_order():
    def unique(src):
        seen = set()
        res = []
        for v in src:
            if v not in seen:
                seen.add(v)
                res.append(v)
        return res

    for a in INT_DATA:
        same(unique, a)
