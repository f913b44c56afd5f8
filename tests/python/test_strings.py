"""`str` values in nopython code (the start of the strings issue): literals as constants,
`str` arguments of every PEP 393 kind borrowed from Python, results made into Python
`str` objects, strings inside tuples, `len`, comparisons and `+`. CPython's result for
the same function is the oracle; NRT counts are checked by the conftest fixture (`+`
allocates)."""

import itertools
import operator

import numpy as np
import pytest

from numba_rs import njit

# ASCII, Latin-1, BMP and astral characters, and the empty string: every kind.
SAMPLES = ["", "a", "abc", "abd", "ab", "héllo", "h\xe9", "日本語", "日本", "a日", "😀x", "x😀", "😀"]


def test_literals_are_values():
    def const():
        return "literal"

    def in_tuple():
        return ("THIS IS INLINED", 123, None)

    def non_ascii():
        return "grüße 日本 😀"

    for f in (const, in_tuple, non_ascii):
        assert njit(f)() == f()


@pytest.mark.parametrize("s", SAMPLES)
def test_str_arguments_cross_both_ways(s):
    def ident(x):
        return x

    def paired(x):
        return (x, len(x))

    got = njit(ident)(s)
    assert got == s and type(got) is str
    assert njit(paired)(s) == paired(s)


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le,
                                operator.gt, operator.ge])
def test_comparisons_over_every_kind(op):
    f = njit(lambda a, b: op(a, b))
    for a, b in itertools.product(SAMPLES, repeat=2):
        assert f(a, b) == op(a, b), (a, b)


def test_concatenation_over_every_kind():
    f = njit(lambda a, b: a + b)
    for a, b in itertools.product(SAMPLES, repeat=2):
        got = f(a, b)
        assert got == a + b, (a, b)


def test_literals_mixed_with_values():
    def greet(name):
        s = "hello " + name
        return s, len(s), s == "hello world", "abc" < name

    for name in ("world", "Wörld", "世界"):
        assert njit(greet)(name) == greet(name)


def pick(flag, a, b):
    return a if flag else b


def use_pick(flag, a):
    t = jitted_pick(flag, a, "default")
    return t + "!", len(t)


jitted_pick = njit(pick)


def test_strings_through_jitted_callees_and_branches():
    use = njit(use_pick)
    for flag in (True, False):
        for a in ("x😀", "", "Wörld"):
            assert use(flag, a) == (pick(flag, a, "default") + "!", len(pick(flag, a, "default")))


def test_concatenation_in_a_loop_releases_intermediates():
    def build(n, piece):
        s = ""
        for _ in range(n):
            s = s + piece
        return s

    assert njit(build)(50, "ab日") == build(50, "ab日")


def append_keeping_aliases(pieces):
    # `s = s + p` grows `s`'s block in place; every alias taken along the way (a
    # variable, list items, a tuple) must keep its own value, including after two
    # appends to the same base (`t + "x"` then `t + "y"`).
    s = ""
    seen = []
    for p in pieces:
        t = s
        s = s + p
        seen.append(t)
        u = t + "x"
        u = u + "y"
        t += "z"
        seen.append(u)
        seen.append(t)
    return s, seen


def append_self(n):
    s = "a"
    for _ in range(n):
        s = s + s
    return s, len(s)


def append_mixed_kinds(pieces, n):
    s = ""
    for i in range(n):
        s += pieces[i % len(pieces)]
    return s, len(s), s[-3:], s.count(pieces[0])


@pytest.mark.parametrize(
    "pieces",
    [["a", "bc", "", "d"], ["é", "ab", "日本", "😀", "x"], ["😀", "a"], ["日", "é", "a" * 40]],
)
def test_appends_in_place_leave_aliases_intact(pieces):
    assert njit(append_keeping_aliases)(pieces) == append_keeping_aliases(pieces)
    for n in (0, 1, 7, 200):
        assert njit(append_mixed_kinds)(pieces, n) == append_mixed_kinds(pieces, n)


def test_append_of_a_string_to_itself():
    assert njit(append_self)(12) == append_self(12)


def append_in_generator(pieces):
    s = ""
    for p in pieces:
        s += p
        yield s


def append_then_raise(pieces, stop):
    s = "start"
    try:
        for i, p in enumerate(pieces):
            s = s + p
            if i == stop:
                raise ValueError(s)
    except ValueError:
        return "caught", s
    return "done", s


def test_appends_in_generators_and_across_exceptions():
    pieces = ["a", "é", "日本", "😀", "b"] * 5
    assert list(njit(append_in_generator)(pieces)) == list(append_in_generator(pieces))
    for stop in (-1, 0, 3, 24):
        assert njit(append_then_raise)(pieces, stop) == append_then_raise(pieces, stop)


def test_appends_from_threads_share_no_room():
    # Threads appending to aliases of one growable string (made by appends in compiled
    # code, held by a typed list): only one may take the room after it; each result
    # is its own.
    import threading

    from numba_rs.typed import List

    @njit
    def make():
        held = List()
        s = ""
        for _ in range(3):
            s = s + "ab"
        held.append(s)
        return held

    @njit(nogil=True)
    def grow(held, piece, n):
        out = held[0]
        for _ in range(n):
            out = out + piece
        return out

    held = make()
    results = {}

    def work(k):
        results[k] = grow(held, str(k), 2000)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(4):
        assert results[k] == "ababab" + str(k) * 2000
    assert held[0] == "ababab"


def test_print_and_raise_carry_strings_and_arrays(capsys):
    # Both hand the values to Python objects, each with an NRT reference of its own (an
    # array made in the function, a string built by `+`).
    def f(name, a):
        s = "bad " + name
        b = a + 1
        print(s, b, len(s))
        if len(s) > 3:
            raise ValueError(s, b.sum())
        return 0.0

    with pytest.raises(ValueError) as e:
        njit(f)("wörld", np.ones(2))
    assert e.value.args == ("bad wörld", 4.0)
    with pytest.raises(ValueError) as e2:
        f("wörld", np.ones(2))
    assert capsys.readouterr().out == 2 * "bad wörld [2. 2.] 9\n"
    assert e.value.args == e2.value.args


def test_exceptions_caught_in_jitted_code_release_their_payload():
    def f(name, a):
        caught = 0
        for k in range(3):
            try:
                raise ValueError("bad " + name, a + k)
            except ValueError:
                caught += 1
        return caught

    assert njit(f)("x", np.ones(2)) == f("x", np.ones(2))


def maybe_suffix(flag, s):
    r = None
    if flag:
        r = s + "?"
    return r


def repeat_gen(s, n):
    for i in range(n):
        yield s + "x"


def test_optional_strings_generators_and_signatures():
    f = njit(maybe_suffix)
    assert [f(True, "a"), f(False, "a"), f(True, "日")] == [
        maybe_suffix(True, "a"),
        maybe_suffix(False, "a"),
        maybe_suffix(True, "日"),
    ]
    assert list(njit(repeat_gen)("q😀", 3)) == list(repeat_gen("q😀", 3))

    @njit("unicode_type(unicode_type, int64)")
    def times(s, k):
        t = s
        for i in range(k):
            t = t + s
        return t

    assert times("ab", 2) == "ababab"


def index_all(s):
    out = ""
    for i in range(-len(s), len(s)):
        out = out + s[i] + "|"
    return out


@pytest.mark.parametrize("s", SAMPLES)
def test_indexing_and_slicing(s):
    assert njit(index_all)(s) == index_all(s)
    sl = njit(lambda x, a, b, c: x[a:b:c])
    for a, b, c in itertools.product((None, 0, 1, -1, -2, 5), (None, 0, 2, -1, 10), (None, 1, 2, -1, -3)):
        assert sl(s, a, b, c) == s[a:b:c], (s, a, b, c)
    assert njit(lambda x: (x[1:], x[:-1], x[::-1]))(s) == (s[1:], s[:-1], s[::-1])


def test_index_out_of_range_is_cpythons_index_error():
    f = njit(lambda s, i: s[i])
    for s, i in (("", 0), ("ab", 2), ("ab", -3)):
        with pytest.raises(IndexError, match="string index out of range"):
            f(s, i)
        with pytest.raises(IndexError, match="string index out of range"):
            s[i]


def test_substring_membership():
    f = njit(lambda needle, hay: needle in hay)
    for a, b in itertools.product(SAMPLES, repeat=2):
        assert f(a, b) == (a in b), (a, b)
    assert njit(lambda s: "日" in s and "z" not in s)("a日b") is True


def test_string_computed_in_objmode_flows_back():
    from numba_rs import objmode

    def shout(x):
        with objmode(s="unicode_type"):
            s = x.upper() + "é"
        return s + "!", len(s)

    def expected(x):
        s = x.upper() + "é"
        return s + "!", len(s)

    for x in ("abc", "日本", ""):
        assert njit(shout)(x) == expected(x)


def _random_strings(seed, count):
    """Strings over a mixed alphabet (ASCII, Latin-1, BMP, astral), lengths 0 to 12."""
    import random

    rng = random.Random(seed)
    alphabet = "ab AZ09\xe9\xff\u0100\u65e5\u672c\uffff\U0001f600\U00010000"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(13))) for _ in range(count)]


def generated_ops(a, b, i, j, k):
    return (
        a + b,
        a == b,
        a < b,
        b >= a,
        a in b,
        b[i:j:k],
        len(a + b),
        (a + b)[i:j],
    )


def test_generated_programs_match_cpython():
    import random

    rng = random.Random(44)
    f = njit(generated_ops)
    strings = _random_strings(7, 120)
    for _ in range(400):
        a, b = rng.choice(strings), rng.choice(strings)
        i, j = rng.randrange(-15, 15), rng.randrange(-15, 15)
        k = rng.choice([1, 2, 3, -1, -2])
        assert f(a, b, i, j, k) == generated_ops(a, b, i, j, k), (a, b, i, j, k)


def test_repetition():
    f = njit(lambda s, n: (s * n, n * s))
    for s in SAMPLES:
        for n in (-2, 0, 1, 3):
            assert f(s, n) == (s * n, n * s), (s, n)
    assert njit(lambda: "ab" * 2 + "é" * 3)() == "ab" * 2 + "é" * 3
