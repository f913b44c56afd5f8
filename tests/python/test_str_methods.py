"""`str` methods in nopython code against CPython's own methods on the same strings:
generated strings mixing ASCII, Latin-1, BMP and astral characters, case-special
characters (sigma, sharp s, titlecase digraphs, dotted I), whitespace of every kind and
line breaks; CPython's exceptions for bad arguments. NRT counts balance (conftest)."""

import random

import pytest

from numba_rs import njit

ALPHABET = (
    "aAbBzZ09 _-.,'\t\n\r\x0b\x0c\x1c\x85\u2028"
    "éÉßÿ\xaa\xb2\xbd"
    "ΣσςΑα\u01c4\u01c5\u01c6İı"
    "日本\u3000\u2163\u0661"
    "😀𝐀\U00010400"
)


def gen(rng, n):
    return "".join(rng.choice(ALPHABET) for _ in range(n))


RNG = random.Random(44)
STRINGS = ["", "a", "A", "Σ", "ΑΣ", "ΑΣ Α", "hello world", "  padded\t\n", "Straße",
           "ǅemal", "İstanbul", "x😀y", "1+2", "-42", "+7", "a\tb\tc", "a\r\nb\rc\n"]
STRINGS += [gen(RNG, RNG.randint(0, 12)) for _ in range(60)]

NO_ARG = ["capitalize", "casefold", "lower", "upper", "swapcase", "title",
          "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier",
          "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper",
          "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "expandtabs"]


def compiled(expr, args="s"):
    ns = {}
    exec(f"def f({args}):\n    return {expr}", ns)
    return njit(ns["f"]), ns["f"]


@pytest.mark.parametrize("name", NO_ARG)
def test_methods_without_arguments(name):
    jf, pf = compiled(f"s.{name}()")
    for s in STRINGS:
        assert jf(s) == pf(s), (name, s)


SEARCHES = ["", "a", "ab", "Σ", "😀", " ", "b\tc", "zz"]


@pytest.mark.parametrize("name", ["find", "rfind", "count", "startswith", "endswith"])
def test_searches_with_bounds(name):
    j1, p1 = compiled(f"s.{name}(t)", "s, t")
    j3, p3 = compiled(f"s.{name}(t, a, b)", "s, t, a, b")
    for s in STRINGS[:40]:
        for t in SEARCHES + [s[1:3]]:
            assert j1(s, t) == p1(s, t), (name, s, t)
            for a, b in [(0, 3), (-3, -1), (2, 100), (-100, 1), (4, 2)]:
                assert j3(s, t, a, b) == p3(s, t, a, b), (name, s, t, a, b)


def test_index_and_rindex_raise_value_error():
    ji, pi = compiled("s.index(t)", "s, t")
    jr, pr = compiled("s.rindex(t)", "s, t")
    assert ji("abcabc", "c") == pi("abcabc", "c")
    assert jr("abcabc", "c") == pr("abcabc", "c")
    for f in (ji, jr):
        with pytest.raises(ValueError, match="substring not found"):
            f("abc", "z")


@pytest.mark.parametrize("name", ["center", "ljust", "rjust"])
def test_padding(name):
    j1, p1 = compiled(f"s.{name}(w)", "s, w")
    j2, p2 = compiled(f"s.{name}(w, c)", "s, w, c")
    for s in STRINGS[:30]:
        for w in (-1, 0, 3, 8, 11):
            assert j1(s, w) == p1(s, w), (name, s, w)
            assert j2(s, w, "*") == p2(s, w, "*")
            assert j2(s, w, "日") == p2(s, w, "日")
    with pytest.raises(TypeError, match="exactly one character"):
        j2("a", 5, "ab")


def test_zfill():
    jf, pf = compiled("s.zfill(w)", "s, w")
    for s in ["", "42", "-42", "+7", "-", "abc", "日"]:
        for w in (0, 1, 3, 6):
            assert jf(s, w) == pf(s, w), (s, w)


def test_strip_with_chars_and_replace():
    js, ps = compiled("(s.strip(c), s.lstrip(c), s.rstrip(c))", "s, c")
    jr, pr = compiled("(s.replace(a, b), s.replace(a, b, 1), s.replace(a, b, 0))", "s, a, b")
    for s in STRINGS[:40]:
        for c in ["a", " \t", "Σ😀", ""]:
            assert js(s, c) == ps(s, c), (s, c)
        for a, b in [("a", "XY"), ("", "-"), ("Σ", ""), ("ab", "😀")]:
            assert jr(s, a, b) == pr(s, a, b), (s, a, b)


def test_split_join_partition():
    jsplit, psplit = compiled("(s.split(d), s.rsplit(d), s.split(d, 1), s.rsplit(d, 1))", "s, d")
    jws, pws = compiled("(s.split(None, 1), s.rsplit(None, 1), s.split(maxsplit=0))")
    jpart, ppart = compiled("(s.partition(d), s.rpartition(d))", "s, d")
    jjoin, pjoin = compiled("d.join(s.split())", "s, d")
    jlines, plines = compiled("s.splitlines(True)")
    for s in STRINGS:
        assert jws(s) == pws(s), s
        assert jlines(s) == plines(s), s
        for d in [",", "a", "Σ", "ab", "😀"]:
            assert jsplit(s, d) == psplit(s, d), (s, d)
            assert jpart(s, d) == ppart(s, d), (s, d)
            assert jjoin(s, d) == pjoin(s, d), (s, d)
    with pytest.raises(ValueError, match="empty separator"):
        jsplit("abc", "")
    with pytest.raises(ValueError, match="empty separator"):
        jpart("abc", "")


def test_keyword_arguments_and_literal_receivers():
    def f(s):
        return (s.split(sep=",", maxsplit=1), s.center(7, "."),
                "a-b-c".replace("-", "+"), "Hello".upper(), s.splitlines(keepends=True))

    for s in ["x,y,z", "a\nb"]:
        assert njit(f)(s) == f(s)


def test_methods_in_a_loop_keep_allocations_balanced():
    def words(text):
        out = []
        for w in text.split():
            if w.isalpha():
                out.append(w.lower().capitalize())
        return " ".join(out)

    text = "The quick BROWN fox 42 jumps ÜBER the lazy dog 😀 ΣΑΣ"
    assert njit(words)(text) == words(text)


def test_unicode_tables_are_generated_from_this_python():
    import pathlib
    import subprocess
    import sys

    script = pathlib.Path(__file__).resolve().parents[2] / "tools" / "gen_unicode_db.py"
    r = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


HASHED = ["", "a", "hello", "héllo", "日本", "😀x", "abcdefgh", "abcdefghi", "Σ" * 9]


def test_hash_equals_cpython_for_strings_tuples_and_complex():
    f = njit(lambda x: hash(x))
    for x in HASHED + [1 + 2j, -0.5j, (1, "a", 2.5), ("x",), ((1, 2), "z")]:
        assert f(x) == hash(x), x
    # Characters taken out of a wider string hash as their own canonical strings.
    g = njit(lambda s: [hash(c) for c in s])
    assert g("aé日😀") == [hash(c) for c in "aé日😀"]


@pytest.mark.parametrize("seed", ["0", "1", "12345"])
def test_hash_follows_pythonhashseed(seed):
    import os
    import subprocess
    import sys

    code = (
        "from numba_rs import njit\n"
        "f = njit(lambda s: hash(s))\n"
        f"words = {HASHED!r}\n"
        "assert all(f(w) == hash(w) for w in words), [(w, f(w), hash(w)) for w in words]\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=seed)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_iterating_a_string_yields_its_characters():
    def f(s):
        out = []
        for c in s:
            out.append(c)
        upper = 0
        for c in s:
            if c.isupper():
                upper += 1
        return out, upper, [c * 2 for c in s], list(s), sorted(s)

    for s in ["", "abcA", "héllo日本😀xA", "ΣaΣ"]:
        assert njit(f)(s) == f(s)


def test_str_of_numbers_is_cpythons():
    import math

    f = njit(lambda x: str(x))
    rng = random.Random(9)
    values = [0, -1, 2**63 - 1, -(2**63), True, False, 0.1, 1e16, -0.0, 1e-5, 1e22,
              float("nan"), float("inf"), -float("inf"), 5e-324, 204366253598380.12]
    values += [rng.uniform(-1e6, 1e6) for _ in range(300)]
    values += [rng.random() * 10.0 ** rng.randint(-30, 30) for _ in range(300)]
    for v in values:
        assert f(v) == str(v), v
    assert f(math.pi) == str(math.pi)
    assert njit(lambda: str())() == ""
    assert njit(lambda s: str(s))("日本") == "日本"


def test_ord_chr_truth_and_not():
    f = njit(lambda s: (ord(s), chr(ord(s) + 1), bool(s), not s))
    for s in ["a", "é", "日", "😀"]:
        assert f(s) == (ord(s), chr(ord(s) + 1), bool(s), not s)
    g = njit(lambda s: (bool(s), not s))
    assert g("") == (False, True)
    assert njit(lambda l: not l)([1]) is False
    with pytest.raises(TypeError, match="ord\\(\\) expected a character"):
        njit(lambda c: ord(c))("ab")
    for bad in (-2, 0x110000):
        with pytest.raises(ValueError, match="chr\\(\\) arg not in range"):
            njit(lambda c: chr(c))(bad)
    assert njit(lambda: chr(0x10FFFF))() == chr(0x10FFFF)


def test_f_strings_of_numbers_bools_and_strings():
    def f(a, b, s):
        return f"AA_{a + 3}_B{b}{a > 1}|{s}|{-b}"

    for a, b, s in [(2, 1.5, "x"), (-7, 1e20, "日本"), (0, -0.0, "")]:
        assert njit(f)(a, b, s) == f(a, b, s)


def test_startswith_endswith_take_tuples_and_strings_never_equal_other_kinds():
    def f(s):
        return (s.startswith(("x", "ab")), s.endswith(("zz", "c")), s == 1, s != 2.5,
                None == s)

    for s in ["abc", "xyz", "", "日c"]:
        assert njit(f)(s) == f(s)


def test_wrong_argument_kinds_are_numbas_typing_errors():
    from numba_rs.errors import TypingError

    cases = [
        ("s.center(1.5)", "The width must be an Integer"),
        ("s.zfill(1.5)", "<width> must be an Integer"),
        ("s.count('a', 0, 1.5)", "The slice indices must be an Integer or None"),
        ("s.replace('a', 'b', 1.5)", "Unsupported parameters. The parameters must be Integer"),
        ("s.startswith(1)", "The arg 'prefix' should be a string or a tuple of strings"),
        # Numba's messages naming its type classes, as its own tests match them.
        (
            "s.rfind('a', 0.5)",
            "\"start\" must be (<class 'numba.core.types.scalars.Integer'>, "
            "<class 'numba.core.types.misc.NoneType'>), not float64",
        ),
        ("s.find(1)", "\"substr\" must be <class 'numba.core.types.misc.UnicodeType'>"),
        (
            "s.partition(None)",
            "\"sep\" must be (<class 'numba.core.types.misc.UnicodeType'>, "
            "<class 'numba.core.types.npytypes.UnicodeCharSeq'>), not none",
        ),
        (
            "s.expandtabs(2.5)",
            "\"tabsize\" must be (<class 'numba.core.types.scalars.Integer'>, <class 'int'>)",
        ),
        ("s.splitlines(None)", "\"keepends\" must be (<class 'numba.core.types.scalars.Integer'>"),
    ]
    for expr, message in cases:
        jf, _ = compiled(expr)
        with pytest.raises(TypingError) as e:
            jf("abc")
        assert message in str(e.value)


def test_f_string_format_specs_match_cpython():
    def f(x, y, s, n):
        return (f"{x:>8.3f}|{n:05d}|{s:<10}|{y:,}|{x:e}|{n:#x}|{s:^7}|{x:.2%}|{y:_}|"
                f"{x:g}|{n:+}|{x:.3}|{x:E}|{n:*^9b}|{s:.2}|{x:010.1f}|{n:o}")

    rng = random.Random(3)
    cases = [(0.0, 0, "", 0), (-0.0, -1, "日本語", -7), (1e16, 10**9, "x", 255),
             (float("inf"), 5, "ab", 1), (float("nan"), -5, "abc", -1), (2.5, 7, "😀", 42)]
    for _ in range(200):
        cases.append((rng.uniform(-1e7, 1e7) * 10 ** rng.randint(-8, 3),
                      rng.randint(-10**9, 10**9), rng.choice(["", "ab", "日本語", "x" * 12]),
                      rng.randint(-500, 500)))
    jf = njit(f)
    for args in cases:
        assert jf(*args) == f(*args), args
    assert njit(lambda x, spec: format(x, spec))(3.14159, ">9.2f") == format(3.14159, ">9.2f")


def test_bad_format_specs_raise_value_error():
    with pytest.raises(ValueError):
        njit(lambda s: f"{s:d}")("x")
    with pytest.raises(ValueError):
        njit(lambda n: f"{n:.2d}")(3)


def test_nested_format_spec():
    def f(x, width):
        return f"{x:>{width}.2f}|{x:{width}}"

    for x, w in [(3.14159, 9), (-2.0, 3), (1e10, 12)]:
        assert njit(f)(x, w) == f(x, w)


def test_split_pieces_share_blocks_safely():
    """`split` makes its pieces in shared blocks: pieces that outlive the list and the
    text, pieces of every size (one past a block's quarter gets its own block), Latin-1
    and ASCII pieces, pieces as dict keys and sorted, all as CPython computes them."""
    import random

    from numba_rs import njit
    from numba_rs.runtime import rtsys

    def keep_some(text, step):
        words = text.split()
        kept = [words[i] for i in range(0, len(words), step)]
        return kept

    def count(text):
        d = {}
        for w in text.split(" "):
            d[w] = d.get(w, 0) + 1
        return sorted(d.items())

    rng = random.Random(7)
    alphabet = "abcdé xyz\tñ"
    for trial in range(6):
        n = rng.choice([10, 1000, 20000])
        text = "".join(rng.choice(alphabet) for _ in range(n))
        if trial == 5:
            text += " " + "w" * 3000 + " " + "v" * 1023 + " tail"
        before = rtsys.get_allocation_stats()
        kept = njit(keep_some)(text, 7)
        assert kept == keep_some(text, 7)
        assert njit(count)(text) == count(text)
        del kept
        after = rtsys.get_allocation_stats()
        assert after.alloc - before.alloc == after.free - before.free
