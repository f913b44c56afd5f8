"""NumPy structured dtypes in compiled code (numba-typeinfer's `records`, numba-lower's
`impls/records` and `model/record`, numba-py's `records`): arrays of records and record
scalars as arguments, fields by attribute, constant name, constant position, literal
variables and `literal_unroll`; field stores with conversion; records referring to
their array's bytes (writes land in it); records returned as copies; nested arrays,
nested records, character, bool and datetime fields; field views of arrays; packed,
aligned and titled dtypes; record subtyping; errors. The same function run by CPython
over NumPy's records is the oracle; NRT counts balance (conftest)."""

import random

import numpy as np
import pytest

from numba_rs import literal_unroll, njit, types
from numba_rs.errors import TypingError

PACKED = np.dtype([("a", "f8"), ("b", "i2"), ("c", "c8"), ("d", "U5")])
ALIGNED = np.dtype([("e", "i4"), ("f", "f8")], align=True)
NESTED = np.dtype([("g", "i4"), ("h", "f4", (3, 2)), ("k", [("p", "i8"), ("q", "f8")])])
FIELDS = ("a", "b")


def packed_array(n=4):
    a = np.zeros(n, PACKED)
    for i in range(n):
        a[i]["a"] = (i + 1) / 2
        a[i]["b"] = 3 * i - 4
        a[i]["c"] = complex(i, -i)
        a[i]["d"] = "x" * i
    # A recarray: CPython's records then read fields as attributes too.
    return a.view(np.recarray)


def nested_array(n=3):
    a = np.zeros(n, NESTED)
    a["g"] = np.arange(n)
    a["h"] = np.arange(n * 6, dtype="f4").reshape(n, 3, 2)
    a["k"]["p"] = np.arange(n) * 10
    a["k"]["q"] = np.arange(n) / 4
    return a.view(np.recarray)


def check(pyfunc, *args):
    """Run `pyfunc` under CPython and compiled on copies of `args`; results and the
    arguments afterwards must agree."""
    py_args = [a.copy() if hasattr(a, "copy") else a for a in args]
    jit_args = [a.copy() if hasattr(a, "copy") else a for a in args]
    want = pyfunc(*py_args)
    got = njit(pyfunc)(*jit_args)
    assert_same(got, want)
    for g, w in zip(jit_args, py_args):
        assert_same(g, w)
    return got


def assert_same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, np.ndarray) and want.dtype.names:
        assert isinstance(got, np.ndarray)
        assert np.dtype(got.dtype.descr) == np.dtype(want.dtype.descr)
        for name in want.dtype.names:  # field by field: NaT fields compare as NumPy's
            assert_same(np.asarray(got[name]), np.asarray(want[name]))
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray)
        assert np.dtype(got.dtype.descr) == np.dtype(want.dtype.descr)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    elif isinstance(want, np.void):
        assert isinstance(got, np.void)
        assert np.dtype(got.dtype.descr) == np.dtype(want.dtype.descr)
        assert got.tobytes() == want.tobytes()
    elif isinstance(want, np.generic) and not isinstance(want, (np.void, np.datetime64, np.timedelta64)):
        # A field CPython reads as a NumPy scalar comes back as the Python value.
        assert got == want.item()
        assert type(got) is type(want.item())
    else:
        assert type(got) is type(want) and (got == want or (got != got and want != want))


# -- reading fields -----------------------------------------------------------------


def test_fields_by_attribute_name_and_position():
    def f(a, i):
        r = a[i]
        return r.a, r.b, r.c, r.d, r["a"], a[i]["b"], a[i][0], a[i][-1]

    for i in range(4):
        check(f, packed_array(), i)


def test_field_name_as_literal_variable_constant_tuple_and_unroll():
    def by_tuple(r):
        fs = ("a", "b")
        f = fs[1]
        return r[f]

    def by_global(r):
        return r[FIELDS[0]]

    def by_unroll(r):
        out = 0.0
        for f in literal_unroll(FIELDS):
            out += r[f]
        return out

    a = packed_array()
    for fn in (by_tuple, by_global, by_unroll):
        assert njit(fn)(a[2]) == fn(a[2])


def test_array_field_views():
    def f(a):
        return a.a, a["b"], a.a.sum(), a["c"][1:]

    check(f, packed_array())


def test_iteration_over_an_array_of_records():
    def f(a):
        s = 0.0
        for r in a:
            s += r.a * r.b
        return s

    check(f, packed_array(6))


def test_record_type_prints_as_numba():
    t = types.Record.from_dtype(PACKED)
    assert str(t) == (
        "Record(a[type=float64;offset=0],b[type=int16;offset=8],"
        "c[type=complex64;offset=10],d[type=[unichr x 5];offset=18];38;False)"
    )
    assert str(types.Record.from_dtype(ALIGNED)).endswith(";16;True)")

    def f(a):
        return a[0].a

    d = njit(f)
    d(packed_array())
    assert str(d.signatures[0][0]) == f"array({t}, 1d, C)"


# -- writing fields -----------------------------------------------------------------


def test_field_stores_convert_and_land_in_the_array():
    def f(a, i, x, y):
        a[i].a = x
        a[i]["b"] = y
        a[i][2] = x * 1j
        a[i].d = "hello world"  # truncated to 5 characters, as NumPy stores it
        r = a[i + 1]
        r.a += 100.0
        return a[i].a

    for x, y in [(3.5, 7), (2, 9.0), (-1.25, True)]:
        check(f, packed_array(), 1, x, y)


def test_record_copied_between_items():
    def f(a, i, j):
        a[i] = a[j]
        a[j].a = -1.0

    for i, j in [(0, 1), (2, 0), (3, 3)]:
        check(f, packed_array(), i, j)


def test_record_arguments_refer_to_the_array():
    def f(r, v):
        x = r.a
        r.a = v
        r["b"] = 11
        return x

    a = packed_array()
    b = a.copy()
    assert njit(f)(a[2], 9.5) == f(b[2], 9.5)
    np.testing.assert_array_equal(a, b)
    assert a[2]["a"] == 9.5 and a[2]["b"] == 11


def test_two_record_arguments_of_distinct_types():
    def f(r, s):
        return r.a + s.f

    a, b = packed_array(), np.array([(1, 2.5)], ALIGNED).view(np.recarray)
    assert njit(f)(a[1], b[0]) == f(a[1], b[0])


def test_records_returned_are_copies():
    def f(a, i):
        return a[i]

    a = packed_array()
    got = njit(f)(a, 2)
    assert got.tobytes() == a[2].tobytes() and got.dtype == a.dtype
    got["a"] = 123.0
    assert a[2]["a"] == 1.5


def test_records_in_tuples_and_passed_to_jitted_functions():
    @njit
    def weight(r):
        return r.a * 2 + r.b

    def f(a):
        t = (a[0], a[3])
        return weight(t[0]) + weight(t[1]), t[1]

    a = packed_array()
    got = njit(f)(a)
    assert got[0] == a[0]["a"] * 2 + a[0]["b"] + a[3]["a"] * 2 + a[3]["b"]
    assert got[1].tobytes() == a[3].tobytes()


# -- nested arrays and records --------------------------------------------------------


def test_nested_array_fields():
    def read(a, i):
        return a[i].h, a[i].h[1, 0], a[i]["h"][2], np.shape(a[i].h), np.size(a[i].h)

    def write(a, i):
        a[i].h[0, 1] = -5.0
        a[i].h[2] = 1.5  # a row, broadcast
        a[i + 1].h = np.ones((3, 2)) * 7  # the whole field, from an array
        a[i]["h"][1, :] = np.array([8.0, 9.0])

    for i in range(2):
        check(read, nested_array(), i)
        check(write, nested_array(), i)


def test_nested_array_field_view_of_an_array():
    def f(a):
        v = a.h
        v[:, 0, 1] = 3.0
        return a.h, a["h"][1][2]

    check(f, nested_array())


def test_nested_records():
    def f(a, i):
        a[i].k.q = 2.5
        a[i]["k"]["p"] += 1
        return a[i].k.p + a[i].k.q, a[i].k, a.k.p

    check(f, nested_array(), 1)


def test_character_bool_and_datetime_fields():
    dt = np.dtype([("s", "S4"), ("u", "U3"), ("ok", "?"), ("t", "M8[D]"), ("d", "m8[h]")])
    a = np.zeros(3, dt)
    a["s"] = [b"ab", b"cdef", b""]
    a["u"] = ["x", "yz", "\u00e9t\u00e9"]
    a["ok"] = [True, False, True]
    a["t"] = np.array(["2020-01-01", "NaT", "1999-12-31"], "M8[D]")
    a["d"] = np.array([1, 2, 3], "m8[h]")
    a = a.view(np.recarray)

    def f(a, i):
        a[i].ok = not a[i].ok
        a[i].s = b"zzzzzz"
        return a[i].s, a[i].u, a[i].ok, a[i].t, a[i].d + a[i].d

    for i in range(3):
        check(f, a, i)


def test_character_item_arguments_and_results():
    dt = np.dtype([("m", "i4"), ("n", "S5")])
    rec = types.Record.from_dtype(dt)

    def setn(a, i, cs):
        a[i].n = cs

    assert str(rec.typeof("n")) == "[char x 5]" and rec.offset("n") == 4
    sig = (rec[::1], types.intp, rec.typeof("n"))
    cf = njit(sig)(setn).overloads[sig].entry_point
    a, b = np.zeros(3, dt), np.zeros(3, dt)
    for i, s in enumerate(["ab", "abcde", "abcdefg"]):
        cf(a, i, s)
        b[i]["n"] = s
    np.testing.assert_array_equal(a, b)


# -- dtypes ---------------------------------------------------------------------------


def test_aligned_and_titled_dtypes():
    titled = np.dtype([(("x", "s0"), "i4"), (("y", "s1"), "i4")])

    def f(a):
        for i in range(a.size):
            a[i]["s0"] = i * 2
            a[i]["x"] += -1
            a[i]["s1"] = i * 3
        return a

    check(f, np.zeros(4, titled))


    def g(a):
        a[1].e = 5
        return a[0].e + a[1].f

    check(g, np.array([(1, 2.5), (3, 4.5)], ALIGNED).view(np.recarray))


def test_recarray_argument():
    def f(a):
        return a[1].a + a.b[2]

    a = packed_array().view(np.recarray)
    assert njit(f)(a) == f(a)


def test_arrays_of_a_global_structured_dtype():
    DT = ALIGNED

    def f(n):
        b = np.zeros(n, dtype=DT)
        for i in range(n):
            b[i]["e"] = i
            b[i]["f"] = i / 2
        return b

    got = njit(f)(4)
    want = f(4)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_record_subtyping():
    a = np.zeros(1, [("a", "f8")])
    ab = np.zeros(1, [("a", "f8"), ("b", "i4")])
    ab[0]["a"] = 4.5

    def f(r):
        return r["a"]

    d = njit(f)
    d(a[0])
    d.disable_compile()
    assert d(ab[0]) == 4.5
    other = np.zeros(1, [("c", "f8")])
    with pytest.raises(TypeError):
        d(other[0])


# -- errors ---------------------------------------------------------------------------


def test_errors_name_the_field():
    def missing(r):
        return r["zz"]

    def out_of_range(r):
        return r[10]

    def bad_store(r):
        r.a = "text"

    def whole_field(a, b):
        a["a"] = b["a"]

    a = packed_array()
    with pytest.raises(TypingError, match=r"Field 'zz' was not found in record with fields \('a', 'b', 'c', 'd'\)"):
        njit(missing)(a[0])
    with pytest.raises(TypingError, match="Requested index 10 is out of range"):
        njit(out_of_range)(a[0])
    with pytest.raises(TypingError, match="Cannot set field 'a'"):
        njit(bad_store)(a[0])
    with pytest.raises(TypingError, match="Unsupported array index type"):
        njit(whole_field)(a, a.copy())


# -- generated programs ---------------------------------------------------------------

SCALARS = ["i1", "u1", "i2", "i4", "i8", "u4", "f4", "f8", "c8", "c16", "?"]


def random_dtype(rng):
    n = rng.randint(1, 5)
    fields = []
    for k in range(n):
        kind = rng.random()
        if kind < 0.7:
            fields.append((f"f{k}", rng.choice(SCALARS)))
        else:
            fields.append((f"f{k}", rng.choice(["f8", "i4", "i2"]), (rng.randint(1, 3),)))
    return np.dtype(fields, align=rng.random() < 0.5)


def program(rng, dt):
    """A function reading, combining and writing random fields of item `i`."""
    names = dt.names
    lines = ["def f(a, i):", "    r = a[i]", "    acc = 0"]
    for _ in range(rng.randint(2, 6)):
        n = rng.choice(names)
        sub = dt.fields[n][0].shape
        ref = rng.choice([f"r.{n}", f"r['{n}']", f"a[i].{n}"])
        if sub:
            ref = f"{ref}[{rng.randrange(sub[0])}]"
        op = rng.random()
        if op < 0.5:
            lines.append(f"    acc = acc + {ref}")
        else:
            base = dt.fields[n][0].base
            val = {"b": "True", "c": "1.5j", "f": "2.25"}.get(base.kind, "3")
            lines.append(f"    {ref} = {val}")
    lines.append("    return acc")
    return "\n".join(lines)


def test_generated_record_programs():
    rng = random.Random(1234)
    ran = 0
    for _ in range(40):
        dt = random_dtype(rng)
        src = program(rng, dt)
        ns = {}
        exec(src, ns)
        base = np.zeros(3, dt).view(np.recarray)
        for name in dt.names:
            flat = np.asarray(base[name]).reshape(-1)
            flat[:] = np.arange(1, flat.size + 1) % 2 if dt.fields[name][0].base.kind == "b" else np.arange(1, flat.size + 1)
        py_a, jit_a = base.copy(), base.copy()
        try:
            want = ns["f"](py_a, 1)
        except Exception:
            continue  # a NumPy casting error on this draw: nothing to compare
        got = njit(ns["f"])(jit_a, 1)
        assert got == pytest.approx(want, rel=1e-6), src
        for name in dt.names:  # fields, not bytes: copies leave padding undefined
            np.testing.assert_array_equal(np.asarray(py_a[name]), np.asarray(jit_a[name]), err_msg=src)
        ran += 1
    assert ran >= 30


REC_CONST = np.array([(1, b"ab"), (-2, b"xyz"), (3, b"")], dtype=[("x", "i1"), ("y", "S3")])
REC_CONST_NONCONTIG = REC_CONST[::2]


def test_global_record_arrays_are_constants():
    f = njit(lambda i: REC_CONST[i])
    g = njit(lambda i: REC_CONST_NONCONTIG[i].x)
    h = njit(lambda i: REC_CONST[i].y)
    for i in range(3):
        got = f(i)
        assert got["x"] == REC_CONST[i]["x"] and got["y"] == REC_CONST[i]["y"]
        assert h(i) == REC_CONST[i]["y"]
    for i in range(2):
        assert g(i) == REC_CONST_NONCONTIG[i]["x"]
