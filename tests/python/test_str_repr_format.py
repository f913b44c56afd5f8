"""`repr`/`ascii` and f-strings' `!r`/`!a`, `str.format` with positional fields, CPython's
`ValueError`s for format specs, optional strings compared and passed to methods, the
`_is_ascii` flag: each checked against CPython. NRT allocations balance after each test
(the autouse fixture)."""

import random

import pytest

import numba_rs
from numba_rs import njit
from numba_rs.errors import TypingError

RNG = random.Random(44)
CHARS = "ab'\"\\\t\n\r\x00\x07\x7f\x85\xa0\xe9\xff\u0101\u2028\u4e2d\U0001f600 "


def gen_strings(n=60):
    out = ["", "'", '"', "'\"", "plain"]
    for _ in range(n):
        out.append("".join(RNG.choice(CHARS) for _ in range(RNG.randrange(0, 9))))
    return out


def test_repr_and_ascii_of_strings_bytes_and_numbers():
    @njit
    def conv(s):
        return repr(s), ascii(s), f"{s!r}", f"{s!a:>30}", f"{s!s}"

    for s in gen_strings():
        assert conv(s) == (repr(s), ascii(s), f"{s!r}", f"{s!a:>30}", f"{s!s}"), s

    @njit
    def conv_bytes(b):
        return repr(b), ascii(b), str(b), f"{b!r}"

    for b in [b"", b"a'b", b"\x00\xff\n\\", b"'\"", bytes(range(0, 256, 7))]:
        assert conv_bytes(b) == (repr(b), ascii(b), str(b), f"{b!r}")

    @njit
    def conv_num(i, x, t):
        return repr(i), repr(x), ascii(t), f"{i!r:>6}|{x!r}"

    for i, x, t in [(5, 2.5, True), (-12, 1e300, False), (0, -0.0, True)]:
        assert conv_num(i, x, t) == (repr(i), repr(x), ascii(t), f"{i!r:>6}|{x!r}")


def test_str_format_with_positional_fields():
    @njit
    def auto(a, b, c):
        return "x{}y{:>5}z{!r}|{{}}".format(a, b, c)

    @njit
    def manual(a, b):
        return "{1}{0}{1:^7}{0!a:*<9}".format(a, b)

    @njit
    def plain():
        return "no fields {{here}}".format()

    for a, b, c in [(1, "ab", "q'"), (2.5, 7, 3), ("\u4e2d", True, -0.5), ("", "", "")]:
        assert auto(a, b, c) == "x{}y{:>5}z{!r}|{{}}".format(a, b, c)
    for a, b in [("A", 2), ("\xe9", "bc"), (3, 4.25)]:
        assert manual(a, b) == "{1}{0}{1:^7}{0!a:*<9}".format(a, b)
    assert plain() == "no fields {here}"


@pytest.mark.parametrize(
    "template, needle",
    [
        ("{0}{}", "cannot switch from manual field specification"),
        ("{}{0}", "cannot switch from automatic field numbering"),
        ("{", "expected '}' before end of string"),
        ("}", "Single '}' encountered"),
        ("{2}", "Replacement index 2 out of range"),
        ("{!x}", "Unknown conversion specifier x"),
        ("{name}", "positional"),
    ],
)
def test_str_format_template_errors_name_cpythons_reason(template, needle):
    f = njit(eval(f"lambda a, b: {template!r}.format(a, b)"))
    with pytest.raises(TypingError, match=needle.replace("{", r"\{").replace("}", r"\}")):
        f(1, 2)


def test_str_format_needs_a_constant_template():
    @njit
    def dynamic(t, a):
        return t.format(a)

    with pytest.raises(TypingError, match="constant format string"):
        dynamic("{}", 1)


SPECS = [
    "", "z", "d", "s", ".2d", ",s", "=5s", "+s", " s", "#s", "x", "X", "#x", "c", "#c", "+c",
    ".3x", "q", "1.2.3", "<<<", ",_", "_,", ".", "%", "b", "_b", ",b", "n", "e", "E", "f",
    ".2f", "z.2f", "g", "G", "#d", "05s", "<05", "*<05", "05", "10,", ">10,d", "_x", ",x",
    "z,", "+08.3f", "^12.4e",
]


@pytest.mark.parametrize("value", [5, -3, 0x1F600, -1, 2.5, -0.0001, -0.0, 1e21, "ab", "\u4e2d", True])
def test_format_specs_give_cpythons_results_and_errors(value):
    @njit
    def fmt(v, spec):
        return format(v, spec)

    for spec in SPECS:
        try:
            want = format(value, spec)
        except (ValueError, OverflowError) as e:
            with pytest.raises(type(e)) as got:
                fmt(value, spec)
            assert str(got.value) == str(e), (value, spec)
        else:
            assert fmt(value, spec) == want, (value, spec)


def test_is_ascii_flags_follow_the_characters():
    @njit
    def flags(s, t):
        return (
            s._is_ascii,
            (s + t)._is_ascii,
            (s * 2)._is_ascii,
            s[::2]._is_ascii,
            ",".join([s, t])._is_ascii,
            "abc"._is_ascii,
            "\u4e2d"._is_ascii,
        )

    for s in gen_strings(20):
        for t in ["x", "\xe9"]:
            want = tuple(
                int(x.isascii()) for x in (s, s + t, s * 2, s[::2], ",".join([s, t]), "abc", "\u4e2d")
            )
            assert flags(s, t) == want


def test_join_of_a_strings_characters():
    @njit
    def join(sep, s):
        return sep.join(s)

    for sep in ["", "-", "\u4e2d\U0001f600"]:
        for s in gen_strings(10):
            assert join(sep, s) == sep.join(s)


def test_optional_strings_compare_as_python():
    @njit
    def cmp(p1, p2):
        r1 = "concrete" if p1 > 0 else None
        r2 = "concrete" if p2 < 0 else None
        return r1 == r2, r1 != r2, r1 == "concrete", None == r2

    for p1 in (-1, 1):
        for p2 in (-1, 1):
            assert cmp(p1, p2) == cmp.py_func(p1, p2)

    @njit
    def cmp_int(p):
        x = 3 if p > 0 else None
        return x == 3, x != 4, x == None, 3.0 == x

    for p in (-1, 1):
        assert cmp_int(p) == cmp_int.py_func(p)


def test_optional_arguments_to_string_methods():
    def count(s, sub, start, end):
        return s.count(sub, start, end)

    t = numba_rs.types
    sig = t.int64(t.unicode_type, t.unicode_type, t.Optional(t.int64), t.Optional(t.int64))
    c = njit([sig])(count)
    for s, sub, start, end in [("t\xfa quis?", "t\xfa", 0, 8), ("aaaa", "a", None, 2), ("abab", "b", 1, None)]:
        assert c(s, sub, start, end) == count(s, sub, start, end)

    bad = t.int64(t.unicode_type, t.unicode_type, t.Optional(t.float64), t.Optional(t.float64))
    with pytest.raises(TypingError, match="The slice indices must be an Integer or None"):
        njit([bad])(count)

    @njit
    def strip(s, p):
        chars = "ab" if p else None
        return s.strip(chars)

    for p in (True, False):
        assert strip("ab  cab ", p) == strip.py_func("ab  cab ", p)


def test_cached_hash_passes_through_and_nan_hashes_are_distinct():
    s = "abcdefghijklmnopqrstuvwxyz"
    h = hash(s)  # CPython caches it in the object

    @njit
    def fn(x):
        return x._hash, hash(x)

    assert fn(s) == (h, h)
    fresh = "".join(["ab", str(12345)])  # no hash cached yet
    got = fn(fresh)
    assert got[0] == -1 and got[1] == hash(fresh)

    @njit
    def hash_float(x):
        return hash(x)

    nans = {hash_float(float("nan")) for _ in range(10)}
    assert len(nans) > 1
    for x in (0.0, -0.0, 1.5, 1e300, float("inf"), -float("inf")):
        assert hash_float(x) == hash(x)
