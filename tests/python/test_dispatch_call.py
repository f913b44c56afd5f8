"""The call path (issue 13): vectorcall, binding of keyword and omitted arguments as
Numba binds them, fingerprints of the remaining kinds of values, arrays crossing without
Python attribute reads, and recompile() racing with calls."""

import array
import functools
import sys
import threading

import numpy as np
import pytest

from numba_rs import njit
from numba_rs._numba_rs import compute_fingerprint

HAVE_VECTORCALL = 1 << 11


# --- vectorcall ------------------------------------------------------------------------


def test_dispatchers_take_the_vectorcall_protocol():
    @njit
    def f(a, b):
        return a - b

    assert f(5, 2) == 3
    assert type(f).__flags__ & HAVE_VECTORCALL
    # Every way of calling reaches the same code: tp_call with a tuple and a dict,
    # functools.partial, map, a bound method, keywords.
    assert functools.partial(f, 10)(4) == 6
    assert list(map(f, [1, 2], [3, 5])) == [-2, -3]
    assert f(*(7,), **{"b": 1}) == 6
    assert len(f.signatures) == 1


def test_bound_method_passes_the_instance_first():
    import collections

    @njit
    def norm1(self, scale):
        return (abs(self.x) + abs(self.y)) * scale

    class P(collections.namedtuple("P", "x y")):
        norm = norm1

    p = P(3, -4)
    assert p.norm(2) == 14
    assert p.norm(scale=0.5) == 3.5


# --- keyword and omitted arguments, as Numba binds them ---------------------------------


def test_omitted_arguments_get_their_own_signatures_like_numba():
    def f(a, b=2, c=None):
        return a + b

    g = njit(f)
    results = [g(1), g(1, 2), g(1, b=3), g(a=1, b=2.5), g(1, c=None)]
    assert results == [f(1), f(1, 2), f(1, b=3), f(a=1, b=2.5), f(1, c=None)]
    # Numba 0.68.1 prints exactly these four signatures for these five calls.
    assert [tuple(str(t) for t in s) for s in g.signatures] == [
        ("int64", "omitted(default=2)", "omitted(default=None)"),
        ("int64", "int64", "omitted(default=None)"),
        ("int64", "float64", "omitted(default=None)"),
        ("int64", "omitted(default=2)", "none"),
    ]


def test_omitted_tuple_and_float_defaults_are_constants():
    def g(a, b=(1, 2.5), scale=0.5):
        return (a + b[0] + b[1]) * scale

    j = njit(g)
    assert j(1) == g(1)
    assert j(1, b=(1, 2.5)) == g(1, b=(1, 2.5))
    assert j(2, scale=2.0) == g(2, scale=2.0)
    # Numba 0.68.1's signatures for the same three calls.
    assert [tuple(str(t) for t in s) for s in j.signatures] == [
        ("int64", "omitted(default=(1, 2.5))", "omitted(default=0.5)"),
        ("int64", "Tuple(int64, float64)", "omitted(default=0.5)"),
        ("int64", "omitted(default=(1, 2.5))", "float64"),
    ]


def test_default_none_prunes_like_an_argument_none():
    def h(a, b=None):
        if b is None:
            return a
        return a + b

    j = njit(h)
    assert j(3) == 3
    assert j(3, 4) == 7
    assert j(3, b=None) == 3


def test_binding_errors_have_numbas_messages():
    @njit
    def f(a, b=2, c=None):
        return a

    cases = [
        (lambda: f(1, 2, 3, 4), "too many arguments: expected 3, got 4"),
        (lambda: f(), "not enough arguments: expected at least 1, got 0"),
        (lambda: f(1, d=3), "some keyword arguments unexpected"),
        (lambda: f(1, a=3), "some keyword arguments unexpected"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == message

    @njit
    def g(a, b):
        return a

    with pytest.raises(TypeError, match="^not enough arguments: expected 2, got 1$"):
        g(1)
    with pytest.raises(TypeError, match="^missing argument 'b'$"):
        g(a=1, c=2)


def test_keywords_in_any_order():
    def f(x, y, z=3):
        return x * 100 + y * 10 + z

    j = njit(f)
    for kw in [dict(x=1, y=2), dict(y=2, x=1), dict(z=9, y=2, x=1)]:
        assert j(**kw) == f(**kw)
    assert j(1, z=5, y=4) == f(1, z=5, y=4)


def test_non_constant_default_is_passed_as_a_value():
    arr = np.arange(4.0)

    def f(a, b=arr):
        return a + b.sum()

    j = njit(f)
    assert j(1.0) == f(1.0)
    assert str(j.signatures[0][1]).startswith("array(float64, 1d, C")


def test_star_args_functions_still_bind():
    def f(a, *rest):
        return a

    j = njit(f)
    try:
        got = j(1)
    except Exception as e:  # not supported: an error naming it, not a crash
        assert "numba" in type(e).__module__ or isinstance(e, (TypeError, NotImplementedError))
    else:
        assert got == 1


# --- fingerprints of the remaining kinds (numba-facts §4.3, checked with Numba 0.68.1) --


@pytest.mark.parametrize(
    "value, expected",
    [
        ([1], b"[i"),
        ({1}, b"{i"),
        ([(1, 2.0)], b"[(if)"),
        ([[1.0]], b"[[f"),
        (np.dtype("f8"), b"D\x0c"),
        (b"ab", b"b"),
        (bytearray(b"x"), b"a"),
    ],
)
def test_container_fingerprints_match_numba(value, expected):
    assert compute_fingerprint(value) == expected


@pytest.mark.parametrize(
    "value, prefix",
    [
        (memoryview(b"ab"), b"B\x01\x00\x00\x00CRB\x00"),
        (array.array("d", [1.0]), b"B\x01\x00\x00\x00CWd\x00"),
        (memoryview(np.zeros((2, 3))[:, ::2]), b"B\x02\x00\x00\x00AWd\x00"),
    ],
)
def test_buffer_fingerprints_match_numba(value, prefix):
    fp = compute_fingerprint(value)
    # Numba appends the exporter's class address (pointer-sized).
    assert fp[:-8] == prefix
    assert int.from_bytes(fp[-8:], sys.byteorder) == id(type(value))


def test_empty_containers_have_no_fingerprint():
    assert compute_fingerprint([]) is None
    assert compute_fingerprint(set()) is None


def test_unsupported_arguments_raise_typing_errors():
    @njit
    def f(x):
        return 1

    for bad in ([], set(), object()):
        with pytest.raises(Exception) as e:
            f(bad)
        assert type(e.value).__name__ in ("TypingError", "UnsupportedError")
    assert f.signatures == []


# --- arrays through the C struct ------------------------------------------------------


def test_array_results_share_or_own_memory_as_numpy_would():
    @njit
    def same(a):
        return a

    @njit
    def view(a):
        return a[1::2]

    @njit
    def fresh(n):
        return np.arange(n) * 2

    a = np.arange(10.0)
    assert same(a) is a
    v = view(a)
    assert np.shares_memory(v, a)
    np.testing.assert_array_equal(v, a[1::2])
    v[0] = 99.0
    assert a[1] == 99.0
    del a
    assert v[0] == 99.0  # the view keeps the argument alive
    r = fresh(5)
    np.testing.assert_array_equal(r, np.arange(5) * 2)
    assert r.flags.writeable and r.flags.c_contiguous and r.flags.aligned
    assert r.dtype == np.int64


def test_readonly_and_fortran_arrays_round_trip():
    @njit
    def ident(a):
        return a

    @njit
    def total(a):
        return a.sum()

    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert ident(f) is f
    r = np.arange(6, dtype=np.int32)
    r.flags.writeable = False
    assert total(r) == r.sum()
    out = ident(r)
    assert out is r and not out.flags.writeable
    for dt in (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.complex64):
        x = np.ones(3, dtype=dt)
        y = ident(x[::-1])
        assert y.dtype == dt
        np.testing.assert_array_equal(y, x[::-1])


# --- recompile while other threads call -------------------------------------------------


def test_recompile_while_calling_from_threads():
    @njit
    def g(x):
        return x + 1

    g(1)
    errors = []
    stop = threading.Event()

    def caller():
        try:
            while not stop.is_set():
                assert g(41) == 42
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(5):
        g.recompile()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(g.signatures) == 1


# --- Numba's dispatcher behaviours around compiling ------------------------------------


def test_compile_when_disabled_is_a_runtime_error():
    from numba_rs import jit

    @jit(["(float32,)", "(int32,)"])
    def foo(a):
        return a

    with pytest.raises(RuntimeError, match="^compilation disabled$"):
        foo.compile("(complex64,)")
    assert len(foo.signatures) == 2


def test_signature_length_must_match_the_function():
    def add(x, y):
        return x + y

    for sig, n in (("()", 0), ("(intc,)", 1), ("(intc,intc,intc)", 3)):
        with pytest.raises(TypeError) as e:
            njit(sig)(add)
        assert f"Signature mismatch: {n} argument types given, but function takes 2 arguments" in str(e.value)
    # Numba's C type names
    f = njit("(intc, uintc)")(add)
    assert [str(t) for t in f.signatures[0]] == ["int32", "uint32"]
    assert f(2, 3) == 5


def test_decorating_what_is_not_a_function():
    @njit
    def foo(x):
        return x

    with pytest.raises(TypeError) as e:
        njit(foo)
    assert "A jit decorator was called on an already jitted function" in str(e.value)
    assert ".py_func" in str(e.value)

    class Thing:
        pass

    with pytest.raises(TypeError, match="The decorated object is not a function"):
        njit(Thing)


def test_entry_point_is_placed_like_the_function():
    @njit
    def foo(x):
        return x * 3

    foo(2)
    (cr,) = foo.overloads.values()
    assert cr.entry_point.__module__ == foo.py_func.__module__
    assert cr.entry_point(4) == 12


def test_ambiguous_message_names_the_function_as_python_prints_it():
    def add(x, y):
        return x + y

    f = njit(["(float32, float64)", "(float64, float32)"])(add)
    with pytest.raises(TypeError) as e:
        f(1.0, 2.0)
    assert str(e.value).startswith(f"Ambiguous overloading for {add!r} (float64, float64):\n")


def test_jitted_callee_without_a_matching_signature_inside_jitted_code():
    @njit(["(intp,)"])
    def foo(a):
        return a

    @njit
    def bar():
        foo(1)
        foo(np.ones(1))

    with pytest.raises(Exception) as e:
        bar()
    assert type(e.value).__name__ == "TypingError"
    assert "Invalid use of type(CPUDispatcher(" in str(e.value)
    assert "with parameters (array(float64, 1d, C))" in str(e.value)


def star_defaults(x, y=2, *z):
    return x, y, z


def test_star_arguments_are_packed_as_numba_packs_them():
    f = njit(star_defaults)
    for args, kwargs in [((4,), {}), ((4, 5), {}), ((4, 5, 6), {}), ((4, 5, 6, 7.5), {}),
                         ((), {"x": 4}), ((), {"x": 4, "y": 5}), ((4,), {"y": 5})]:
        assert f(*args, **kwargs) == star_defaults(*args, **kwargs)
    for args, kwargs in [((4, 5), {"y": 6}), ((4, 5), {"z": 6}), ((4,), {"x": 6})]:
        with pytest.raises(TypeError, match="some keyword arguments unexpected"):
            f(*args, **kwargs)


def test_annotation_info_per_signature_and_together():
    @njit
    def foo(a):
        return a + 1

    foo(1)
    foo(1.3)
    together = foo.get_annotation_info()
    assert len(together) == 2
    merged = {}
    for sig in foo.signatures:
        merged.update(foo.get_annotation_info(sig))
    assert merged == together
    for (where, sig), data in together.items():
        assert where.startswith(__file__)
        lines = dict(data["python_lines"])
        assert any("return a + 1" in text for text in lines.values())
        assert any(":: " + str(sig[0]) in ir for irs in data["ir_lines"].values() for ir in irs)
    (cr, _) = foo.overloads.values()
    assert str(cr.type_annotation).startswith("# File: ")


def test_types_compare_equal_to_numbas_types():
    numba_types = pytest.importorskip("numba.core.types")
    import numba_rs

    assert numba_rs.int64 == numba_types.int64
    assert numba_rs.float32 != numba_types.float64
    assert numba_rs.int64 != "int64"

    @njit
    def ident(x):
        return x

    ident(np.int32(3))
    assert ident.signatures == [(numba_types.int32,)]
