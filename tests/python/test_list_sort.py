"""`list.sort` and `sorted` beyond numbers: tuples, strings and nested lists (a merge sort
asking a generated `<`), `key=` (jitted functions, inner functions, lambdas) and
`reverse=`, against CPython's Timsort on generated data, equal keys included (the order
of equal items is the stable one in both directions). The autouse fixture checks NRT
allocations balance."""

import random
import warnings

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

warnings.filterwarnings("ignore", message=".*reflected (list|set).*")


def sort_in_place(lst, reverse):
    lst.sort(reverse=reverse)
    return lst


def sorted_copy(lst, reverse):
    return sorted(lst, reverse=reverse)


def data(kind, rng, n):
    if kind == "int_pairs":
        return [(rng.randint(-3, 3), rng.randint(0, 2)) for _ in range(n)]
    if kind == "float_int":
        return [(rng.choice([0.5, -1.0, 2.25]), rng.randint(0, 9)) for _ in range(n)]
    if kind == "strings":
        return ["".join(rng.choice("abc") for _ in range(rng.randint(0, 3))) for _ in range(n)]
    if kind == "str_int":
        return [(rng.choice(["x", "y", "xy", ""]), rng.randint(0, 3)) for _ in range(n)]
    if kind == "lists":
        return [[rng.randint(0, 2) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    raise AssertionError(kind)


KINDS = ["int_pairs", "float_int", "strings", "str_int", "lists"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 17, 40, 300])
@pytest.mark.parametrize("reverse", [False, True])
def test_sort_and_sorted_match_cpython(kind, n, reverse):
    rng = random.Random(hash((kind, n, reverse)) & 0xFFFF)
    items = data(kind, rng, n)
    a, b = list(items), list(items)
    assert njit(sort_in_place)(a, reverse) == sort_in_place(b, reverse)
    # The caller's list was sorted in place (reflection).
    assert a == b
    assert njit(sorted_copy)(list(items), reverse) == sorted_copy(list(items), reverse)


@njit
def by_neg(x):
    return -x


@njit
def by_second(t):
    return t[1]


@njit
def by_len(s):
    return len(s)


def keyed_sort(lst, reverse):
    lst.sort(key=by_neg, reverse=reverse)
    return lst


def keyed_sorted_pairs(lst, reverse):
    return sorted(lst, key=by_second, reverse=reverse)


def keyed_sorted_strings(lst):
    return sorted(lst, key=by_len), sorted(lst, key=by_len, reverse=True)


@pytest.mark.parametrize("seed", range(6))
def test_key_functions_match_cpython(seed):
    rng = random.Random(seed)
    ints = [rng.randint(-5, 5) for _ in range(rng.randint(1, 60))]
    pairs = data("int_pairs", rng, rng.randint(1, 60))
    strings = data("strings", rng, rng.randint(1, 60))
    for reverse in (False, True):
        a, b = list(ints), list(ints)
        assert njit(keyed_sort)(a, reverse) == keyed_sort(b, reverse)
        assert a == b
        # Equal keys (the second item repeats) keep their order: stability shows.
        assert njit(keyed_sorted_pairs)(pairs, reverse) == keyed_sorted_pairs(pairs, reverse)
    assert njit(keyed_sorted_strings)(strings) == keyed_sorted_strings(strings)


def inner_and_lambda_keys(lst):
    def mod3(z):
        return z % 3

    a = sorted(lst, key=mod3)
    b = sorted(lst, key=lambda z: -(z % 4), reverse=True)
    c = list(lst)
    c.sort(key=mod3, reverse=True)
    return a, b, c


def test_inner_function_and_lambda_keys():
    lst = [5, 3, 4, 1, 2, 9, 7, 6, 0, 8, 3, 3]
    assert njit(inner_and_lambda_keys)(lst) == inner_and_lambda_keys(lst)


def sorted_of_other_iterables(a, t):
    return sorted(a, key=by_neg), sorted(t, key=by_neg, reverse=True), sorted({3, 1, 2}, key=by_neg)


def test_sorted_with_key_over_arrays_tuples_and_sets():
    a = np.array([3.5, -1.0, 2.0, 2.0, 0.0])
    t = (4, 1, 3, 1)
    assert njit(sorted_of_other_iterables)(a, t) == sorted_of_other_iterables(a, t)


def test_sort_list_of_tuples_built_inside():
    def f(n):
        out = []
        for i in range(n):
            out.append(((i * 7) % 5, -i))
        out.sort()
        return out

    for n in (0, 1, 23):
        assert njit(f)(n) == f(n)


def test_sorted_tuples_with_nan_keeps_cpython_order_for_consistent_items():
    # NaN compares false both ways; the items around it still sort as CPython's.
    items = [(1.0, 2.0), (0.5, 1.0), (1.0, 1.0), (0.25, 3.0)]
    assert njit(sorted_copy)(items, False) == sorted_copy(items, False)


def test_bad_key_and_reverse_are_numbas_typing_errors():
    def bad_key(lst):
        return sorted(lst, key=3)

    with pytest.raises(TypingError, match="Key must be None or a Numba JIT compiled function"):
        njit(bad_key)([1, 2])

    def bad_reverse(lst):
        lst.sort(key=by_neg, reverse="yes")
        return lst

    with pytest.raises(TypingError, match="an integer is required for 'reverse'"):
        njit(bad_reverse)([1, 2])


def test_unorderable_items_are_a_typing_error():
    def f(lst):
        return sorted(lst)

    with pytest.raises(TypingError):
        njit(f)([1j, 2j])


def test_string_sort_by_prefix_then_whole_string_matches_cpython():
    # Shared prefixes longer than the eight bytes (or three code points) the sort keys
    # on, NULs that look like a missing character, every PEP 393 kind, both directions.
    rng = random.Random(11)
    alphabet = ["a", "b", "\x00", "\xe9", "\u4e2d", "\U0001f600"]
    for kinds in (alphabet[:3], alphabet):
        words = ["".join(rng.choice(kinds) for _ in range(rng.randrange(0, 12))) for _ in range(400)]
        words += ["abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefg", "", "\x00"]

        @njit
        def both(ws):
            a = sorted(ws)
            b = sorted(ws, reverse=True)
            c = list(ws)
            c.sort()
            return a, b, c

        assert both(words) == (sorted(words), sorted(words, reverse=True), sorted(words))
