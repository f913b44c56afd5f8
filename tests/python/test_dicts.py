"""Dicts in compiled code and `numba_rs.typed.Dict`, checked against CPython's dict run on
the same code (the oracle), including generated operation sequences over keys of every
supported type. NRT counts must balance after every test (conftest)."""

import pickle
import random

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, types
from numba_rs.errors import TypingError
from numba_rs.typed import Dict


def same(f, *args):
    """`f` compiled and `f` run by CPython give equal results (or the same exception)."""
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001  (the oracle's exception is the expectation)
        with pytest.raises(type(e)) as got:
            njit(f)(*args)
        assert str(got.value) == str(e)
        return
    got = njit(f)(*args)
    if isinstance(got, Dict):
        got = dict(got.items_list())
    assert got == want, (got, want)
    assert type(got) is type(want) or isinstance(want, (float, int)), (type(got), type(want))


def build_and_read(n):
    d = {}
    for i in range(n):
        d[(i * 7919) % 97] = i * 1.5
    s = 0.0
    for k in d:
        s += d[k] * k
    return len(d), s, list(d.keys())[:5], 5 in d, 96 in d


def deletes_then_reinserts(n):
    d = {}
    for i in range(n):
        d[i] = i
    for i in range(0, n, 3):
        del d[i]
    for i in range(0, n, 6):
        d[i] = -i
    return list(d.items())


def methods():
    d = {"a": 1, "bb": 2, "ccc": 3}
    out = []
    out.append(d.get("a"))
    out.append(d.get("zz") is None)
    out.append(d.get("zz", -1))
    out.append(d.setdefault("a", 10))
    out.append(d.setdefault("dd", 4))
    out.append(d.pop("bb"))
    out.append(d.pop("bb", -2))
    k, v = d.popitem()
    out.append(len(k) + v)
    e = d.copy()
    e["x"] = 99
    d.update(e)
    out.append(len(d))
    out.append(d == e)
    d.clear()
    out.append(len(d))
    out.append(bool(d))
    return out


def views():
    d = {1: 1.5, 2: 2.5, 3: 3.5}
    ks = [k for k in d.keys()]
    vs = [v for v in d.values()]
    items = [(k, v) for k, v in d.items()]
    return ks, vs, items, len(d.keys()), 2 in d.keys(), 7 in d.keys()


def comprehension(n):
    d = {i: i * i for i in range(n) if i % 2 == 0}
    return list(d.items())


def constructors():
    a = dict()
    a[1] = 2
    b = dict([(1, "x"), (2, "y")])
    c = dict(b)
    c[3] = "z"
    return list(a.items()), list(b.items()), list(c.items())


def word_count(text):
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items())


def graph_bfs(n):
    g = {}
    for i in range(n):
        g[i] = [(i * 7 + 1) % n, (i * 3 + 2) % n]
    seen = {0: 0}
    queue = [0]
    while queue:
        u = queue.pop(0)
        for v in g[u]:
            if v not in seen:
                seen[v] = seen[u] + 1
                queue.append(v)
    return len(seen), sum(seen.values())


def list_of_dicts():
    rows = []
    for i in range(4):
        rows.append({"id": i, "sq": i * i})
    return [r["sq"] for r in rows]


def dict_of_dicts():
    outer = {}
    for i in range(3):
        inner = {}
        for j in range(i + 1):
            inner[j] = float(i * j)
        outer[i] = inner
    return [len(outer[i]) for i in range(3)], outer[2][2]


def tuple_keys():
    d = {(1, "a"): 1, (2, "b"): 2}
    d[(1, "a")] = 5
    return d[(1, "a")], (2, "b") in d, (3, "c") in d, list(d.keys())


def missing_key():
    d = {1: 2}
    return d[5]


def missing_str_key():
    d = {"ab": 2}
    return d["zz"]


def del_missing():
    d = {1: 2}
    del d[3]


def popitem_empty():
    d = {1: 2}
    d.popitem()
    d.popitem()


def changed_during_iteration():
    d = {1: 2, 3: 4}
    for k in d:
        d[k + 10] = 1


@pytest.mark.parametrize(
    "f,args",
    [
        (build_and_read, (200,)),
        (deletes_then_reinserts, (100,)),
        (methods, ()),
        (views, ()),
        (comprehension, (9,)),
        (constructors, ()),
        (word_count, ("the cat saw the dog and the cat ran",)),
        (graph_bfs, (60,)),
        (list_of_dicts, ()),
        (dict_of_dicts, ()),
        (tuple_keys, ()),
        (missing_key, ()),
        (missing_str_key, ()),
        (del_missing, ()),
        (popitem_empty, ()),
        (changed_during_iteration, ()),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_against_cpython(f, args):
    same(f, *args)


def test_dict_of_arrays_and_strings_released():
    @njit
    def f(n):
        d = {}
        for i in range(n):
            d[str(i)] = np.arange(i, dtype=np.float64)
        del d["3"]
        return d["5"].sum(), len(d)

    assert f(20) == (10.0, 19)


# -- generated programs: random operation sequences over keys of every type ------------

KEY_KINDS = {
    "int": lambda r: r.randrange(-40, 40),
    "big": lambda r: r.choice([2**62, -(2**62), 2**40 + r.randrange(9), r.randrange(9)]),
    "float": lambda r: r.choice([0.5, -1.25, 3.0, 1e300, -0.0, float(r.randrange(9))]),
    "bool": lambda r: r.random() < 0.5,
    "ascii": lambda r: r.choice(["", "a", "ab", "abc", "zz", "key", "k" * 20]),
    "bmp": lambda r: r.choice(["é", "日本", "Ωmega", "a€b", "x"]),
    "astral": lambda r: r.choice(["😀", "a😀", "𝄞𝄞", "q"]),
    "tuple": lambda r: (r.randrange(4), r.choice(["a", "b"])),
    "complex": lambda r: complex(r.randrange(3), r.randrange(3)),
}


def gen_program(kind, seed):
    r = random.Random(seed)
    lines = ["def prog():", "    d = {}", "    out = []"]
    key = KEY_KINDS[kind]
    first = key(r)
    lines.append(f"    d[{first!r}] = 0")
    for i in range(60):
        k = key(r)
        op = r.choice(["set", "set", "set", "del", "get", "pop", "in", "setdefault", "popitem"])
        if op == "set":
            lines.append(f"    d[{k!r}] = {i}")
        elif op == "del":
            lines.append(f"    if {k!r} in d:\n        del d[{k!r}]")
        elif op == "get":
            lines.append(f"    out.append(d.get({k!r}, -1))")
        elif op == "pop":
            lines.append(f"    out.append(d.pop({k!r}, -2))")
        elif op == "in":
            lines.append(f"    out.append(1 if {k!r} in d else 0)")
        elif op == "setdefault":
            lines.append(f"    out.append(d.setdefault({k!r}, {i}))")
        else:
            lines.append("    if len(d) > 1:\n        out.append(d.popitem()[1])")
    lines.append("    return list(d.items()), out")
    ns = {}
    exec("\n".join(lines), ns)  # noqa: S102  (a generated test program)
    return ns["prog"]


@pytest.mark.parametrize("kind", sorted(KEY_KINDS))
@pytest.mark.parametrize("seed", [1, 2])
def test_generated_operation_sequences(kind, seed):
    prog = gen_program(kind, seed)
    want = prog()
    got = njit(prog)()
    assert got == want


def test_growth_past_many_resizes_keeps_cpython_order():
    @njit
    def f(n):
        d = {}
        for i in range(n):
            d[(i * 2654435761) % 1000003] = i
        for i in range(0, n, 2):
            del d[(i * 2654435761) % 1000003]
        return list(d.keys())

    def py(n):
        d = {}
        for i in range(n):
            d[(i * 2654435761) % 1000003] = i
        for i in range(0, n, 2):
            del d[(i * 2654435761) % 1000003]
        return list(d.keys())

    assert f(5000) == py(5000)


# -- typing errors (Numba's words) ------------------------------------------------------


def test_key_that_cannot_be_cast():
    @njit
    def f():
        d = Dict.empty(types.int32, types.float64)
        d[1] = 2.0
        return d.get(1j)

    with pytest.raises(TypingError, match="cannot safely cast complex128 to int32"):
        f()


def test_value_that_cannot_be_cast():
    @njit
    def f():
        d = {1: 1.0}
        d[2] = 1j
        return d

    with pytest.raises(TypingError, match="cannot safely cast complex128 to float64"):
        f()


def test_empty_dict_never_stored_into():
    @njit
    def f():
        d = {}
        return len(d)

    with pytest.raises(TypingError, match="imprecise type"):
        f()


# -- numba_rs.typed.Dict from Python ----------------------------------------------------


def test_typed_dict_python_api_matches_dict():
    d = Dict.empty(types.unicode_type, types.int64)
    ref = {}
    r = random.Random(5)
    for i in range(300):
        k = r.choice(["a", "bb", "ccc", "é", "😀", "k" * 9]) + str(r.randrange(30))
        op = r.random()
        if op < 0.6:
            d[k] = i
            ref[k] = i
        elif op < 0.8:
            assert (k in d) == (k in ref)
            if k in ref:
                del d[k]
                del ref[k]
        else:
            assert d.get(k, -1) == ref.get(k, -1)
    assert list(d.keys()) == list(ref.keys())
    assert list(d.values()) == list(ref.values())
    assert list(d.items()) == list(ref.items())
    assert len(d) == len(ref)
    assert d == ref
    assert d.pop("nope", 7) == 7
    with pytest.raises(KeyError):
        d["nope"]
    with pytest.raises(KeyError):
        del d["nope"]
    k, v = d.popitem()
    kr, vr = ref.popitem()
    assert (k, v) == (kr, vr)
    assert d.setdefault("new", 3) == ref.setdefault("new", 3)
    d.clear()
    assert len(d) == 0 and list(d) == []


def test_typed_dict_repr_str_and_type():
    d = Dict.empty(types.int64, types.float64)
    d[1] = 2.0
    assert repr(d) == "DictType[int64,float64]<iv=None>({1: 2.0})"
    assert str(d) == "{1: 2.0}"
    assert numba_rs.typeof(d) == types.DictType(types.int64, types.float64)
    assert d._dict_type.key_type == types.int64


def test_typed_dict_lazily_typed_and_kwargs_ctor():
    d = Dict()
    assert len(d) == 0
    d["a"] = 1.5
    assert d._dict_type == types.DictType(types.unicode_type, types.float64)
    e = Dict({"x": 1}, y=2)
    assert dict(e.items()) == {"x": 1, "y": 2}
    with pytest.raises(TypingError):
        d["b"] = 1j


def test_mutation_visible_both_ways():
    d = Dict.empty(types.int64, types.int64)
    d[1] = 10

    @njit
    def bump(d):
        d[1] += 1
        d[2] = 20
        return len(d)

    assert bump(d) == 2
    assert d[1] == 11 and d[2] == 20
    d[3] = 30

    @njit
    def total(d):
        s = 0
        for v in d.values():
            s += v
        return s

    assert total(d) == 61


def test_dict_returned_then_kept_by_python():
    @njit
    def make(n):
        d = {}
        for i in range(n):
            d[i] = str(i) * 2
        return d

    d = make(5)
    assert isinstance(d, Dict)
    assert d[3] == "33"
    assert d._refcount() == 1


def test_dict_kept_by_compiled_code_outlives_python_reference():
    @njit
    def wrap(d):
        return [d, d]

    d = Dict.empty(types.int64, types.unicode_type)
    d[1] = "x"
    pair = wrap(d)
    del d
    assert pair[0][1] == "x"
    pair[0][2] = "y"
    assert pair[1][2] == "y"


def test_arrays_and_strings_stored_from_python():
    d = Dict.empty(types.unicode_type, types.float64[:])
    name = "".join(["ab", "cd"])  # a string made at run time
    d[name] = np.arange(4.0)
    del name

    @njit
    def s(d):
        return d["abcd"].sum()

    assert s(d) == 6.0
    got = d["abcd"]
    got[0] = 100.0
    assert s(d) == 106.0  # the stored array is shared, not copied


def test_pickle_and_copy_round_trip():
    d = Dict.empty(types.unicode_type, types.UniTuple(types.int64, 2))
    d["a"] = (1, 2)
    d["b"] = (3, 4)
    e = pickle.loads(pickle.dumps(d))
    assert e == d and e._dict_type == d._dict_type
    c = d.copy()
    c["z"] = (0, 0)
    assert "z" not in d and len(c) == 3


def test_typed_dict_from_an_objmode_block_outlives_its_python_object():
    dict_t = types.DictType(types.unicode_type, types.int64)

    @njit
    def f():
        with numba_rs.objmode(d=dict_t):
            d = Dict.empty(types.unicode_type, types.int64)
            d["a"] = 1
        d["b"] = 2
        return d

    assert dict(f().items_list()) == {"a": 1, "b": 2}


def test_dicts_local_to_prange_iterations():
    @njit(parallel=True)
    def f(n):
        out = np.zeros(n)
        for i in numba_rs.prange(n):
            d = {}
            for j in range(i + 1):
                d[j] = float(j)
            s = 0.0
            for v in d.values():
                s += v
            out[i] = s
        return out

    want = np.array([sum(range(i + 1)) for i in range(12)], dtype=np.float64)
    assert np.array_equal(f(12), want)


# -- dicts with string-constant keys and values of different types ----------------------


def literal_dict_reads():
    ld = {"a": 1, "b": 2j, "c": "d"}
    return (ld["a"], ld["b"], ld["c"]), len(ld), "b" in ld, "f" in ld


def literal_dict_views():
    ld = {"a": 2j, "c": "d", "f": (1, 2.5)}
    return ld.items(), ld.values(), [k for k in ld.keys()]


def literal_dict_repeated_key():
    ld = {"a": 1, "b": "x", "a": "y"}  # noqa: F601  (Python keeps the last value)
    return ld["a"], len(ld), list(ld.keys())


def literal_dict_branches(x):
    if x > 0:
        a = {"a": 2j, "c": "d"}
    else:
        a = {"a": 5j, "c": "CAT"}
    return a["c"], a["a"]


@pytest.mark.parametrize(
    "f,args",
    [
        (literal_dict_reads, ()),
        (literal_dict_views, ()),
        (literal_dict_repeated_key, ()),
        (literal_dict_branches, (1,)),
        (literal_dict_branches, (-1,)),
    ],
    ids=lambda x: getattr(x, "__name__", str(x)),
)
def test_literal_str_key_dicts_against_cpython(f, args):
    got = njit(f)(*args)
    want = f(*args)
    if f is literal_dict_views:
        # CPython's views are not tuples: compare their items.
        want = (tuple(want[0]), tuple(want[1]), want[2])
    assert got == want


@pytest.mark.parametrize(
    "stmt,message",
    [
        ("ld['a'] = 12", "Cannot mutate a literal dictionary"),
        ("del ld['a']", "Cannot mutate a literal dictionary"),
        ("ld.pop('a')", "Cannot mutate a literal dictionary"),
        ("ld.clear()", "Cannot mutate a literal dictionary"),
        ("ld.get('a')", "Cannot get{item}() on a literal dictionary"),
    ],
)
def test_literal_str_key_dict_is_read_only(stmt, message):
    ns = {}
    exec(f"def f():\n    ld = {{'a': 1, 'b': 'x'}}\n    {stmt}\n", ns)  # noqa: S102
    with pytest.raises(TypingError) as e:
        njit(ns["f"])()
    assert message in str(e.value)


def test_literal_str_key_dict_read_by_a_variable_key():
    @njit
    def f(k):
        ld = {"a": 2j, "c": "d"}
        return ld[k]

    with pytest.raises(TypingError, match=r"Cannot get\{item\}\(\) on a literal dictionary"):
        f("a")


def literal_dict_numba_rule():
    # Numba's rule: the values are one type when each converts safely to the first's;
    # float64 does not convert safely to int64, so each value keeps its own type.
    ld = {"a": 1, "b": 2.0}
    return ld["a"], ld["b"]


def literal_dict_nested():
    a = {"a": {"b1": 10, "b2": "string"}, "n": 3}
    inner = a["a"]
    return inner["b2"], inner["b1"] + a["n"], len(inner)


def literal_dict_single_list_value():
    # A single list value cannot go in a typed dict (Numba): a literal dict holds it.
    z = {"A": [1, 2, 3]}
    z["A"].append(4)
    return z["A"]


@pytest.mark.parametrize(
    "f", [literal_dict_numba_rule, literal_dict_nested, literal_dict_single_list_value]
)
def test_literal_str_key_dict_values_keep_their_types(f):
    got, want = njit(f)(), f()
    assert got == want
    # CPython's value types, not one unified type (1 stays an int beside 2.0).
    assert [type(x) for x in got] == [type(x) for x in want]


_LITERAL_VALUES = ["1", "-7", "2.5", "3j", "'txt'", "(1, 2.5)", "True", "n", "n * 0.5", "s"]


@pytest.mark.parametrize("seed", range(6))
def test_generated_string_key_displays(seed):
    # Random displays of string-constant keys (some repeated) over values of several
    # kinds, constants and run-time values; read back every key, `len`, `in` and the
    # views, against CPython. Homogeneous ones become typed dicts, the rest literal dicts.
    rng = random.Random(seed)
    for _ in range(8):
        keys = [rng.choice("abcdef") for _ in range(rng.randint(1, 6))]
        items = ", ".join(f"'{k}': {rng.choice(_LITERAL_VALUES)}" for k in keys)
        reads = ", ".join(f"ld['{k}']" for k in dict.fromkeys(keys))
        src = (
            "def f(n, s):\n"
            f"    ld = {{{items}}}\n"
            f"    return ({reads},), len(ld), 'a' in ld, 'z' in ld, [k for k in ld.keys()]\n"
        )
        ns = {}
        exec(src, ns)  # noqa: S102
        f = ns["f"]
        want = f(4, "run")
        got = njit(f)(4, "run")
        assert got == want, src
        # Each value keeps CPython's type (a literal dict), or all share one (a typed
        # dict: Numba's rule converted them to the first value's type).
        kinds = [type(x) for x in got[0]]
        assert kinds == [type(x) for x in want[0]] or len(set(kinds)) == 1, src


def test_homogeneous_string_key_display_is_a_typed_dict():
    @njit
    def f():
        d = {"a": 1.5, "b": 2}  # int64 converts safely to float64: one value type
        d["c"] = 3.25
        return d

    got = f()
    assert isinstance(got, Dict)
    assert dict(got) == {"a": 1.5, "b": 2.0, "c": 3.25}
    assert got._dict_type.value_type == types.float64


def test_overload_reads_a_literal_dict_literal_value():
    from numba_rs.extending import overload

    seen = {}

    def bar(x):
        pass

    @overload(bar)
    def ol_bar(x):
        seen["type"] = x
        return lambda x: len(x)

    e = 5

    @njit
    def foo(y):
        ld = {"a": 1, "b": 2j, "c": "d", "d": e, "y": y}
        return bar(ld)

    assert foo(2.5) == 5
    t = seen["type"]
    assert isinstance(t, types.LiteralStrKeyDict)
    assert not isinstance(t, types.BaseTuple)
    # Constants keep their literal types; run-time values their own.
    assert t.literal_value == {
        types.literal("a"): types.literal(1),
        types.literal("b"): types.complex128,
        types.literal("c"): types.literal("d"),
        types.literal("d"): types.literal(5),
        types.literal("y"): types.float64,
    }
    assert str(t) == (
        "LiteralStrKey[Dict]({Literal[str](a): Literal[int](1), Literal[str](b): "
        "complex128, Literal[str](c): Literal[str](d), Literal[str](d): Literal[int](5), "
        "Literal[str](y): float64})"
    )


def test_literal_str_key_dict_does_not_escape_to_python():
    @njit
    def foo():
        return {"a": 2j, "c": "d"}

    # Numba's words and exception class: the dict has no Python object.
    with pytest.raises(TypeError, match="cannot convert native LiteralStrKey"):
        foo()


def test_python_lists_stored_in_a_typed_dict_are_owned_copies():
    d = Dict()
    d[1] = ["a" + str(i) for i in range(3)]  # strings made at run time, then dropped
    assert d._dict_type.value_type == types.List(types.unicode_type)
    with pytest.raises(TypingError):
        d[2] = [["x"], ["y", "z"]]  # lists of lists are not lists of strings

    @njit
    def grow(d):
        d[1].append("new")
        d[3] = ["p", "q"]  # a written-out list stored into a dict of lists
        return len(d[1])

    assert grow(d) == 4
    assert d[1] == ["a0", "a1", "a2", "new"] and d[3] == ["p", "q"]


def test_sets_are_not_dict_values_as_in_numba():
    d = Dict()
    with pytest.raises(TypingError, match="as value is forbidden"):
        d["k"] = {1, 2}

    @njit
    def f():
        d = {}
        d[1] = {1, 2}
        return len(d)

    with pytest.raises(TypingError, match="as value is forbidden"):
        f()
