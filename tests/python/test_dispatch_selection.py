"""Dispatch core (issue 13): overload selection among compiled signatures, argument
fingerprints and their cache, and compile-on-miss from several threads at once."""

import collections
import threading

import numpy as np
import pytest

import numba_rs as nb
from numba_rs import njit
from numba_rs._numba_rs import compute_fingerprint


# --- fingerprints (numba-facts §4.3's verified examples) -------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, b"i"),
        (1.5, b"f"),
        (True, b"?"),
        (None, b"n"),
        (1j, b"c"),
        ((1, 2.0), b"(if)"),
        (((1, (2.0, None)), True), b"((i(fn))?)"),
        (np.float32(1), b"S\x0b"),
        (np.int64(3), b"S\x07"),
        (np.arange(3.0), b"A\x01\x00\x00\x00CW\x0c"),
        (np.zeros((2, 3), order="F"), b"A\x02\x00\x00\x00FW\x0c"),
        (np.arange(6, dtype=np.int64)[::2], b"A\x01\x00\x00\x00AW\x07"),
    ],
)
def test_fingerprint_bytes_match_numba(value, expected):
    assert compute_fingerprint(value) == expected


def test_readonly_array_fingerprint():
    a = np.arange(3.0)
    a.flags.writeable = False
    assert compute_fingerprint(a) == b"A\x01\x00\x00\x00CR\x0c"


def test_values_without_fingerprint():
    assert compute_fingerprint(object()) is None
    assert compute_fingerprint((1, object())) is None
    assert compute_fingerprint(np.zeros(2, dtype=">f8")) is None


def test_namedtuple_fingerprint_names_its_class():
    A = collections.namedtuple("P", "x y")
    B = collections.namedtuple("P", "x y")
    fa, fb = compute_fingerprint(A(1, 2)), compute_fingerprint(B(1, 2))
    assert fa.startswith(b"N") and fa.endswith(b"(ii)")
    assert fa != fb


# --- the fingerprint cache types like the slow path ------------------------------------


def test_cached_tuple_types_are_distinct():
    @njit
    def first(t):
        return t[0]

    assert first((1, 2)) == 1
    assert first((1.5, 2)) == 1.5
    assert first(((1, 2), 3)) == (1, 2)
    assert first((1, 2)) == 1
    assert first((np.int32(7), 2)) == 7
    assert len(first.signatures) == 4


Pt = collections.namedtuple("Pt", "x y")
Pt2 = collections.namedtuple("Pt2", "x y")


def test_namedtuples_of_different_classes_keep_their_class():
    @njit
    def same(p):
        return p

    a = same(Pt(1, 2))
    b = same(Pt2(1, 2))
    assert type(a) is Pt and type(b) is Pt2
    assert a == Pt(1, 2) and b == Pt2(1, 2)
    assert type(same(Pt(3, 4))) is Pt


def test_arrays_dispatch_on_layout_and_writeable():
    @njit
    def total(a):
        return a.sum()

    a = np.arange(6.0)
    assert total(a) == 15.0
    assert total(a[::2]) == 6.0
    r = a.copy()
    r.flags.writeable = False
    assert total(r) == 15.0
    assert total(np.arange(6, dtype=np.int32)) == 15
    assert total(np.arange(6.0)) == 15.0
    sigs = {str(s[0]) for s in total.signatures}
    assert sigs == {
        "array(float64, 1d, C)",
        "array(float64, 1d, A)",
        "readonly array(float64, 1d, C)",
        "array(int32, 1d, C)",
    }


# --- overload selection -----------------------------------------------------------------


def test_new_types_compile_while_compiling_is_allowed():
    @njit
    def inc(x):
        return x + 1

    assert inc(1) == 2
    # int32 would promote to int64, but with compiling allowed only exact matches count.
    assert inc(np.int32(1)) == 2
    assert len(inc.signatures) == 2


def test_promote_beats_safe_conversion():
    @njit(["float64(float64)", "int64(int64)"])
    def inc(x):
        return x + 1

    # int32 → int64 promotes, int32 → float64 is a safe conversion: int64 is chosen.
    r = inc(np.int32(1))
    assert r == 2 and type(r) is int
    # float32 → float64 promotes; float32 → int64 is unsafe.
    r = inc(np.float32(1.5))
    assert r == 2.5 and type(r) is float
    assert len(inc.signatures) == 2


def test_unsafe_conversion_when_compiling_is_disabled():
    @njit("int64(int64)")
    def ident(x):
        return x

    r = ident(2.75)
    assert r == 2 and type(r) is int
    assert len(ident.signatures) == 1


def test_ambiguous_overloads_list_the_tied_signatures():
    @njit(["int64(int32, int64)", "int64(int64, int32)"])
    def add(a, b):
        return a + b

    assert add(np.int32(1), 2) == 3
    with pytest.raises(TypeError) as ei:
        add(np.int16(1), np.int16(2))
    msg = str(ei.value)
    assert msg.startswith("Ambiguous overloading for <function")
    assert "(int16, int16):" in msg
    assert msg.splitlines()[1:] == ["(int32, int64) -> int64", "(int64, int32) -> int64"]


def test_no_matching_definition():
    @njit("int64(int64)")
    def ident(x):
        return x

    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) "):
        ident((1, 2))


# --- compile-on-miss from several threads ----------------------------------------------


def test_threads_compile_a_new_signature_once():
    @njit
    def work(x, n):
        s = 0.0
        for i in range(n):
            s += x * i
        return s

    n_threads = 8
    barrier = threading.Barrier(n_threads)
    results = [None] * n_threads
    errors = []

    def run(k):
        try:
            barrier.wait()
            results[k] = work(float(k), 10)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [45.0 * k for k in range(n_threads)]
    assert len(work.signatures) == 1


def test_threads_each_compiling_a_different_signature():
    @njit
    def twice(x):
        return x + x

    values = [1, 2.5, True, 1j, (1, 2), np.int32(3), np.float32(0.5), np.arange(3)]
    barrier = threading.Barrier(len(values))
    results = [None] * len(values)

    def run(k):
        barrier.wait()
        results[k] = twice(values[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(values))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[:7] == [2, 5.0, 2, 2j, (1, 2, 1, 2), 6, 1.0]
    np.testing.assert_array_equal(results[7], np.arange(3) * 2)
    assert len(twice.signatures) == len(values)


def test_recursion_still_compiles_after_threads():
    @njit
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    out = []
    ts = [threading.Thread(target=lambda: out.append(fib(15))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out == [610] * 4
    assert len(fib.signatures) == 1
