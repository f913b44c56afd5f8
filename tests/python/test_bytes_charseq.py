"""`bytes` and NumPy character data (`S`/`<U` arrays, Numba's CharSeq and
UnicodeCharSeq) in nopython code, checked against CPython and NumPy on generated values.
The autouse fixture checks NRT allocations balance after every test."""

import random

import numpy as np
import pytest

import numba_rs
from numba_rs import njit
from numba_rs.errors import TypingError

RNG = random.Random(20261128)
# Bytes that matter to `bytes`' methods: ASCII letters and digits, ASCII whitespace, the
# bytes `str` counts as whitespace or letters in Latin-1 but `bytes` does not.
ALPHABET = b"aZ09 \t\n\r\x0b\x0c\x1c\x85\xa0\xe9\xffxyAB-_."


def gen_bytes(n=40):
    out = []
    for _ in range(n):
        k = RNG.randrange(0, 12)
        out.append(bytes(RNG.choice(ALPHABET) for _ in range(k)))
    return out + [b"", b"Hello World", b"HELLO", b"hello", b"Title Case", b"  \t"]


CHARS = "abcXYZ09 ,\u00e9\u00ff\u0101\u4e2d\U0001f600"


def gen_str(k):
    return "".join(RNG.choice(CHARS) for _ in range(k))


# --- bytes ---------------------------------------------------------------------------


def test_bytes_arguments_results_and_constants():
    @njit
    def ident(b):
        return b

    @njit
    def const():
        return b"con\xffst"

    @njit
    def pair(b):
        return (b, len(b)), [b, b"x"]

    for b in gen_bytes(20):
        assert ident(b) == b
        assert pair(b) == ((b, len(b)), [b, b"x"])
    assert const() == b"con\xffst"
    # Numba's types and names.
    t = numba_rs.typeof(b"ab")
    assert str(t) == "Bytes(uint8, 1d, C)"
    assert t == numba_rs.types.Bytes(numba_rs.types.uint8, 1, "C")
    assert (t.dtype, t.ndim, t.layout, t.readonly) == (numba_rs.types.uint8, 1, "C", True)
    u = numba_rs.typeof(np.array(["ab", "c"]))
    assert str(u) == "array([unichr x 2], 1d, C)"
    assert u.dtype == numba_rs.types.UnicodeCharSeq(2) and u.dtype.count == 2
    assert str(numba_rs.typeof(np.array([b"abc"]))) == "array([char x 3], 1d, C)"


def test_bytes_indexing_slicing_iteration():
    @njit
    def at(b, i):
        return b[i]

    @njit
    def sl(b, i, j, k):
        return b[i:j:k]

    @njit
    def total(b):
        t = 0
        for c in b:
            t = t * 31 + c
        return t

    for b in gen_bytes(30):
        n = len(b)
        for i in range(-n, n):
            assert at(b, i) == b[i]
        for _ in range(5):
            i, j = RNG.randrange(-n - 2, n + 3), RNG.randrange(-n - 2, n + 3)
            k = RNG.choice([1, 2, 3, -1, -2])
            assert sl(b, i, j, k) == b[i:j:k]
        assert total(b) == sum(c * 31 ** (len(b) - 1 - i) for i, c in enumerate(b))
    with pytest.raises(IndexError, match="index out of range"):
        at(b"ab", 2)
    with pytest.raises(IndexError, match="index out of range"):
        at(b"", -1)


def test_bytes_operators_and_hash():
    @njit
    def ops(a, b):
        return (a == b, a != b, a < b, a <= b, a > b, a >= b, a in b, a + b, a * 3, 2 * b, not a)

    @njit
    def has(b, c):
        return c in b

    @njit
    def h(b):
        return hash(b)

    data = gen_bytes(15)
    for a in data:
        assert h(a) == hash(a)
        for b in data[:8]:
            assert ops(a, b) == (a == b, a != b, a < b, a <= b, a > b, a >= b, a in b, a + b, a * 3, 2 * b, not a)
        for c in (0, 97, 255, 0x85):
            assert has(a, c) == (c in a)
    with pytest.raises(ValueError, match="byte must be in range"):
        has(b"a", 256)


@pytest.mark.parametrize(
    "name",
    [
        "lower", "upper", "swapcase", "title", "capitalize", "isalnum", "isalpha", "isascii",
        "isdigit", "islower", "isspace", "istitle", "isupper", "strip", "lstrip", "rstrip",
        "split", "rsplit", "splitlines", "expandtabs",
    ],
)
def test_bytes_methods_without_arguments(name):
    f = njit(eval(f"lambda b: b.{name}()"))
    for b in gen_bytes():
        assert f(b) == getattr(b, name)(), (name, b)


def test_bytes_methods_with_arguments():
    @njit
    def many(b, s, w):
        return (
            b.find(s), b.rfind(s), b.count(s), b.startswith(s), b.endswith(s),
            b.replace(s, b"<>"), b.center(w, b"*"), b.ljust(w), b.rjust(w, b"."), b.zfill(w),
            b.strip(b"a "), b.split(b"a"), b.rsplit(b" ", 1), b.split(maxsplit=1),
            b.partition(b" "), b.rpartition(b"a"), b.splitlines(True),
            b.startswith((b"x", s)), s.join([b, b, b"-"]),
        )

    data = gen_bytes(25)
    for b in data:
        s = RNG.choice(data) or b"a"
        w = RNG.randrange(0, 20)
        assert many(b, s, w) == (
            b.find(s), b.rfind(s), b.count(s), b.startswith(s), b.endswith(s),
            b.replace(s, b"<>"), b.center(w, b"*"), b.ljust(w), b.rjust(w, b"."), b.zfill(w),
            b.strip(b"a "), b.split(b"a"), b.rsplit(b" ", 1), b.split(maxsplit=1),
            b.partition(b" "), b.rpartition(b"a"), b.splitlines(True),
            b.startswith((b"x", s)), s.join([b, b, b"-"]),
        ), b


def test_bytes_errors_name_the_construct():
    @njit
    def mixed(b):
        return b.find("a")

    with pytest.raises(TypingError):
        mixed(b"abc")

    @njit
    def casefold(b):
        return b.casefold()

    with pytest.raises(TypingError, match="casefold"):
        casefold(b"abc")


# --- NumPy character arrays ------------------------------------------------------------


def unicode_arrays():
    out = []
    for width in (1, 3, 8):
        items = [gen_str(RNG.randrange(0, width + 1)) for _ in range(6)]
        out.append(np.array(items, dtype=f"<U{width}"))
    out.append(np.array("12\u00e9"))
    out.append(np.array(["a\U0001f600", ""]))
    return out


def bytes_arrays():
    out = []
    for width in (1, 4, 9):
        out.append(np.array([b[:width] for b in gen_bytes(6)], dtype=f"S{width}"))
    out.append(np.array(b"1\xff3"))
    return out


def indices(a):
    return [()] if a.ndim == 0 else list(range(len(a)))


def test_items_read_as_the_strings_they_hold():
    @njit
    def get(a, i):
        return a[i]

    @njit
    def length_truth_hash(a, i):
        return len(a[i]), bool(a[i]), not a[i], hash(a[i])

    for a in unicode_arrays() + bytes_arrays():
        for i in indices(a):
            item = a[i]
            want = str(item) if a.dtype.kind == "U" else bytes(item)
            got = get(a, i)
            assert type(got) is type(want) and got == want
            assert length_truth_hash(a, i) == (len(want), bool(want), not want, hash(want))


def test_item_methods_and_operators_as_numpy_and_cpython():
    @njit
    def ustr(a, i, j):
        x, y = a[i], a[j]
        return (
            x == y, x != y, x < y, x >= y, x + y, x * 2, y in x, x.upper(), x.isupper(),
            x.find(y), x.split(), x.center(12, "="), x.zfill(6), x.strip(), str(x), x[0:2],
        )

    @njit
    def ubytes(a, i, j):
        x, y = a[i], a[j]
        return (
            x == y, x < y, x + y, 3 * x, y in x, x.upper(), x.isupper(), x.rfind(y),
            x.split(), x.ljust(12, b"="), x.lstrip(), bytes(x), x.startswith(y),
        )

    for a in unicode_arrays():
        if a.ndim == 0:
            continue
        for i in indices(a):
            for j in indices(a):
                x, y = str(a[i]), str(a[j])
                assert ustr(a, i, j) == (
                    x == y, x != y, x < y, x >= y, x + y, x * 2, y in x, x.upper(), x.isupper(),
                    x.find(y), x.split(), x.center(12, "="), x.zfill(6), x.strip(), x, x[0:2],
                )
    for a in bytes_arrays():
        if a.ndim == 0:
            continue
        for i in indices(a):
            for j in indices(a):
                x, y = bytes(a[i]), bytes(a[j])
                assert ubytes(a, i, j) == (
                    x == y, x < y, x + y, 3 * x, y in x, x.upper(), x.isupper(), x.rfind(y),
                    x.split(), x.ljust(12, b"="), x.lstrip(), x, x.startswith(y),
                )


def test_items_compare_with_strings_and_index_to_characters():
    @njit
    def eq(a, i, v):
        return a[i] == v, v == a[i], a[i] != v

    @njit
    def char(a, i, j):
        return a[i][j]

    a = np.array(["1234", "ab"])
    assert eq(a, 0, "1234") == (True, True, False)
    assert eq(a, 1, "abc") == (False, False, True)
    b = np.array([b"12", b"3"])
    assert eq(b, 0, b"12") == (True, True, False)
    assert char(a, 0, -1) == "4" and char(b, 0, 1) == ord("2")
    with pytest.raises(IndexError, match="index out of range"):
        char(a, 1, 2)
    with pytest.raises(IndexError, match="index out of range"):
        char(b, 1, 1)


def test_items_stored_truncated_or_padded_as_numpy():
    @njit
    def store(a, i, v):
        a[i] = v
        return a

    @njit
    def copy_item(a, i, b, j):
        a[i] = b[j]

    @njit
    def append(a, i, b, j):
        a[i] += b[j]
        return a[i]

    @njit
    def store_literal(a, i):
        a[i] = "123"

    for a in unicode_arrays():
        for i in indices(a):
            for v in [gen_str(k) for k in range(0, 10, 3)]:
                got, want = a.copy(), a.copy()
                store(got, i, v)
                want[i] = v
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype
        got, want = a.copy(), a.copy()
        store_literal(got, indices(a)[-1])
        want[indices(a)[-1]] = "123"
        np.testing.assert_array_equal(got, want)
    for a in bytes_arrays():
        for i in indices(a):
            for v in gen_bytes(4):
                got, want = a.copy(), a.copy()
                store(got, i, v)
                want[i] = v
                np.testing.assert_array_equal(got, want)
    # Between arrays of other widths, and `+=` through the string they hold.
    src = np.array(["wxyz", "Q"])
    dst = np.array(["ab", "cd"])
    want = dst.copy()
    want[0] = src[0]
    copy_item(dst, 0, src, 0)
    np.testing.assert_array_equal(dst, want)
    x = np.array(["ab", "cde"])
    expect = x.copy()
    expect[0] = expect[0] + "xyz"
    assert append(x, 0, np.array(["xyz"]), 0) == expect[0]
    np.testing.assert_array_equal(x, expect)


def test_join_of_character_arrays_and_tuples():
    @njit
    def join_array(sep, a):
        return sep.join(a)

    @njit
    def join_tuple(sep, a, i):
        return sep.join((a[i], "mid", a[i]))

    for a in unicode_arrays():
        if a.ndim == 1:
            assert join_array(", ", a) == ", ".join(str(x) for x in a)
            assert join_array("\u4e2d", a[::-1]) == "\u4e2d".join(str(x) for x in a[::-1])
            assert join_tuple("/", a, 0) == "/".join((str(a[0]), "mid", str(a[0])))
    for a in bytes_arrays():
        if a.ndim == 1:
            assert join_array(b"+", a) == b"+".join(bytes(x) for x in a)


def test_character_arrays_returned_keep_their_dtype():
    @njit
    def fill(a, v):
        for i in range(a.shape[0]):
            a[i] = v
        return a

    a = np.array(["a", "bcd", "ef"])
    r = fill(a, "zz")
    assert r is a and r.dtype == np.dtype("<U3")
    np.testing.assert_array_equal(r, np.array(["zz"] * 3))


def test_storing_a_number_into_a_character_array_is_a_typing_error():
    @njit
    def bad(a):
        a[0] = 5

    with pytest.raises(TypingError, match="setitem"):
        bad(np.array(["abc"]))


def test_items_format_and_repr_as_the_strings_they_hold():
    # As in Numba, an item is the `str` it holds (NumPy's `np.str_` repr differs).
    @njit
    def fmt(a, i):
        x = a[i]
        return "{}:{!r}:{:>5}".format(i, x, x), f"{x!r}|{x:^6}", repr(x), str(x)

    a = np.array(["ab", "\u4e2d'", ""])
    for i in range(3):
        x = str(a[i])
        assert fmt(a, i) == ("{}:{!r}:{:>5}".format(i, x, x), f"{x!r}|{x:^6}", repr(x), x)


def test_bytes_in_sets_and_sorted_as_cpython():
    @njit
    def f(items, probe):
        s = set(items)
        s.add(b"zz")
        return (
            len(s), probe in s, sorted(s), list(s), hash((b"a", 1)),
            sorted(items, reverse=True), sorted([(b"b", 1), (b"a", 2), (b"a", 0)]),
        )

    for items in [gen_bytes(30), [b"a", b"bb", b"a", b"\xff", b""]]:
        probe = items[len(items) // 2]
        got = f(items, probe)
        s = set(items)
        s.add(b"zz")
        want = (
            len(s), probe in s, sorted(s), list(s), hash((b"a", 1)),
            sorted(items, reverse=True), sorted([(b"b", 1), (b"a", 2), (b"a", 0)]),
        )
        assert got == want

    @njit
    def member(ss, b):
        return b in ss, len(ss)

    assert member({b"x", b"y"}, b"x") == (True, 2)
    assert member({b"x", b"y"}, b"q") == (False, 2)
