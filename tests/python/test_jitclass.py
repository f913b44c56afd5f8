"""`numba_rs.experimental.jitclass` (issue 46, first part): fields, `__init__`, methods,
properties, instances made in Python and in compiled code and shared by reference. The
oracle is the same class run by CPython without the decorator; NRT counts balance after
every test (conftest)."""

import gc
import random

import numpy as np
import pytest

from numba_rs import njit, types
from numba_rs.errors import TypingError
from numba_rs.experimental import jitclass
from numba_rs.runtime import rtsys
from numba_rs.typed import List

SPEC = [
    ("n", types.int64),
    ("total", types.float64),
    ("hist", types.float64[:]),
    ("label", types.unicode_type),
    ("seen", types.boolean),
]


class Acc:
    def __init__(self, n, label="acc"):
        self.n = n
        self.total = 0.0
        self.hist = np.zeros(n)
        self.label = label
        self.seen = False

    def add(self, i, v):
        self.total += v
        self.hist[i % self.n] += v
        self.seen = True
        return self.total

    def scaled(self, k):
        return self.total * k + self.n

    def relabel(self, suffix):
        self.label = self.label + suffix
        return len(self.label)

    def twice(self, i, v):
        # Methods calling methods.
        self.add(i, v)
        return self.add(i + 1, v)

    @property
    def mean(self):
        return self.total / self.n


JAcc = jitclass(SPEC)(Acc)


def state(o):
    return (o.n, o.total, list(o.hist), o.label, o.seen)


def test_fields_methods_and_properties_against_cpython():
    rng = random.Random(7)
    py, jit = Acc(5, "x"), JAcc(5, "x")
    assert state(jit) == state(py)
    for _ in range(200):
        op = rng.choice(["add", "scaled", "relabel", "twice"])
        if op == "add" or op == "twice":
            i, v = rng.randrange(10), rng.uniform(-2, 2)
            assert getattr(jit, op)(i, v) == getattr(py, op)(i, v)
        elif op == "scaled":
            k = rng.uniform(-3, 3)
            assert jit.scaled(k) == py.scaled(k)
        else:
            s = rng.choice(["a", "é", "日", "😀"])
            assert jit.relabel(s) == py.relabel(s)
    assert state(jit) == state(py)
    assert jit.mean == py.mean
    assert isinstance(jit, JAcc) and not isinstance(py, JAcc)


def test_attribute_writes_from_python_are_seen_by_compiled_code():
    o = JAcc(3)
    o.total = 10.0
    o.label = "from python"
    o.hist = np.arange(3.0)

    @njit
    def read(a):
        return a.total, a.label, a.hist.sum(), a.mean

    assert read(o) == (10.0, "from python", 3.0, 10.0 / 3)
    with pytest.raises(TypeError):
        o.total = "not a float"


@njit
def make_and_use(k):
    a = JAcc(k, "made")
    a.add(0, 1.5)
    a.twice(1, 2.0)
    return a


@njit
def bump(a, v):
    a.total += v
    a.hist[0] = -1.0
    return a.total


def test_instances_made_in_compiled_code_are_shared_by_reference():
    a = make_and_use(4)
    py = Acc(4, "made")
    py.add(0, 1.5)
    py.twice(1, 2.0)
    assert state(a) == state(py)
    assert bump(a, 100.0) == py.total + 100.0
    # The same record: the change made in compiled code is seen from Python.
    assert a.total == py.total + 100.0 and a.hist[0] == -1.0

    @njit
    def identity(x):
        return x

    b = identity(a)
    b.total = 1.0
    assert a.total == 1.0


def test_default_arguments_and_keyword_calls():
    assert JAcc(2).label == "acc"
    assert JAcc(2, label="kw").label == "kw"

    @njit
    def build():
        return JAcc(3).label + JAcc(3, "b").label

    assert build() == "accb"


def test_instances_in_lists_and_typed_lists():
    @njit
    def many(n):
        out = [JAcc(i + 1) for i in range(n)]
        for i in range(n):
            out[i].add(i, float(i))
        return out

    got = many(4)
    assert [o.total for o in got] == [0.0, 1.0, 2.0, 3.0]
    tl = List()
    for o in got:
        tl.append(o)

    @njit
    def total(lst):
        s = 0.0
        for o in lst:
            s += o.total
        return s

    assert total(tl) == 6.0


def test_array_fields_outlive_the_arrays_they_came_from():
    # An array argument is borrowed by compiled code; stored into a field (or a typed
    # list) it must keep its NumPy array alive.
    @njit
    def store(a, arr):
        a.hist = arr

    o = JAcc(2)
    store(o, np.arange(4.0) * 3)
    gc.collect()
    _ = [np.full(4, 7.0) for _ in range(50)]
    assert list(o.hist) == [0.0, 3.0, 6.0, 9.0]

    @njit
    def append(lst, arr):
        lst.append(arr)

    lst = List.empty_list(types.float64[::1])
    append(lst, np.arange(3.0))
    gc.collect()
    _ = [np.full(3, 7.0) for _ in range(50)]
    assert list(lst[0]) == [0.0, 1.0, 2.0]


def test_an_instance_releases_its_fields_with_its_last_reference():
    before = rtsys.get_allocation_stats()
    o = make_and_use(1000)
    arr = o.hist
    del o
    gc.collect()
    mid = rtsys.get_allocation_stats()
    # The array is still alive through `arr`: the record is gone, the array is not.
    assert mid.mi_alloc - before.mi_alloc == mid.mi_free - before.mi_free + 1
    assert arr.shape == (1000,)
    del arr
    after = rtsys.get_allocation_stats()
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def test_errors_name_the_problem():
    @njit
    def bad_field(a):
        a.nope = 1

    with pytest.raises(TypingError, match="no such field"):
        bad_field(JAcc(1))

    @njit
    def bad_type(a):
        a.total = "text"

    with pytest.raises(TypingError, match="Cannot cast"):
        bad_type(JAcc(1))

    class Shared:
        constant = 3

        def __init__(self):
            pass

    with pytest.raises(TypeError, match="class members are not yet supported: constant"):
        jitclass([])(Shared)
    class Plain:
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="spec values should be Numba type instances"):
        jitclass([("x", int)])(Plain)
    with pytest.raises(TypeError, match="cannot subclass from a jitclass"):
        class Sub(JAcc):
            pass
    with pytest.raises(TypeError, match="pickle"):
        import pickle

        pickle.dumps(JAcc(1))


def test_annotations_give_fields():
    @jitclass
    class Point:
        x: types.float64
        y: types.float64

        def __init__(self, x, y):
            self.x = x
            self.y = y

        def norm2(self):
            return self.x * self.x + self.y * self.y

    p = Point(3.0, 4.0)
    assert p.norm2() == 25.0
    from numba_rs import typeof

    assert Point.class_type.instance_type == typeof(p)


VEC_SRC = """
class Vec2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec2(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vec2(self.x * k, self.y * k)

    def __rmul__(self, k):
        return Vec2(self.x * k, self.y * k)

    def __iadd__(self, other):
        self.x += other.x
        self.y += other.y
        return self

    def __neg__(self):
        return Vec2(-self.x, -self.y)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def __lt__(self, other):
        return self.x * self.x + self.y * self.y < other.x * other.x + other.y * other.y

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.x if i == 0 else self.y

    def __setitem__(self, i, v):
        if i == 0:
            self.x = v
        else:
            self.y = v

    def __contains__(self, v):
        return self.x == v or self.y == v

    def __abs__(self):
        return (self.x * self.x + self.y * self.y) ** 0.5

    @staticmethod
    def unit():
        return 1.0
"""


def build_vec(jit):
    """The class run by CPython, or its jitclass; its methods see whichever it is by
    name, as with the decorator."""
    ns = {"__name__": __name__}
    exec(VEC_SRC, ns)  # noqa: S102
    if jit:
        ns["Vec2"] = jitclass([("x", types.float64), ("y", types.float64)])(ns["Vec2"])
    return ns["Vec2"]


Vec2, JVec2 = build_vec(False), build_vec(True)


def make_vec_ops(V):
    def vec_ops(a, b):
        u = V(a, b)
        w = V(b, -a)
        s = u + w
        s += u
        t = 2.0 * s * 3.0
        n = -t
        n[1] = 5.0
        return (t.x, t.y, n[0], n[1], u == V(a, b), u < w, len(u), a in u, 9.5 in u,
                abs(u), u.unit())

    return vec_ops


@pytest.mark.parametrize("a,b", [(1.0, 2.0), (-3.5, 0.25), (0.0, 0.0)])
def test_dunder_methods_in_compiled_code_against_cpython(a, b):
    want = make_vec_ops(Vec2)(a, b)
    got = njit(make_vec_ops(JVec2))(a, b)
    assert got == want
    # And from Python, on the proxies.
    assert make_vec_ops(JVec2)(a, b) == want


def test_truth_falls_back_to_len_then_true():
    @jitclass([("n", types.int64)])
    class Sized:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

    @jitclass([("n", types.int64)])
    class Plain:
        def __init__(self, n):
            self.n = n

    @njit
    def truth(o):
        return bool(o), (1 if o else 0)

    assert truth(Sized(0)) == (False, 0)
    assert truth(Sized(3)) == (True, 1)
    assert truth(Plain(0)) == (True, 1)


def test_private_fields_are_mangled_as_python_does():
    @jitclass([("__secret", types.int64), ("__dunder__", types.int64)])
    class Box:
        def __init__(self, v):
            self.__secret = v
            self.__dunder__ = v + 1

        def peek(self):
            return self.__secret + self.__dunder__

    b = Box(4)
    assert b.peek() == 9
    assert b._Box__secret == 4 and b.__dunder__ == 5


def test_unsupported_dunders_are_refused_with_numbas_words():
    class Ctx:
        def __init__(self):
            pass

        def __enter__(self):
            return self

    with pytest.raises(TypeError, match="Method '__enter__' is not supported."):
        jitclass([])(Ctx)


TREE_SRC = """
class Node:
    def __init__(self, value):
        self.value = value
        self.left = None
        self.right = None

    def insert(self, v):
        node = self
        while True:
            if v < node.value:
                if node.left is None:
                    node.left = Node(v)
                    return
                node = node.left
            else:
                if node.right is None:
                    node.right = Node(v)
                    return
                node = node.right


def total(node):
    if node is None:
        return 0
    return node.value + total(node.left) + total(node.right)


def depth(node):
    if node is None:
        return 0
    return 1 + max(depth(node.left), depth(node.right))


def build(values):
    root = Node(values[0])
    for v in values[1:]:
        root.insert(v)
    return root, total(root), depth(root)
"""


def build_tree_module(jit):
    """The tree run by CPython, or with `Node` a jitclass whose children are optional
    nodes of its own type (a deferred type) and the functions compiled."""
    from numba_rs import deferred_type, optional

    ns = {"__name__": __name__}
    exec(TREE_SRC, ns)  # noqa: S102
    if jit:
        node_type = deferred_type()
        spec = [("value", types.int64), ("left", optional(node_type)),
                ("right", optional(node_type))]
        ns["Node"] = jitclass(spec)(ns["Node"])
        node_type.define(ns["Node"].class_type.instance_type)
        for f in ("total", "depth", "build"):
            ns[f] = njit(ns[f])
    return ns


@pytest.mark.parametrize("seed", range(3))
def test_self_referential_classes_through_a_deferred_type(seed):
    rng = random.Random(seed)
    values = [rng.randrange(1000) for _ in range(300)]
    py, jit = build_tree_module(False), build_tree_module(True)
    want = py["build"](values)
    got = jit["build"](values)
    assert got[1:] == want[1:]
    root = got[0]
    # Walked from Python: the same tree.
    assert root.value == values[0]
    assert (root.left.value if root.left is not None else None) == (
        want[0].left.value if want[0].left is not None else None
    )
    # A None child read through: Numba's TypeError.
    @njit
    def deep_left(n):
        return n.left.left.left.left.left.left.left.left.left.left.value

    leaf = jit["Node"](5)
    with pytest.raises(TypeError, match="got None"):
        deep_left(leaf)


def test_declaration_errors_and_docstrings_as_numba():
    class WithConstant:
        constant = 123

        def __init__(self):
            pass

    with pytest.raises(TypeError, match="class members are not yet supported: constant"):
        jitclass([])(WithConstant)

    class Shadow:
        def __init__(self):
            pass

        def m(self):
            pass

    with pytest.raises(NameError, match="name shadowing: m"):
        jitclass([("m", types.int64)])(Shadow)
    with pytest.raises(TypeError, match="spec keys should be strings, got 1"):
        jitclass([(1, types.int64)])(Shadow)
    with pytest.raises(TypeError, match="spec values should be Numba type instances"):
        jitclass([("x", object())])(Shadow)

    @jitclass
    class Doc:
        "Class doc"

        def __init__(self):
            "init doc"

        def foo(self):
            "foo doc"

    assert (Doc.__doc__, Doc.__init__.__doc__, Doc.foo.__doc__) == (
        "Class doc", "init doc", "foo doc")
    with pytest.raises(TypeError, match="cannot subclass from a jitclass"):
        class Sub(Doc):
            pass


def test_annotations_from_bases_and_typing_containers():
    import typing

    class Base:
        x: int

    @jitclass
    class Derived(Base):
        y: typing.List[float]

        def __init__(self, v):
            self.x = v
            self.y = List.empty_list(types.float64)
            self.y.append(v * 0.5)

    d = Derived(4)
    assert d.x == 4 and list(d.y) == [2.0]
    assert Derived._numba_rs_fields["y"] == types.ListType(types.float64)


def test_property_setters_in_compiled_code_and_python():
    src = """
class Temp:
    def __init__(self, c):
        self.c = c

    @property
    def f(self):
        return self.c * 9.0 / 5.0 + 32.0

    @f.setter
    def f(self, v):
        self.c = (v - 32.0) * 5.0 / 9.0


def warm(t, by):
    t.f = t.f + by
    return t.c
"""
    py_ns, jit_ns = {}, {}
    exec(src, py_ns)  # noqa: S102
    exec(src, jit_ns)  # noqa: S102
    jit_ns["Temp"] = jitclass([("c", types.float64)])(jit_ns["Temp"])
    warm = njit(jit_ns["warm"])
    for by in (0.0, 9.0, -40.0):
        a, b = py_ns["Temp"](10.0), jit_ns["Temp"](10.0)
        assert warm(b, by) == py_ns["warm"](a, by)
        b.f = 212.0  # from Python too
        assert b.c == 100.0


def test_reflected_lists_of_instances_own_their_items():
    # A Python list of jitclass objects passed to compiled code: the native list takes
    # a reference per item (the objects' MemInfos were borrowed; releasing the list
    # used to drop references it never took).
    @njit
    def swap(xs):
        xs[1], xs[0] = xs[0], xs[1]
        return xs

    items = [JAcc(n + 1) for n in range(4)]
    for i, o in enumerate(items):
        o.total = float(i)
    got = swap(list(items))
    assert [o.total for o in got] == [1.0, 0.0, 2.0, 3.0]
    del got
    gc.collect()
    assert [o.total for o in items] == [0.0, 1.0, 2.0, 3.0]


def test_methods_of_optional_instances():
    from numba_rs import deferred_type, optional

    link = deferred_type()

    @jitclass([("v", types.int64), ("next", optional(link))])
    class Link:
        def __init__(self, v):
            self.v = v
            self.next = None

        def get(self):
            return self.v

    link.define(Link.class_type.instance_type)

    @njit
    def second(n):
        a = Link(n)
        a.next = Link(n + 1)
        return a.next.get()

    @njit
    def third(n):
        a = Link(n)
        return a.next.get()

    assert second(4) == 5
    with pytest.raises(TypeError, match="got None"):
        third(1)


def test_plain_base_classes_give_methods():
    """Methods of plain Python base classes are the jitclass's too (Numba copies the
    class dictionary through the MRO); the proxy derives from the decorated class."""

    class Base:
        def what(self):
            return self.attr * 2

        def __add__(self, other):
            return self.attr + other.attr

    class Test(Base):
        def __init__(self, attr):
            self.attr = attr

    JTest = jitclass([("attr", types.int64)])(Test)
    assert JTest.mro()[1] is Test
    obj, ref = JTest(21), Test(21)
    assert obj.what() == ref.what() == 42
    assert obj + JTest(1) == ref + Test(1) == 22

    @njit
    def use(a):
        return a.what() + (a + a)

    assert use(obj) == ref.what() + (ref + ref)

    # A subclass of the plain class may be decorated again, with its own methods.
    class Again(Test):
        def what(self):
            return -self.attr

    JAgain = jitclass([("attr", types.int64)])(Again)
    assert use(JAgain(5)) == Again(5).what() + (Again(5) + Again(5))


def test_dunder_fallbacks():
    """Python's fallbacks: `!=` from `__eq__`, `x += y` from `__add__`, `float`/`complex`
    from `__index__`, reflected comparisons; CPython runs the same class undecorated."""

    def make_num(decorate):
        class Num:
            def __init__(self, v):
                self.v = v

            def __eq__(self, other):
                return self.v == other.v

            def __lt__(self, other):
                return self.v < other.v

            def __add__(self, other):
                return Num(self.v + other.v)

            def __index__(self):
                return self.v

        if decorate:  # the methods' `Num` is the jitclass then
            Num = jitclass([("v", types.int64)])(Num)
        return Num

    Num, JNum = make_num(False), make_num(True)

    def ops(a, b):
        c = a
        c += b
        return (a != b, a == b, a < b, b > a, c.v, float(a), complex(b), int(a))

    for x, y in [(1, 2), (3, 3), (5, -1)]:
        assert njit(ops)(JNum(x), JNum(y)) == ops(Num(x), Num(y))

    @jitclass([("v", types.int64)])
    class Bad:
        def __init__(self, v):
            self.v = v
            return 7

    with pytest.raises(TypingError, match="should return None, not"):
        Bad(1)


def test_keyword_only_init_parameters():
    class KW:
        def __init__(self, x, y, z=1, *, a=5):
            self.x, self.y, self.z, self.a = x, y, z, a

    JKW = jitclass([("x", types.int64), ("y", types.int64), ("z", types.int64),
                    ("a", types.float64)])(KW)
    for args, kwargs in [((2, 3), {}), ((), dict(y=4, x=2, a=42, z=100)),
                         ((), dict(y=4, x=2, a=3.5)), ((1, 2, 3), dict(a=9))]:
        j, p = JKW(*args, **kwargs), KW(*args, **kwargs)
        assert (j.x, j.y, j.z, j.a) == (p.x, p.y, p.z, p.a)

    @njit
    def make():
        k = JKW(1, 2, a=7.5)
        return k.a + k.z

    assert make() == 8.5

    class Star:
        def __init__(self, *args):
            pass

    from numba_rs.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="VAR_POSITIONAL argument type unsupported"):
        jitclass([])(Star)


def test_list_field_from_a_python_list():
    """A Python list stored in a list field is the record's own copy (the list the call
    reflected to lives only for the call)."""

    class Holder:
        def __init__(self, x):
            self.x = x

        def add(self, v):
            self.x.append(v)

        def __len__(self):
            return len(self.x) % 4

    JHolder = jitclass([("x", types.List(types.int64))])(Holder)
    items = [1, 2, 3]
    h = JHolder(items)
    h.add(7)
    del items
    import gc

    gc.collect()
    assert h.x == [1, 2, 3, 7]
    assert len(h) == 0 and not h
    h.x = [5]
    assert h.x == [5] and len(h) == 1 and bool(h)


def test_delitem_through_dunder_and_overload():
    """`del obj[k]` reaches a jitclass's `__delitem__` (as CPython's data model does)
    and an `@overload(operator.delitem)` for a type."""
    import operator

    from numba_rs.extending import overload

    def make(decorate):
        class Bag:
            def __init__(self, n):
                self.data = np.arange(n)
                self.removed = 0

            def __delitem__(self, i):
                self.data[i] = -1
                self.removed += 1

        if decorate:
            Bag = jitclass([("data", types.int64[:]), ("removed", types.int64)])(Bag)
        return Bag

    def drop(b, i, j):
        del b[i]
        del b[j]
        return b.removed

    Bag, JBag = make(False), make(True)
    pb, jb = Bag(5), JBag(5)
    assert njit(drop)(jb, 1, 3) == drop(pb, 1, 3)
    np.testing.assert_array_equal(jb.data, pb.data)

    @overload(operator.delitem, strict=False)
    def _del_list_item(obj, idx):
        if isinstance(obj, types.Array) and obj.ndim == 1:
            def impl(obj, idx):
                obj[idx] = 0

            return impl

    @njit
    def zero(a, i):
        del a[i]

    a = np.ones(4)
    zero(a, 2)
    np.testing.assert_array_equal(a, [1.0, 1.0, 0.0, 1.0])
