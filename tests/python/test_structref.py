"""`numba_rs.experimental.structref` (issue 46): StructRef types, `register`, `new`,
`define_constructor` / `define_boxing` / `define_proxy`, fields read and assigned in
compiled code, overloads on a StructRef class, identity, types referring to themselves,
Numba's errors. Oracles: NumPy and Python's own arithmetic on the same values, and
Numba's documented names and messages. NRT counts balance after every test (conftest)."""

import gc
import pickle
import random

import numpy as np
import pytest

from numba_rs import njit, typed, typeof, types
from numba_rs.errors import TypingError
from numba_rs.experimental import structref
from numba_rs.extending import overload_attribute, overload_method
from numba_rs.runtime import rtsys


@structref.register
class SimplerType(types.StructRef):
    pass


simpler_ty = SimplerType(fields=[("values", types.intp[:]), ("counter", types.intp)])
structref.define_boxing(SimplerType, structref.StructRefProxy)


@structref.register
class PairType(types.StructRef):
    pass


class Pair(structref.StructRefProxy):
    def __new__(cls, values, counter):
        return structref.StructRefProxy.__new__(cls, values, counter)

    @property
    def values(self):
        return get_values(self)

    @values.setter
    def values(self, val):
        set_values(self, val)

    @property
    def counter(self):
        return get_counter(self)

    def __hash__(self):
        return compute(self)


structref.define_proxy(Pair, PairType, ["values", "counter"])


@njit
def make_simpler(values, counter):
    st = structref.new(simpler_ty)
    init(st, values, counter)
    return st


@njit
def init(st, values, counter):
    st.values = values
    st.counter = counter


@njit
def by_new(vs, ctr):
    st = make_simpler(vs, counter=ctr)
    st.values += st.values
    st.counter *= ctr
    return st


@njit
def by_class(vs, ctr):
    return Pair(values=vs, counter=ctr)


@njit
def get_values(st):
    return st.values


@njit
def set_values(st, val):
    st.values = val


@njit
def get_counter(st):
    return st.counter


@njit
def compute(st):
    return st.values + st.counter


@overload_method(PairType, "scaled")
def _pair_scaled(self, arg):
    def impl(self, arg):
        return self.values * arg + self.counter

    return impl


@overload_attribute(PairType, "both")
def _pair_both(self):
    def get(self):
        return self.values, self.counter

    return get


def test_type_objects():
    sr = types.StructRef([("a", types.int64), ("b", types.float64)])
    assert sr.field_dict["a"] == types.int64 and sr.field_dict["b"] == types.float64
    assert dict(sr.field_dict) == {"a": types.int64, "b": types.float64}
    # Numba's name, and one type per class and fields.
    assert str(simpler_ty) == (
        "numba.SimplerType(('values', array(int64, 1d, A)), ('counter', int64))"
    )
    assert SimplerType([("values", types.intp[:]), ("counter", types.intp)]) is simpler_ty
    assert SimplerType([("counter", types.intp)]) != simpler_ty
    assert str(SimplerType([("counter", types.intp)])) == "numba.SimplerType(('counter', int64),)"
    assert isinstance(simpler_ty, SimplerType) and isinstance(simpler_ty, types.StructRef)
    with pytest.raises(ValueError, match="expecting a str for field name"):
        types.StructRef([(1, types.int64)])
    with pytest.raises(ValueError, match="expecting a Numba Type for field type"):
        types.StructRef([("a", 123)])
    with pytest.raises(TypeError):
        sr.field_dict["c"] = types.int64  # read-only


def test_invalid_uses():
    with pytest.raises(ValueError, match="cannot register"):
        structref.register(types.StructRef)
    with pytest.raises(ValueError, match="cannot register"):
        structref.define_boxing(types.StructRef, Pair)
    with pytest.raises(TypeError, match="StructRefProxy"):
        structref.define_boxing(PairType, dict)
    with pytest.raises(NotImplementedError):
        structref.new(simpler_ty)  # compiled code only


def test_new_and_fields():
    vs = np.arange(10, dtype=np.intp)
    doubled = vs + vs
    got = by_new(vs, 13)
    # Boxed as the plain proxy class, not Pair: it has no attributes from Python.
    assert type(got) is structref.StructRefProxy
    assert not isinstance(got, Pair)
    np.testing.assert_array_equal(get_values(got), doubled)
    np.testing.assert_array_equal(compute(got), doubled + 13 * 13)
    assert get_counter(got) == 169
    with pytest.raises(AttributeError, match="values"):
        got.values
    with pytest.raises(AttributeError, match="counter"):
        got.counter
    # The record holds the array itself: the argument was doubled in place.
    np.testing.assert_array_equal(vs, np.arange(10) * 2)


def test_proxy_class():
    vs = np.arange(10, dtype=np.float64)
    got = by_class(vs, 11)
    assert isinstance(got, Pair) and isinstance(got, structref.StructRefProxy)
    np.testing.assert_array_equal(got.values, vs)
    assert got.counter == 11
    np.testing.assert_array_equal(compute(got), vs + 11)
    assert got._type == typeof(got)
    assert str(typeof(got)) == (
        "numba.PairType(('values', array(float64, 1d, C)), ('counter', int64))"
    )
    # Made from Python through the compiled constructor too.
    p = Pair(np.ones(3), 2)
    np.testing.assert_array_equal(compute(p), np.full(3, 3.0))
    p.values = np.zeros(3)
    np.testing.assert_array_equal(p.values, np.zeros(3))
    assert hash(Pair(1, 2)) == 3  # __hash__ through compiled code, no typeof recursion


def test_generic_constructor():
    @njit
    def mixed(x, y, m, n):
        return Pair(x, y), Pair(m, n)

    a, b = mixed(1, 2.3, 3.4j, (4,))
    assert (a.values, a.counter, b.values, b.counter) == (1, 2.3, 3.4j, (4,))
    assert str(typeof(b)) == "numba.PairType(('values', complex128), ('counter', UniTuple(int64 x 1)))"
    s = Pair("text", "more")
    assert (s.values, s.counter) == ("text", "more")


def test_in_typed_dict():
    td = typed.Dict()
    td["a"] = Pair(1, 2.3)
    assert (td["a"].values, td["a"].counter) == (1, 2.3)
    td["a"] = Pair(2, 3.3)
    td["a"].values += 10  # mutates the record the dict holds
    assert (td["a"].values, td["a"].counter) == (12, 3.3)
    td["b"] = Pair(4, 5.6)
    assert len(td) == 2
    with pytest.raises(TypingError, match=r"Cannot cast numba.PairType"):
        td["c"] = Pair(2.3, 1)


def test_overloads():
    @njit
    def method(x):
        obj = Pair(np.arange(10, dtype=np.float64), 11)
        return obj.scaled(x)

    np.testing.assert_array_equal(method(3), np.arange(10.0) * 3 + 11)

    @njit
    def attribute():
        obj = Pair(np.arange(4, dtype=np.float64), 11)
        return obj.both

    vs, c = attribute()
    np.testing.assert_array_equal(vs, np.arange(4.0))
    assert c == 11


def test_identity():
    @njit
    def ident():
        c = Pair(3, 4)
        d = Pair(3, 4)
        e = c
        return c is c, c is d, c is e, c is not d

    assert ident() == (True, False, True, True)

    @njit
    def same(a, b):
        return a is b

    p, q = Pair(1, 2), Pair(1, 2)
    assert same(p, p) and not same(p, q)


def test_setattr_casts():
    @njit
    def f(x):
        p = Pair(1.5, 2)  # values: float64, counter: int64
        p.values = x  # an int cast to the field's float64
        return p.values, p

    v, p = f(7)
    assert v == 7.0 and isinstance(v, float)
    assert p.values == 7.0

    @njit
    def bad():
        p = Pair(1, 2)
        p.values = "text"
        return p

    with pytest.raises(TypingError):
        bad()


def test_unknown_field():
    @njit
    def f():
        p = Pair(1, 2)
        return p.nothing

    with pytest.raises(TypingError, match="nothing"):
        f()


@structref.register
class NodeType(types.StructRef):
    def preprocess_fields(self, fields):
        # Numba's pattern for a type that refers to itself.
        self.name = f"numba.NodeType#{id(self)}"
        return (("value", types.Optional(types.int64)), ("parent", types.Optional(self)))


class Node(structref.StructRefProxy):
    def __new__(cls, value, parent):
        return structref.StructRefProxy.__new__(cls, value, parent)

    @property
    def value(self):
        return node_value(self)

    @property
    def parent(self):
        return node_parent(self)


@njit
def node_value(n):
    return n.value


@njit
def node_parent(n):
    return n.parent


structref.define_proxy(Node, NodeType, ["value", "parent"])


@overload_method(NodeType, "flip")
def _node_flip(self):
    def impl(self):
        if self.value is not None:
            self.value = -self.value

    return impl


@overload_attribute(NodeType, "prop")
def _node_prop(self):
    def get(self):
        return self.value, self.parent

    return get


def test_self_referring_type():
    t = NodeType(fields=(("value", types.Any), ("parent", types.Any)))
    assert t.field_dict["value"] == types.Optional(types.int64)
    assert t.field_dict["parent"] == types.Optional(t)

    @njit
    def chain(x):
        poly = Node(None, None)
        p_poly = Node(None, None)
        poly.value = x
        poly.parent = p_poly
        p_poly.value = x
        poly.flip()
        poly.parent.flip()
        return poly.parent.value, poly.value, poly.prop[0]

    assert chain(3) == (-3, -3, -3)

    @njit
    def prop():
        return Node(5, None).prop[0]

    assert prop() == 5
    n = Node(5, None)
    assert n.value == 5 and n.parent is None


def test_lifetime_python_and_compiled():
    """A record holding arrays is released when the last reference goes, whichever side
    holds it last."""
    gc.collect()
    before = rtsys.get_allocation_stats()
    p = Pair(np.arange(1000.0), np.ones(5))
    q = p  # another Python reference to the same record

    @njit
    def keep(a, b):
        return Pair(a, b)

    outer = keep(p, 3)  # a record holding the first
    del p
    np.testing.assert_array_equal(get_values(outer).values, np.arange(1000.0))
    del q
    mid = rtsys.get_allocation_stats()
    assert mid.alloc > mid.free  # `outer` keeps the first record alive
    del outer
    gc.collect()
    after = rtsys.get_allocation_stats()
    assert after.alloc - before.alloc == after.free - before.free


def test_pickling_refused():
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(Pair(1, 2))


def _generated_program(rng):
    """A random field list with values, and a random sequence of field updates."""
    kinds = [
        (types.int64, lambda: rng.randint(-100, 100)),
        (types.float64, lambda: rng.uniform(-5, 5)),
        (types.complex128, lambda: complex(rng.randint(-3, 3), rng.randint(-3, 3))),
        (types.unicode_type, lambda: rng.choice(["", "a", "héllo", "x" * 20])),
        (types.boolean, lambda: rng.random() < 0.5),
    ]
    n = rng.randint(1, 5)
    chosen = [rng.choice(kinds) for _ in range(n)]
    names = [f"f{i}" for i in range(n)]
    initial = [make() for _, make in chosen]
    updates = [(rng.randrange(n), None) for _ in range(rng.randint(0, 6))]
    updates = [(i, chosen[i][1]()) for i, _ in updates]
    return names, [t for t, _ in chosen], initial, updates


@structref.register
class GenType(types.StructRef):
    pass


class Gen(structref.StructRefProxy):
    pass


structref.define_boxing(GenType, Gen)


@pytest.mark.parametrize("seed", range(12))
def test_generated_records(seed):
    """Records of random field types, built with `new`, updated field by field in
    compiled code, checked against a Python dict run through the same updates."""
    rng = random.Random(seed)
    names, tys, initial, updates = _generated_program(rng)
    ty = GenType(list(zip(names, tys)))
    lines = ["def build(" + ", ".join(names) + ", upd):", "    st = new(ty)"]
    lines += [f"    st.{n} = {n}" for n in names]
    for k, (i, _) in enumerate(updates):
        lines.append(f"    st.{names[i]} = upd[{k}]")
    lines.append("    return st, (" + "".join(f"st.{n}, " for n in names) + ")")
    ns = {"new": structref.new, "ty": ty}
    exec("\n".join(lines), ns)  # noqa: S102  (generated from fixed names)
    build = njit(ns["build"])
    upd = tuple(v for _, v in updates)
    expect = dict(zip(names, initial))
    for i, v in updates:
        expect[names[i]] = v
    st, got = build(*initial, upd)
    assert isinstance(st, Gen)
    assert typeof(st) == ty
    assert got == tuple(expect[n] for n in names)


def test_drop_in_imports(tmp_path):
    """Under `python -m numba_rs`, Numba's import paths give numba-rs's structref,
    jitclass and typed containers."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent('''
        from numba import njit
        from numba.core import types
        from numba.experimental import structref, jitclass
        from numba.typed import List

        @structref.register
        class PtType(types.StructRef):
            pass

        class Pt(structref.StructRefProxy):
            def __new__(cls, x, y):
                return structref.StructRefProxy.__new__(cls, x, y)

            @property
            def x(self):
                return get_x(self)

        @njit
        def get_x(p):
            return p.x

        structref.define_proxy(Pt, PtType, ["x", "y"])

        @jitclass([("n", types.int64)])
        class C:
            def __init__(self, n):
                self.n = n

        @njit
        def f():
            items = List()
            items.append(Pt(1.5, 2))
            return items[0].x + C(3).n

        print(f(), Pt(4, 5).x, type(Pt(4, 5)).__mro__[1].__module__)
    '''))
    out = subprocess.run([sys.executable, "-m", "numba_rs", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4.5", "4", "numba_rs.experimental.structref"]
